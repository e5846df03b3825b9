// The text formats: the full report, the stderr summary, a counter's
// report and assert_no_transfers' message.

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <cunumpy/version.hpp>

#include "recorder/region_tree.hpp"
#include "report/format.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"

namespace cunumpy::Impl {
namespace {

using profiling::KindTable;
using profiling::KindTotals;
using profiling::PhaseSummary;
using profiling::RegionNode;
using profiling::SiteSummary;

std::string bandwidth_text(const KindTotals& totals) {
  const double value = bandwidth(totals);
  if (value <= 0.0)
    return "-";
  if (value >= 1e9)
    return printf_text("%.2f GB/s", value / 1e9);
  if (value >= 1e6)
    return printf_text("%.2f MB/s", value / 1e6);
  return printf_text("%.2f kB/s", value / 1e3);
}

std::string calls_text(std::uint64_t calls) {
  return std::to_string(calls) + (calls == 1 ? " call" : " calls");
}

/// The summary line every report starts with, and the syncs.
std::string counts_line(const KindTable& totals) {
  return summary_line(totals) + ", " +
         std::to_string(kind_totals(totals, EventKind::sync).count) +
         " sync(s)";
}

/// "3 to_host (24 bytes), 1 device_copy (8 bytes)", or "no transfers";
/// then the syncs, if any ("no transfers, 502 sync(s)").
std::string kinds_text(const KindTable& totals) {
  std::string text;
  for (EventKind kind : all_event_kinds) {
    const KindTotals& entry = kind_totals(totals, kind);
    if (entry.count == 0 || kind == EventKind::sync)
      continue;
    text += (text.empty() ? "" : ", ") + std::to_string(entry.count) + " " +
            std::string(to_string(kind));
    if (moves_bytes(kind))
      text += " (" + std::to_string(entry.nbytes) + " bytes)";
  }
  if (text.empty())
    text = "no transfers";
  if (const std::uint64_t syncs = kind_totals(totals, EventKind::sync).count)
    text += ", " + std::to_string(syncs) + " sync(s)";
  return text;
}

std::string site_line(const SiteSummary& summary) {
  std::string line = format_site_line(summary);
  if (is_copy(summary.kind))
    line += ", " + std::to_string(summary.nbytes) + " bytes";
  if (summary.seconds > 0.0)
    line += printf_text(", %.6f s", summary.seconds);
  // What CUDA's record of the copies adds: memory kinds, time on the device.
  if (summary.src_memory != MemoryKind::unknown ||
      summary.dst_memory != MemoryKind::unknown)
    line += ", " + std::string(to_string(summary.src_memory)) + " -> " +
            std::string(to_string(summary.dst_memory));
  if (summary.device_seconds > 0.0)
    line += printf_text(", %.6f s on the device", summary.device_seconds);
  return line;
}

void append_body(std::string& text, const KindTable& totals,
                 const std::vector<SiteSummary>& sites, std::size_t limit) {
  text += "  " + counts_line(totals) + "\n";
  bool any = false;
  for (EventKind kind : all_event_kinds)
    any = any || kind_totals(totals, kind).count > 0;
  if (!any)
    return;
  char line[160];
  std::snprintf(line, sizeof line, "  %-18s %8s %14s %9s %7s %12s  %s\n",
                "kind", "count", "bytes", "blocking", "async", "time [s]",
                "bandwidth");
  text += line;
  for (EventKind kind : all_event_kinds) {
    const KindTotals& entry = kind_totals(totals, kind);
    if (entry.count == 0)
      continue;
    if (moves_bytes(kind)) {
      std::snprintf(
          line, sizeof line, "  %-18s %8llu %14llu %9llu %7llu %12.6f  %s\n",
          std::string(to_string(kind)).c_str(),
          static_cast<unsigned long long>(entry.count),
          static_cast<unsigned long long>(entry.nbytes),
          static_cast<unsigned long long>(entry.count - entry.async_count),
          static_cast<unsigned long long>(entry.async_count), entry.seconds,
          bandwidth_text(entry).c_str());
    } else {
      std::snprintf(
          line, sizeof line, "  %-18s %8llu %14s %9s %7s %12.6f  %s\n",
          std::string(to_string(kind)).c_str(),
          static_cast<unsigned long long>(entry.count), "-", "-", "-",
          entry.seconds,
          kind == EventKind::sync && entry.implicit_count > 0
              ? (std::to_string(entry.implicit_count) + " implicit").c_str()
              : "");
    }
    text += line;
  }
  const auto shown = top_sites(sites, limit);
  if (!shown.empty()) {
    text += "  top call sites:\n";
    for (const auto& summary : shown)
      text += "    " + site_line(summary) + "\n";
  }
}

std::string budget_verdict(const Report& report) {
  if (!report.has_budget)
    return report.from_plugin
               ? "budget: none (set CUNUMPY_BUDGET to a rule file)"
               : "budget: none (the TransferBudget has no rule)";
  const std::string budget = report.budget_path.empty()
                                 ? "budget"
                                 : "budget " + printable(report.budget_path);
  if (!report.budget_error.empty())
    return budget + ": NOT CHECKED: " + printable(report.budget_error);
  const auto& violations = report.budget.violations;
  const std::string rules =
      std::to_string(report.budget.rule_count) + " rule(s)";
  switch (profiling::verdict(violations)) {
  case profiling::Verdict::ok:
    if (report.budget.unchecked_allowed)
      return budget +
             ": ok, but no copy was checked: " + report.budget.device.reason +
             " (it passes because CUNUMPY_ALLOW_NO_DEVICE=1)";
    return budget + ": ok (" + rules + ")";
  case profiling::Verdict::unchecked:
    return budget + ": NOT CHECKED: " + report.budget.device.reason;
  case profiling::Verdict::incomplete:
    return budget + ": INCOMPLETE: events may be missing, so it cannot pass";
  case profiling::Verdict::broken:
    break;
  }
  std::size_t broken = 0;
  bool lost = false;
  for (const profiling::Violation& v : violations) {
    lost = lost || v.limit == profiling::Limit::events_lost;
    broken += profiling::verdict({v}) == profiling::Verdict::broken;
  }
  return budget + ": BROKEN, " + std::to_string(broken) + " broken rule(s)" +
         (lost ? " (and events may be missing)" : "");
}

/// After a count of transfers, in a program without a device: that none
/// could be one.
std::string without_device(const Report& report) {
  if (report.budget.device.present)
    return {};
  return " (" + printable(report.budget.device.reason) + ")";
}

std::string header(const Report& report) {
  return "cunumpy transfer report: " + printable(report.program) + " (rank " +
         std::to_string(report.rank) + ", pid " + std::to_string(report.pid) +
         printf_text("), %.3f s\n", report.elapsed);
}

void append_violations(std::string& text, const Report& report,
                       const std::string& indent) {
  // The rules broken, then what keeps the verdict from being sure: each
  // heading counts what it lists, as the verdict line counts the rules.
  std::vector<const profiling::Violation*> broken, unsure;
  for (const auto& violation : report.budget.violations)
    (profiling::verdict({violation}) == profiling::Verdict::broken ? broken
                                                                   : unsure)
        .push_back(&violation);
  for (const auto* list : {&broken, &unsure}) {
    if (list->empty())
      continue;
    text += indent + (list == &broken ? "broken rules (" : "cannot be sure (") +
            std::to_string(list->size()) + "):\n";
    for (const profiling::Violation* violation : *list) {
      const std::string paragraph = violation->str();
      std::size_t start = 0;
      while (start < paragraph.size()) {
        const std::size_t end = paragraph.find('\n', start);
        text += indent + "  " + paragraph.substr(start, end - start) + "\n";
        if (end == std::string::npos)
          break;
        start = end + 1;
      }
    }
  }
}

/// The regions the text report lists: those with transfers inside, and
/// phases; every region with CUNUMPY_REPORT_ALL_REGIONS.
bool listed(const Report& report, const RegionNode& node) {
  return report.all_regions || node.is_phase || transfers(node.inclusive) > 0;
}

void append_tree(std::string& text, const Report& report) {
  const auto& regions = report.budget.regions;
  if (regions.size() <= 1)
    return;
  text += "\nregions (own: in the region itself; all: with the regions it "
          "contains):\n";
  std::size_t folded = 0;
  for (std::size_t i = 1; i < regions.size(); ++i) {
    const RegionNode& node = regions[i];
    if (!listed(report, node)) {
      ++folded;
      continue;
    }
    std::string line(2 * node.depth, ' ');
    line += "'" + printable(node.name) + "' (" + calls_text(node.calls) +
            printf_text(", %.6f s)", node.seconds);
    if (node.is_phase)
      line += " [phase]";
    line += ": " + kinds_text(node.own);
    if (transfers(node.inclusive) != transfers(node.own))
      line += "; all: " + kinds_text(node.inclusive);
    if (!node.is_phase && !node.phase.empty())
      line += "; counts in phase '" + printable(node.phase) + "'";
    text += line + "\n";
    for (const auto& summary : top_sites(node.own_sites, top_sites_region))
      if (is_copy(summary.kind) || summary.kind == EventKind::sync)
        text +=
            std::string(2 * node.depth + 4, ' ') + site_line(summary) + "\n";
  }
  if (folded > 0)
    text += "  (" + std::to_string(folded) +
            (folded == 1 ? " region" : " regions") +
            " without transfers not listed; " +
            (report.from_plugin ? "CUNUMPY_REPORT_ALL_REGIONS=1 lists them, "
                                : "") +
            "the JSON report has them all)\n";
}

std::string saving_text(const profiling::Finding& finding) {
  if (!finding.saving_seconds)
    return "saving not estimated";
  if (*finding.saving_seconds <= 0.0)
    return "saves no measurable time";
  std::string text = "saves about " + time_text(*finding.saving_seconds);
  if (finding.saving_per_call && finding.calls > 1)
    text += " (" + time_text(*finding.saving_per_call) + " per call)";
  return text;
}

std::string where_text(const profiling::Finding& finding) {
  if (finding.region.empty())
    return "outside every region (" + std::to_string(finding.calls) + " times)";
  std::string text = "in region '" + finding.region + "' (" +
                     std::to_string(finding.calls) + " of " +
                     calls_text(finding.region_calls) + ")";
  if (!finding.phase.empty() && finding.phase != finding.region)
    text += ", phase '" + finding.phase + "'";
  return text;
}

/// The advice section of the text report: each finding with its sites,
/// evidence, estimate and fix.
void append_advice(std::string& text, const Report& report) {
  if (report.advice_recording == profiling::AdviceRecording::off) {
    text += report.from_plugin ? "\nadvice: off (CUNUMPY_ADVISE=0)\n"
                               : "\nadvice: off (the budget records none)\n";
    return;
  }
  const auto& findings = report.advice;
  text += "\nadvice (" + std::to_string(findings.size()) +
          " finding(s), largest estimated saving first; rules in "
          "docs/advice.md" +
          (report.from_plugin ? ", thresholds in CUNUMPY_ADVISE_*" : "") +
          "):\n";
  if (findings.empty())
    text += "  no copy pattern above the thresholds\n";
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const profiling::Finding& finding = findings[i];
    text += "  " + std::to_string(i + 1) + ". [" + std::string(finding.name()) +
            "] " + where_text(finding) + ": " + saving_text(finding) + "\n";
    for (std::size_t s = 0; s < finding.sites.size(); ++s) {
      const profiling::FindingSite& site = finding.sites[s];
      text += std::string(s == 0 ? "       at " : "       then ") +
              site.site.str() + ": " + site.what + " (" +
              std::string(to_string(site.kind)) + ")\n";
    }
    text += "       evidence: " + finding.evidence + "\n";
    text += "       estimate: " + finding.estimate + "\n";
    text += "       fix: " + finding.fix + "\n";
  }
  // Without a device no copy is a transfer: hashing finds nothing.
  if (report.advice_recording != profiling::AdviceRecording::contents &&
      report.budget.device.present)
    text += std::string("  (contents not hashed: ") +
            (report.from_plugin ? "CUNUMPY_ADVISE=contents"
                                : "advice with contents") +
            " also finds copies of unchanged data)\n";
}

// A merged job: the table cunumpy-report prints, one statistic per line
// over the ranks.

/// No line of the table is longer, except to keep a path whole; rank lists
/// are cut to fit one line.
constexpr std::size_t line_width = 160;
constexpr std::size_t path_parts = 3;
constexpr std::size_t message_lines = 12;

/// Where a path starts in `line` at or after `from`: a "/" (or "…/") that
/// starts a word; npos when none.
std::size_t path_start(const std::string& line, std::size_t from) {
  static const std::string ellipsis = "…";
  for (std::size_t i = from; i < line.size(); ++i) {
    const bool word = i == 0 || line[i - 1] == ' ' || line[i - 1] == '(';
    if (!word)
      continue;
    if (line[i] == '/')
      return i;
    if (line.compare(i, ellipsis.size(), ellipsis) == 0 &&
        i + ellipsis.size() < line.size() && line[i + ellipsis.size()] == '/')
      return i;
  }
  return std::string::npos;
}

/// The end of the path starting at `start`: before a blank, ':', ',' or ')',
/// then its ":<line>", if any.
std::size_t path_end(const std::string& line, std::size_t start) {
  std::size_t end = start;
  while (end < line.size() && line[end] != ' ' && line[end] != ':' &&
         line[end] != ',' && line[end] != ')')
    ++end;
  if (end + 1 < line.size() && line[end] == ':' &&
      std::isdigit(static_cast<unsigned char>(line[end + 1]))) {
    ++end;
    while (end < line.size() &&
           std::isdigit(static_cast<unsigned char>(line[end])))
      ++end;
  }
  return end;
}

} // namespace

std::string short_paths(const std::string& line) {
  std::string result;
  std::size_t done = 0;
  for (std::size_t start = path_start(line, 0); start != std::string::npos;
       start = path_start(line, done)) {
    const std::size_t end = path_end(line, start);
    const std::string path = line.substr(start, end - start);
    std::vector<std::size_t> slashes;
    for (std::size_t i = 0; i < path.size(); ++i)
      if (path[i] == '/')
        slashes.push_back(i);
    result += line.substr(done, start - done);
    if (slashes.size() <= path_parts)
      result += path;
    else
      result += "…" + path.substr(slashes[slashes.size() - path_parts]);
    done = end;
    if (end == start)
      ++done;
  }
  return result + line.substr(std::min(done, line.size()));
}

namespace {

/// `line` as the table shows it: its paths shortened, then cut to
/// line_width characters, never before the end of its last path.
std::string fitted(const std::string& original) {
  std::string line = short_paths(original);
  if (line.size() <= line_width)
    return line;
  std::size_t keep = line_width - 1;
  for (std::size_t start = path_start(line, 0); start != std::string::npos;
       start = path_start(line, std::max(start + 1, path_end(line, start))))
    keep = std::max(keep, path_end(line, start));
  return keep >= line.size() ? line : line.substr(0, keep) + "…";
}

std::string number_text(double value) {
  if (value != static_cast<double>(static_cast<long long>(value)))
    return printf_text("%.6g", value);
  return std::to_string(static_cast<long long>(value));
}

struct Row {
  std::string name;
  const Statistic* statistic;
};

/// A statistic's min, mean and max over `ranks` ranks (a rank without it
/// counts 0; 0: over the ranks that have it), and the rank of the max ("-"
/// for none).
void append_statistics(std::vector<std::string>& lines,
                       const std::string& title, const std::vector<Row>& rows,
                       std::size_t indent, std::uint64_t ranks) {
  const int name_width = static_cast<int>(30 - indent);
  char line[512];
  std::snprintf(line, sizeof line, "%*s%-*s %14s %14s %14s  %11s",
                static_cast<int>(indent - 2), "", name_width + 2, title.c_str(),
                "min", "mean", "max", "max on rank");
  lines.push_back(line);
  for (const Row& row : rows) {
    const Statistic& s = *row.statistic;
    const std::uint64_t over = ranks == 0 ? s.ranks : ranks;
    const double low = s.ranks < over ? std::min(s.min, 0.0) : s.min;
    const double mean = over == 0 ? 0.0 : s.sum / static_cast<double>(over);
    const std::string rank =
        s.max_rank < 0 ? std::string("-") : std::to_string(s.max_rank);
    std::snprintf(line, sizeof line, "%*s%-*s %14s %14s %14s  %11s",
                  static_cast<int>(indent), "", name_width, row.name.c_str(),
                  number_text(low).c_str(), number_text(mean).c_str(),
                  number_text(s.ranks == 0 ? 0.0 : s.max).c_str(),
                  rank.c_str());
    lines.push_back(line);
  }
}

/// The rows of a section: its calls, the count of each kind, the bytes of
/// each copy kind, the time in copies and in syncs; those zero on every rank
/// but calls left out.
std::vector<Row> section_rows(const SectionRanks& section) {
  static const std::vector<std::pair<std::string, std::size_t>> table = [] {
    std::vector<std::pair<std::string, std::size_t>> rows{
        {"calls", measure::calls}};
    for (EventKind kind : {EventKind::to_host, EventKind::to_device,
                           EventKind::kernel_conversion, EventKind::fallback,
                           EventKind::device_copy, EventKind::sync}) {
      const std::string name(to_string(kind));
      rows.emplace_back(name + " count", measure::count(kind));
      if (is_copy(kind))
        rows.emplace_back(name + " bytes", measure::bytes(kind));
    }
    rows.emplace_back("copy time [s]", measure::copy_seconds);
    rows.emplace_back("sync time [s]", measure::seconds(EventKind::sync));
    return rows;
  }();
  std::vector<Row> rows;
  for (const auto& [name, index] : table)
    if (index == measure::calls || !section.values[index].all_zero())
      rows.push_back({name, &section.values[index]});
  return rows;
}

bool copied_on_some_rank(const SectionRanks& section) {
  for (EventKind kind : all_event_kinds)
    if (is_transfer(kind) && section.values[measure::count(kind)].max > 0.0)
      return true;
  return false;
}

/// "RANKS: REASON", where the reason quoted is one rank's (the lowest's
/// that gave one): said so when the ranks are several, whose counts may
/// differ.
std::string ranks_and_reason(const RankSet& ranks, const RankText& reason) {
  if (ranks.size() > 1 && reason.rank >= 0)
    return ranks.text() + "; rank " + std::to_string(reason.rank) + ": " +
           printable(reason.text);
  return ranks.text() + ": " + printable(reason.text);
}

/// The first lines of a job: its ranks, its run, the budget's verdicts, the
/// notes.
void append_job_header(std::vector<std::string>& lines, const Report& report) {
  const JobRanks& job = report.job;
  lines.push_back("cunumpy-report: " + std::to_string(job.ranks.size()) +
                  " rank(s) (" + job.ranks.text() + ") of " +
                  printable(report.program));
  if (!report.run_id.empty()) {
    const int size = job_size(report);
    lines.push_back("run " + printable(report.run_id) +
                    (report.label.empty()
                         ? std::string()
                         : ", label '" + printable(report.label) + "'") +
                    ": " + (size > 0 ? std::to_string(size) : "unknown") +
                    " rank(s) in the job");
  }
  const RankSet missing = missing_ranks(report);
  if (!missing.empty())
    lines.push_back("no report from rank(s) " + missing.text());
  RankSet unchecked = job.unchecked;
  RankSet without_budget = job.without_budget;
  if (!job.broken.empty()) {
    lines.push_back("budget: BROKEN on rank(s) " + job.broken.text());
  } else if (!unchecked.empty()) {
    lines.push_back("budget: NOT CHECKED on rank(s) " +
                    ranks_and_reason(unchecked, job.unchecked_reason));
    unchecked = RankSet();
  } else if (without_budget.size() == job.ranks.size()) {
    lines.push_back("budget: none on any rank (CUNUMPY_BUDGET not set; with "
                    "mpirun, pass it with -x CUNUMPY_BUDGET)");
    without_budget = RankSet();
  } else {
    lines.push_back("budget: no rank broke it");
  }
  if (!missing.empty() && job.broken.empty())
    lines.push_back("the job cannot pass: " + std::to_string(missing.size()) +
                    " rank(s) have no report in it");
  if (!unchecked.empty())
    lines.push_back("budget not checked on rank(s) " +
                    ranks_and_reason(unchecked, job.unchecked_reason));
  if (!without_budget.empty())
    lines.push_back("no budget on rank(s) " + without_budget.text() +
                    " (CUNUMPY_BUDGET not set there; with mpirun, pass it "
                    "with -x CUNUMPY_BUDGET)");
  if (!job.unknown_spaces.empty()) {
    std::string value;
    for (const auto* names :
         {&report.unknown_spaces.names, &report.device_spaces})
      for (const std::string& name : *names)
        value += (value.empty() ? "" : ",") + name;
    lines.push_back("memory space(s) cunumpy does not know: " +
                    quoted_list(report.unknown_spaces.names) + ", on rank(s) " +
                    job.unknown_spaces.text() + " (" +
                    std::to_string(report.unknown_spaces.copies) +
                    " copies not counted)");
    lines.push_back(
        std::string("  if ") +
        (report.unknown_spaces.names.size() == 1 ? "it is" : "they are") +
        " device memory, set CUNUMPY_DEVICE_SPACES=" + printable(value));
  }
  if (!job.without_device.empty() &&
      job.without_device_reason.text != job.unchecked_reason.text)
    lines.push_back(
        "no device on rank(s) " +
        ranks_and_reason(job.without_device, job.without_device_reason));
  if (!job.incomplete.empty())
    lines.push_back("events may be missing on rank(s) " +
                    ranks_and_reason(job.incomplete, job.incomplete_reason));
  for (const std::string& problem : report.site_problems)
    lines.push_back("note: call sites of " + printable(problem));
  if (!job.unbalanced_pops.empty())
    lines.push_back("note: regions were popped where none was open, on "
                    "rank(s) " +
                    job.unbalanced_pops.text() + " (rank " +
                    std::to_string(job.unbalanced_pops.lowest()) + ": by " +
                    printable(report.unbalanced_pops) + ")");
  if (!job.open_regions.empty() && !report.open_regions.empty())
    lines.push_back("note: regions still open at the end of the run, on "
                    "rank(s) " +
                    job.open_regions.text() + " (rank " +
                    std::to_string(job.open_regions.lowest()) + ": " +
                    printable(report.open_regions.front()) + ")");
  if (!job.region_tree_cut.empty())
    lines.push_back("note: the tree of regions is cut at " +
                    std::to_string(RegionTree::max_depth) +
                    " levels on rank(s) " + job.region_tree_cut.text() +
                    " (below '" + excerpt(report.region_tree_cut, 256) + "')");
  if (!job.unwatched.empty())
    lines.push_back("note: on rank(s) " + job.unwatched.text() + ": " +
                    printable(report.unwatched));
}

void append_job_violations(std::vector<std::string>& lines,
                           const Report& report) {
  const auto& violations = report.budget.violations;
  if (violations.empty())
    return;
  lines.emplace_back();
  std::vector<std::size_t> broken, unsure;
  for (std::size_t i = 0; i < violations.size(); ++i)
    (profiling::verdict({violations[i]}) == profiling::Verdict::broken ? broken
                                                                       : unsure)
        .push_back(i);
  for (const auto* list : {&broken, &unsure}) {
    if (list->empty())
      continue;
    lines.push_back(
        std::string(list == &broken ? "broken rules (" : "cannot be sure (") +
        std::to_string(list->size()) + "):");
    for (std::size_t i : *list) {
      const ViolationRanks& entry = report.job.violations[i];
      const std::string prefix = "  rank " + std::to_string(entry.rank) + ": ";
      std::string message = entry.message;
      while (!message.empty() && message.back() == '\n')
        message.pop_back();
      std::vector<std::string> parts;
      std::size_t start = 0;
      while (true) {
        const std::size_t end = message.find('\n', start);
        parts.push_back(message.substr(start, end - start));
        if (end == std::string::npos)
          break;
        start = end + 1;
      }
      for (std::size_t k = 0; k < parts.size() && k < message_lines; ++k) {
        std::string text = parts[k];
        const std::size_t first = text.find_first_not_of(" \t");
        text = first == std::string::npos ? "" : text.substr(first);
        lines.push_back((k == 0 ? prefix : std::string(prefix.size(), ' ')) +
                        printable(text));
      }
      if (parts.size() > message_lines)
        lines.push_back(std::string(prefix.size(), ' ') + "… (" +
                        std::to_string(parts.size() - message_lines) +
                        " more lines)");
      const RankSet others = entry.ranks.minus(RankSet(entry.rank));
      if (!others.empty())
        lines.push_back(std::string(prefix.size(), ' ') + "and on " +
                        std::to_string(others.size()) +
                        " more rank(s): " + others.text());
    }
  }
}

void append_job_advice(std::vector<std::string>& lines, const Report& report) {
  const JobRanks& job = report.job;
  if (report.advice.empty() && job.without_advice.empty())
    return;
  lines.emplace_back();
  lines.push_back("advice (" + std::to_string(report.advice.size()) +
                  " finding(s) over " + std::to_string(job.ranks.size()) +
                  " rank(s), largest estimated saving first):");
  if (!job.without_advice.empty())
    lines.push_back("  no advice in the report of rank(s) " +
                    job.without_advice.text() +
                    " (CUNUMPY_ADVISE=0, or an older plugin)");
  for (std::size_t i = 0; i < report.advice.size(); ++i) {
    const profiling::Finding& finding = report.advice[i];
    const FindingRanks& entry = job.findings[i];
    std::string sites;
    for (const profiling::FindingSite& site : finding.sites)
      sites += (sites.empty() ? "" : ", then ") + site.site.str();
    lines.push_back("  [" + std::string(finding.name()) + "] " +
                    (finding.region.empty()
                         ? std::string("outside every region")
                         : "region '" + printable(finding.region) + "'") +
                    " at " + printable(sites) + ", on rank(s) " +
                    entry.ranks.text());
    std::vector<Row> rows;
    if (entry.saving.ranks > 0)
      rows.push_back({"saving [s]", &entry.saving});
    rows.push_back({"time [s]", &entry.seconds});
    rows.push_back({"events", &entry.events});
    rows.push_back({"calls", &entry.calls});
    // Over the ranks that found it (the saving: that estimated it).
    append_statistics(lines, "", rows, 4, 0);
    const RankSet not_estimated = entry.ranks.minus(entry.estimated);
    if (!not_estimated.empty())
      lines.push_back("    saving not estimated on rank(s) " +
                      not_estimated.text());
    lines.push_back("    fix: " + printable(finding.fix));
  }
}

/// The table of a merged job (cunumpy-report's).
std::string format_job_text(const Report& report) {
  const JobRanks& job = report.job;
  const std::uint64_t ranks = job.ranks.size();
  std::vector<std::string> lines;
  append_job_header(lines, report);
  const auto section = [&](const std::string& title,
                           const SectionRanks& statistics,
                           const RankSet* broken) {
    lines.emplace_back();
    append_statistics(lines, title, section_rows(statistics), 2, ranks);
    if (broken != nullptr && !broken->empty())
      lines.push_back("  broken on rank(s): " + broken->text());
  };
  section("total", job.total, nullptr);
  for (std::size_t i = 0; i < report.budget.phases.size(); ++i)
    section("phase '" + printable(report.budget.phases[i].name) + "'",
            job.phases[i], &job.phase_broken[i]);
  for (std::size_t i = 1; i < report.budget.regions.size(); ++i)
    if (copied_on_some_rank(job.regions[i]))
      section("region '" + printable(report.budget.regions[i].path) + "'",
              job.regions[i], nullptr);
  if (!report.budget.phases.empty() && section_rows(job.outside).size() > 1)
    section("outside any phase", job.outside, nullptr);
  append_job_violations(lines, report);
  append_job_advice(lines, report);
  std::string text;
  for (const std::string& line : lines)
    text += fitted(line) + "\n";
  return text;
}

/// A counter's report: the summary line, one section per kind with a line
/// per call site, then why sites lack a line and why the counts may be
/// short (docs/counting.md shows it).
std::string format_counter_text(const Report& report) {
  const KindTable& totals = report.budget.total;
  std::string text = summary_line(totals) + "\n";
  for (EventKind kind : all_event_kinds) {
    const std::uint64_t count = kind_totals(totals, kind).count;
    if (count == 0)
      continue;
    text += "  " + std::string(to_string(kind)) + " (" + std::to_string(count) +
            "):\n";
    for (const SiteSummary& summary : report.budget.total_sites)
      if (summary.kind == kind)
        text += "    " + format_site_line(summary) + "\n";
  }
  for (const std::string& problem : report.site_problems)
    text += "  note: call sites of " + problem + "\n";
  for (const std::string& loss : report.budget.losses)
    text += "  INCOMPLETE: " + loss + "\n";
  if (const std::string why = unchecked_text(report.budget.device);
      !why.empty())
    text += "  NOT CHECKED: " + why + "\n";
  return text;
}

} // namespace

std::string format_no_transfers_failure(const Report& counter,
                                        std::string_view function,
                                        SourceLocation where) {
  const std::uint64_t transfers = host_device_transfers(counter.budget.total);
  std::string message = std::string(function) + ": ";
  if (transfers > 0)
    message += std::to_string(transfers) +
               " host/device transfer(s) where none are allowed";
  if (!counter.counter_complete) {
    // The lines of TransferCounter::losses().
    std::string problems;
    for (const std::string& line : counter.budget.losses)
      problems += (problems.empty() ? "" : "; ") + line;
    if (const std::string why = unchecked_text(counter.budget.device);
        !why.empty())
      problems += (problems.empty() ? "" : "; ") + why;
    message += std::string(transfers > 0 ? "; and " : "") +
               "cunumpy cannot tell that none happened: " + problems;
  }
  if (where.known())
    message += " (checked at " + std::string(where.file) + ":" +
               std::to_string(where.line) + ")";
  return message + "\n" + format_counter_text(counter);
}

std::string format_text(const Report& report) {
  if (report.job.merged)
    return format_job_text(report);
  if (report.of_counter)
    return format_counter_text(report);
  std::string text = header(report);
  text += budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report, false))
    text += "note: " + printable(note) + "\n";
  // Only where CUDA could have told something: the JSON has it always.
  if (report.cuda_view.built &&
      (report.cuda_view.on || report.budget.device.present))
    text += profiling::cuda_view_line(report.cuda_view) + "\n";
  text += "\ntotal" + without_device(report) + ":\n";
  append_body(text, report.budget.total, report.budget.total_sites,
              top_sites_total);
  append_tree(text, report);
  for (const PhaseSummary& phase : report.budget.phases) {
    text += "\nphase '" + printable(phase.name) + "' (" +
            calls_text(phase.calls) + "); " +
            (phase.rule ? "rule: " + phase.rule->str() : "no rule") +
            (phase.broken ? " [BROKEN]" : "") + "\n";
    if (phase.entered)
      append_body(text, phase.totals, phase.sites, top_sites_phase);
    else
      text += "  never entered\n";
  }
  const PhaseSummary& outside = report.budget.outside;
  if (!report.budget.phases.empty() &&
      transfers(outside.totals) +
              kind_totals(outside.totals, EventKind::sync).count >
          0) {
    text += "\noutside any phase:\n";
    append_body(text, outside.totals, outside.sites, top_sites_phase);
  }
  if (!report.budget.violations.empty()) {
    text += "\n";
    append_violations(text, report, "");
  }
  append_advice(text, report);
  if (!report.dual_view_syncs.empty() || !report.unsynced_modifies.empty()) {
    text += "\nDualView:\n";
    for (const auto& sync : report.dual_view_syncs) {
      if (!sync.copied)
        continue;
      text += "  sync to " + side_text(sync.to_device) + " \"" + sync.label +
              "\": " + std::to_string(sync.count) + " sync(s) copied " +
              std::to_string(sync.nbytes) + " bytes (" +
              std::string(to_string(sync.copy_kind)) + ") at " +
              sync.site.str() + "\n";
    }
    for (const auto& sync : report.dual_view_syncs) {
      if (sync.copied)
        continue;
      text += "  sync that copied nothing: to " + side_text(sync.to_device) +
              " \"" + sync.label + "\" (x" + std::to_string(sync.count) +
              ") at " + sync.site.str() + "\n";
    }
    for (const auto& modify : report.unsynced_modifies)
      text += "  modified on " + side_text(modify.on_device) +
              ", never synced: \"" + modify.label + "\" (" +
              std::to_string(modify.count) +
              " modify call(s) since the last sync; last at " +
              modify.site.str() + ")\n";
  }
  if (!report.trace_path.empty()) {
    text += "\ntrace: " + report.trace_path;
    if (report.trace_dropped > 0)
      text += " (" + std::to_string(report.trace_dropped) +
              " slices dropped: the trace keeps the first ones)";
    text += "\n";
  }
  return text;
}

std::string format_summary(const Report& report) {
  if (report.job.merged) {
    // A job: its sums, its phases, then the table's first lines and the
    // broken rules.
    const JobRanks& job = report.job;
    std::string text = "cunumpy: job of " + std::to_string(job.ranks.size()) +
                       " rank(s) of " + printable(report.program) +
                       " (cunumpy " CUNUMPY_VERSION_STRING
                       "), over its ranks: " +
                       counts_line(report.budget.total) + "\n";
    for (std::size_t i = 0; i < report.budget.phases.size(); ++i) {
      const PhaseSummary& phase = report.budget.phases[i];
      if (!phase.entered)
        continue;
      text +=
          "cunumpy:   phase '" + printable(phase.name) + "' (" +
          calls_text(phase.calls) + "): " + kinds_text(phase.totals) +
          (job.phase_broken[i].empty()
               ? std::string()
               : " [BROKEN on rank(s) " + job.phase_broken[i].text() + "]") +
          "\n";
    }
    std::vector<std::string> lines;
    append_job_header(lines, report);
    append_job_violations(lines, report);
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (!lines[i].empty())
        text += "cunumpy: " + fitted(lines[i]) + "\n";
    return text;
  }
  std::string text =
      "cunumpy: " + printable(report.program) + " (rank " +
      std::to_string(report.rank) + ", cunumpy " CUNUMPY_VERSION_STRING "): " +
      counts_line(report.budget.total) + without_device(report) + "\n";
  for (const PhaseSummary& phase : report.budget.phases) {
    if (!phase.entered)
      continue;
    text += "cunumpy:   phase '" + printable(phase.name) + "' (" +
            calls_text(phase.calls) + "): " + kinds_text(phase.totals) +
            (phase.broken ? " [BROKEN]" : "") + "\n";
  }
  // Without phases, the regions that copied, most transfers first.
  if (report.budget.phases.empty()) {
    std::vector<const RegionNode*> copying;
    for (std::size_t i = 1; i < report.budget.regions.size(); ++i)
      if (transfers(report.budget.regions[i].own) > 0)
        copying.push_back(&report.budget.regions[i]);
    std::stable_sort(copying.begin(), copying.end(),
                     [](const RegionNode* a, const RegionNode* b) {
                       return transfers(a->own) > transfers(b->own);
                     });
    const std::size_t shown = std::min<std::size_t>(copying.size(), 10);
    for (std::size_t i = 0; i < shown; ++i)
      text += "cunumpy:   region '" + printable(copying[i]->path) + "' (" +
              calls_text(copying[i]->calls) +
              "): " + kinds_text(copying[i]->own) + "\n";
    if (copying.size() > shown)
      text += "cunumpy:   and " + std::to_string(copying.size() - shown) +
              " more region(s) with transfers\n";
  }
  text += "cunumpy: " + budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report, true))
    text += "cunumpy: note: " + printable(note) + "\n";
  append_violations(text, report, "cunumpy: ");
  const std::size_t shown = std::min(report.advice_top, report.advice.size());
  for (std::size_t i = 0; i < shown; ++i)
    text += "cunumpy: advice: " + report.advice[i].str() + "\n";
  if (shown > 0 && report.advice.size() > shown)
    text += "cunumpy: advice: " + std::to_string(report.advice.size() - shown) +
            " more finding(s) in the full report\n";
  for (const auto& modify : report.unsynced_modifies)
    text += "cunumpy: DualView \"" + printable(modify.label) +
            "\" modified on " + side_text(modify.on_device) +
            ", never synced (" + modify.site.str() + ")\n";
  return text;
}

} // namespace cunumpy::Impl
