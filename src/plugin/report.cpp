#include "report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>

#include <cunumpy/version.hpp>

#include "recorder/region_tree.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "support/excerpt.hpp"
#include "tools/kokkosp.hpp"

namespace cunumpy::plugin {
namespace {

using Impl::JsonWriter;
using profiling::KindTable;
using profiling::KindTotals;
using profiling::PhaseSummary;
using profiling::RegionNode;
using profiling::SiteSummary;

constexpr std::size_t top_sites_total = 10;
constexpr std::size_t top_sites_phase = 5;
constexpr std::size_t top_sites_region = 3;

const KindTotals& of(const KindTable& totals, EventKind kind) {
  return totals[Impl::index_of(kind)];
}

/// Copies first, then by bytes, then by count.
std::vector<SiteSummary> top_sites(std::vector<SiteSummary> sites,
                                   std::size_t limit) {
  std::stable_sort(
      sites.begin(), sites.end(), [](const auto& a, const auto& b) {
        const bool a_copy = is_copy(a.kind), b_copy = is_copy(b.kind);
        if (a_copy != b_copy)
          return a_copy;
        if (a.nbytes != b.nbytes)
          return a.nbytes > b.nbytes;
        return a.count > b.count;
      });
  if (sites.size() > limit)
    sites.resize(limit);
  return sites;
}

std::string printf_string(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

double bandwidth(const KindTotals& totals) {
  return totals.seconds > 0.0
             ? static_cast<double>(totals.nbytes) / totals.seconds
             : 0.0;
}

std::string bandwidth_text(const KindTotals& totals) {
  const double value = bandwidth(totals);
  if (value <= 0.0)
    return "-";
  if (value >= 1e9)
    return printf_string("%.2f GB/s", value / 1e9);
  if (value >= 1e6)
    return printf_string("%.2f MB/s", value / 1e6);
  return printf_string("%.2f kB/s", value / 1e3);
}

std::string calls_text(std::uint64_t calls) {
  return std::to_string(calls) + (calls == 1 ? " call" : " calls");
}

/// The summary line every report starts with, and the syncs.
std::string counts_line(const KindTable& totals) {
  return Impl::summary_line(totals) + ", " +
         std::to_string(of(totals, EventKind::sync).count) + " sync(s)";
}

/// "3 to_host (24 bytes), 1 device_copy (8 bytes)", or "no transfers";
/// then the syncs, if any ("no transfers, 502 sync(s)").
std::string kinds_text(const KindTable& totals) {
  std::string text;
  for (EventKind kind : all_event_kinds) {
    const KindTotals& entry = of(totals, kind);
    if (entry.count == 0 || kind == EventKind::sync)
      continue;
    text += (text.empty() ? "" : ", ") + std::to_string(entry.count) + " " +
            std::string(to_string(kind));
    if (moves_bytes(kind))
      text += " (" + std::to_string(entry.nbytes) + " bytes)";
  }
  if (text.empty())
    text = "no transfers";
  if (const std::uint64_t syncs = of(totals, EventKind::sync).count)
    text += ", " + std::to_string(syncs) + " sync(s)";
  return text;
}

std::string site_line(const SiteSummary& summary) {
  std::string line = Impl::format_site_line(summary);
  if (is_copy(summary.kind))
    line += ", " + std::to_string(summary.nbytes) + " bytes";
  if (summary.seconds > 0.0)
    line += printf_string(", %.6f s", summary.seconds);
  // What CUDA's record of the copies adds: memory kinds, time on the device.
  if (summary.src_memory != MemoryKind::unknown ||
      summary.dst_memory != MemoryKind::unknown)
    line += ", " + std::string(to_string(summary.src_memory)) + " -> " +
            std::string(to_string(summary.dst_memory));
  if (summary.device_seconds > 0.0)
    line += printf_string(", %.6f s on the device", summary.device_seconds);
  return line;
}

void append_body(std::string& text, const KindTable& totals,
                 const std::vector<SiteSummary>& sites, std::size_t limit) {
  text += "  " + counts_line(totals) + "\n";
  bool any = false;
  for (EventKind kind : all_event_kinds)
    any = any || of(totals, kind).count > 0;
  if (!any)
    return;
  char line[160];
  std::snprintf(line, sizeof line, "  %-18s %8s %14s %9s %7s %12s  %s\n",
                "kind", "count", "bytes", "blocking", "async", "time [s]",
                "bandwidth");
  text += line;
  for (EventKind kind : all_event_kinds) {
    const KindTotals& entry = of(totals, kind);
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
  if (report.budget_path.empty())
    return "budget: none (set CUNUMPY_BUDGET to a rule file)";
  const std::string budget = "budget " + Impl::printable(report.budget_path);
  if (!report.budget_error.empty())
    return budget + ": NOT CHECKED: " + Impl::printable(report.budget_error);
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
  return " (" + Impl::printable(report.budget.device.reason) + ")";
}

std::string header(const Report& report) {
  return "cunumpy transfer report: " + Impl::printable(report.program) +
         " (rank " + std::to_string(report.rank) + ", pid " +
         std::to_string(report.pid) +
         printf_string("), %.3f s\n", report.elapsed);
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

std::string side_text(bool device) {
  return device ? "device" : "host";
}

/// The regions the text report lists: those with transfers inside, and
/// phases; every region with CUNUMPY_REPORT_ALL_REGIONS.
bool listed(const Report& report, const RegionNode& node) {
  return report.all_regions || node.is_phase ||
         Impl::transfers(node.inclusive) > 0;
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
    line += "'" + Impl::printable(node.name) + "' (" + calls_text(node.calls) +
            printf_string(", %.6f s)", node.seconds);
    if (node.is_phase)
      line += " [phase]";
    line += ": " + kinds_text(node.own);
    if (Impl::transfers(node.inclusive) != Impl::transfers(node.own))
      line += "; all: " + kinds_text(node.inclusive);
    if (!node.is_phase && !node.phase.empty())
      line += "; counts in phase '" + Impl::printable(node.phase) + "'";
    text += line + "\n";
    for (const auto& summary : top_sites(node.own_sites, top_sites_region))
      if (is_copy(summary.kind) || summary.kind == EventKind::sync)
        text +=
            std::string(2 * node.depth + 4, ' ') + site_line(summary) + "\n";
  }
  if (folded > 0)
    text += "  (" + std::to_string(folded) +
            (folded == 1 ? " region" : " regions") +
            " without transfers not listed; CUNUMPY_REPORT_ALL_REGIONS=1 "
            "lists them, the JSON report has them all)\n";
}

// The JSON report, written as it is walked (report/json_writer.hpp):
// members in ascending order of their names, as the writer requires.

/// `text`, or null in the report when it is empty.
std::optional<std::string_view> unless_empty(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  return text;
}

void write_site(JsonWriter& json, const SiteSummary& summary) {
  json.begin_object();
  json.member("async", summary.async);
  json.member("blocking", summary.blocking);
  json.member("bytes", summary.nbytes);
  json.member("count", summary.count);
  json.member("device_seconds", summary.device_seconds);
  json.member("dst_memory", to_string(summary.dst_memory));
  json.member("file", summary.site.file);
  json.member("function", summary.site.function);
  json.member("implicit", summary.implicit);
  json.member("kind", to_string(summary.kind));
  json.member("line", summary.site.line);
  json.member("max_bytes", summary.max_nbytes);
  json.member("native", unless_empty(summary.site.native));
  json.member("python", unless_empty(summary.site.python));
  json.member("seconds", summary.seconds);
  json.member("site", summary.site.str());
  json.member("source", summary.source);
  json.member("src_memory", to_string(summary.src_memory));
  json.member("what", summary.what);
  json.end_object();
}

void write_cuda_view(JsonWriter& json, const profiling::CudaView& view) {
  json.begin_object();
  json.member("built", view.built);
  json.member("copy_records", view.copy_records);
  json.member("described", view.described);
  json.member("dropped_records", view.dropped_records);
  json.member("migrated_bytes", view.migrated_bytes);
  json.member("migration_records", view.migration_records);
  json.member("migrations_unseen", view.migrations_unseen);
  json.member("reason", view.reason);
  json.member("state", to_string(view.state));
  json.member("too_late", view.too_late);
  json.member("unified_memory", view.unified_memory);
  json.member("unified_memory_reason", view.unified_memory_reason);
  json.member("unmatched", view.unmatched);
  json.member("without_record", view.without_record);
  json.end_object();
}

/// Every kind, in the order of their names.
const std::array<EventKind, event_kind_count>& kinds_by_name() {
  static const std::array<EventKind, event_kind_count> sorted = [] {
    std::array<EventKind, event_kind_count> kinds = all_event_kinds;
    std::sort(kinds.begin(), kinds.end(), [](EventKind a, EventKind b) {
      return to_string(a) < to_string(b);
    });
    return kinds;
  }();
  return sorted;
}

void write_kinds(JsonWriter& json, const KindTable& totals) {
  json.begin_object();
  for (EventKind kind : kinds_by_name()) {
    const KindTotals& entry = of(totals, kind);
    json.key(to_string(kind));
    json.begin_object();
    json.member("async", entry.async_count);
    json.member("bandwidth_bytes_per_second", bandwidth(entry));
    json.member("blocking",
                is_copy(kind) ? entry.count - entry.async_count : 0);
    json.member("bytes", entry.nbytes);
    json.member("count", entry.count);
    json.member("device_seconds", entry.device_seconds);
    json.member("device_timed_bytes", entry.device_timed_nbytes);
    json.member("implicit", entry.implicit_count);
    json.member("seconds", entry.seconds);
    json.end_object();
  }
  json.end_object();
}

void write_sites(JsonWriter& json, const std::vector<SiteSummary>& sites,
                 std::size_t limit) {
  json.begin_array();
  for (const auto& summary : top_sites(sites, limit))
    write_site(json, summary);
  json.end_array();
}

void write_phase(JsonWriter& json, const PhaseSummary& phase,
                 std::size_t limit) {
  json.begin_object();
  json.member("broken", phase.broken);
  json.member("calls", phase.calls);
  json.member("entered", phase.entered);
  json.key("kinds");
  write_kinds(json, phase.totals);
  json.member("name", phase.name);
  json.member("optional", phase.rule && phase.rule->is_optional());
  json.member("rule",
              phase.rule ? std::optional(phase.rule->str()) : std::nullopt);
  json.member("syncs", of(phase.totals, EventKind::sync).count);
  json.key("top_sites");
  write_sites(json, phase.sites, limit);
  json.member("transfers", Impl::transfers(phase.totals));
  json.end_object();
}

void write_region(JsonWriter& json, const RegionNode& node) {
  json.begin_object();
  json.member("calls", node.calls);
  json.member("depth", node.depth);
  json.key("inclusive");
  write_kinds(json, node.inclusive);
  json.member("inclusive_transfers", Impl::transfers(node.inclusive));
  json.member("is_phase", node.is_phase);
  json.member("name", node.name);
  json.key("own");
  write_kinds(json, node.own);
  json.member("parent", node.parent);
  json.member("path", node.path);
  json.member("phase", node.phase);
  json.member("seconds", node.seconds);
  json.key("top_sites");
  write_sites(json, node.own_sites, top_sites_phase);
  json.member("transfers", Impl::transfers(node.own));
  json.end_object();
}

/// Copies between a host space and a space of unknown name were taken as
/// host-to-host (not counted): a device space no one named?
std::string unknown_spaces_note(const Report& report) {
  const UnknownSpaces& unknown = report.unknown_spaces;
  if (unknown.copies == 0 || unknown.names.empty())
    return {};
  std::string listed; // the value CUNUMPY_DEVICE_SPACES would need
  for (const auto* names : {&unknown.names, &report.device_spaces})
    for (const std::string& name : *names)
      listed += (listed.empty() ? "" : ",") + name;
  return std::to_string(unknown.copies) +
         (unknown.copies == 1 ? " copy" : " copies") +
         " not counted: cunumpy does not know the memory space(s) " +
         Impl::quoted_list(unknown.names) +
         " and took them for host spaces; if one is a device, set "
         "CUNUMPY_DEVICE_SPACES=" +
         listed;
}

std::string recording_name(profiling::AdviceRecording recording) {
  switch (recording) {
  case profiling::AdviceRecording::off:
    return "off";
  case profiling::AdviceRecording::contents:
    return "contents";
  case profiling::AdviceRecording::on:
    break;
  }
  return "on";
}

std::string saving_text(const profiling::Finding& finding) {
  if (!finding.saving_seconds)
    return "saving not estimated";
  if (*finding.saving_seconds <= 0.0)
    return "saves no measurable time";
  std::string text = "saves about " + Impl::time_text(*finding.saving_seconds);
  if (finding.saving_per_call && finding.calls > 1)
    text += " (" + Impl::time_text(*finding.saving_per_call) + " per call)";
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
    text += "\nadvice: off (CUNUMPY_ADVISE=0)\n";
    return;
  }
  const auto& findings = report.advice;
  text += "\nadvice (" + std::to_string(findings.size()) +
          " finding(s), largest estimated saving first; rules in "
          "docs/advice.md, thresholds in CUNUMPY_ADVISE_*):\n";
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
    text += "  (contents not hashed: CUNUMPY_ADVISE=contents also finds "
            "copies of unchanged data)\n";
}

void write_advice(JsonWriter& json, const Report& report) {
  const profiling::AdviceOptions& options = report.advice_options;
  json.begin_object();
  json.key("findings");
  json.begin_array();
  for (const profiling::Finding& finding : report.advice) {
    json.begin_object();
    json.member("bytes", finding.bytes);
    json.member("calls", finding.calls);
    json.member("count", finding.count);
    json.member("estimate", finding.estimate);
    json.member("evidence", finding.evidence);
    json.member("fix", finding.fix);
    json.member("message", finding.str());
    json.member("phase", finding.phase);
    json.member("region", finding.region);
    json.member("region_calls", finding.region_calls);
    json.member("rule", finding.name());
    json.member("saving_per_call", finding.saving_per_call);
    json.member("saving_seconds", finding.saving_seconds);
    json.member("seconds", finding.seconds);
    json.key("sites");
    json.begin_array();
    for (const profiling::FindingSite& site : finding.sites) {
      json.begin_object();
      json.member("file", site.site.file);
      json.member("function", site.site.function);
      json.member("kind", to_string(site.kind));
      json.member("line", site.site.line);
      json.member("native", unless_empty(site.site.native));
      json.member("python", unless_empty(site.site.python));
      json.member("site", site.site.str());
      json.member("what", site.what);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.member("recording", recording_name(report.advice_recording));
  json.key("thresholds");
  json.begin_object();
  json.member("fresh_min_bytes", options.fresh_min_bytes);
  json.member("many_copies", options.many_copies);
  json.member("min_calls", options.min_calls);
  json.member("min_saving_seconds", options.min_saving_seconds);
  json.member("pageable_min_bytes", options.pageable_min_bytes);
  json.member("pinned_bandwidth", options.pinned_bandwidth);
  json.member("small_bytes", options.small_bytes);
  json.end_object();
  json.end_object();
}

std::vector<std::string> never_entered(const Report& report) {
  std::vector<std::string> names;
  for (const auto& violation : report.budget.violations)
    if (violation.limit == profiling::Limit::never_entered)
      names.push_back(violation.phase);
  return names;
}

} // namespace

namespace {
std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}
} // namespace

std::vector<std::string> report_notes(const Report& report, bool summary) {
  std::vector<std::string> notes;
  // With a budget, its verdict says why events may be missing.
  if (report.budget_path.empty() || !report.budget_error.empty())
    for (const std::string& loss : report.budget.losses)
      notes.push_back("INCOMPLETE: " + loss);
  if (std::string note = unknown_spaces_note(report); !note.empty())
    notes.push_back(std::move(note));
  // What changes nothing the user sees or does stays in the report file.
  if (!summary && !report.unwatched.empty())
    notes.push_back(report.unwatched);
  if (!report.region_tree_cut.empty())
    notes.push_back(
        "the tree of regions is cut at " +
        std::to_string(Impl::RegionTree::max_depth) +
        " levels: regions pushed below '" +
        Impl::excerpt(report.region_tree_cut, 256) +
        "' count in it (a loop missing a pop nests each step in the last)");
  // A site without a line says why once, in the report file.
  if (!summary)
    for (const std::string& problem : report.site_problems)
      notes.push_back("call sites of " + problem);
  if (!summary && !report.open_regions.empty())
    notes.push_back("regions still open at the end of the run (a pop is "
                    "missing): " +
                    joined(report.open_regions));
  return notes;
}

std::string_view Report::verdict() const {
  if (budget_path.empty())
    return "none";
  if (!budget_error.empty())
    return "incomplete";
  return profiling::to_string(profiling::verdict(budget.violations));
}

std::string format_text(const Report& report) {
  std::string text = header(report);
  text += budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report, false))
    text += "note: " + Impl::printable(note) + "\n";
  // Only where CUDA could have told something: the JSON has it always.
  if (report.cuda_view.built &&
      (report.cuda_view.on || report.budget.device.present))
    text += profiling::cuda_view_line(report.cuda_view) + "\n";
  text += "\ntotal" + without_device(report) + ":\n";
  append_body(text, report.budget.total, report.budget.total_sites,
              top_sites_total);
  append_tree(text, report);
  for (const PhaseSummary& phase : report.budget.phases) {
    text += "\nphase '" + Impl::printable(phase.name) + "' (" +
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
      Impl::transfers(outside.totals) +
              of(outside.totals, EventKind::sync).count >
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

std::string format_summary(const Report& report,
                           const std::string& report_path) {
  std::string text = "cunumpy: " + Impl::printable(report.program) + " (rank " +
                     std::to_string(report.rank) +
                     "): " + counts_line(report.budget.total) +
                     without_device(report) + "\n";
  for (const PhaseSummary& phase : report.budget.phases) {
    if (!phase.entered)
      continue;
    text += "cunumpy:   phase '" + Impl::printable(phase.name) + "' (" +
            calls_text(phase.calls) + "): " + kinds_text(phase.totals) +
            (phase.broken ? " [BROKEN]" : "") + "\n";
  }
  // Without phases, the regions that copied, most transfers first.
  if (report.budget.phases.empty()) {
    std::vector<const RegionNode*> copying;
    for (std::size_t i = 1; i < report.budget.regions.size(); ++i)
      if (Impl::transfers(report.budget.regions[i].own) > 0)
        copying.push_back(&report.budget.regions[i]);
    std::stable_sort(copying.begin(), copying.end(),
                     [](const RegionNode* a, const RegionNode* b) {
                       return Impl::transfers(a->own) > Impl::transfers(b->own);
                     });
    const std::size_t shown = std::min<std::size_t>(copying.size(), 10);
    for (std::size_t i = 0; i < shown; ++i)
      text += "cunumpy:   region '" + Impl::printable(copying[i]->path) +
              "' (" + calls_text(copying[i]->calls) +
              "): " + kinds_text(copying[i]->own) + "\n";
    if (copying.size() > shown)
      text += "cunumpy:   and " + std::to_string(copying.size() - shown) +
              " more region(s) with transfers\n";
  }
  text += "cunumpy: " + budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report, true))
    text += "cunumpy: note: " + Impl::printable(note) + "\n";
  append_violations(text, report, "cunumpy: ");
  const std::size_t shown = std::min(report.advice_top, report.advice.size());
  for (std::size_t i = 0; i < shown; ++i)
    text += "cunumpy: advice: " + report.advice[i].str() + "\n";
  if (shown > 0 && report.advice.size() > shown)
    text += "cunumpy: advice: " + std::to_string(report.advice.size() - shown) +
            " more finding(s) in the full report\n";
  for (const auto& modify : report.unsynced_modifies)
    text += "cunumpy: DualView \"" + Impl::printable(modify.label) +
            "\" modified on " + side_text(modify.on_device) +
            ", never synced (" + modify.site.str() + ")\n";
  text += report_path.empty()
              ? "cunumpy: full report: set CUNUMPY_REPORT=<file>.txt or .json\n"
              : "cunumpy: full report in " + report_path + "\n";
  return text;
}

namespace {

void write_violations(JsonWriter& json, const Report& report) {
  json.begin_array();
  for (const auto& violation : report.budget.violations) {
    json.begin_object();
    json.member("actual", violation.actual);
    json.member("allowed", violation.allowed);
    json.member("details", violation.details);
    json.key("events");
    json.begin_array();
    for (const auto& summary : violation.events)
      write_site(json, summary);
    json.end_array();
    json.member("kind", violation.kind
                            ? std::optional(to_string(*violation.kind))
                            : std::nullopt);
    json.member("limit", to_string(violation.limit));
    json.member("message", violation.str());
    json.member("phase", violation.phase);
    json.end_object();
  }
  json.end_array();
}

void write_budget(JsonWriter& json, const Report& report) {
  json.begin_object();
  json.member("checked",
              !report.budget_path.empty() && report.budget_error.empty());
  json.member("error", unless_empty(report.budget_error));
  json.member("file", unless_empty(report.budget_path));
  std::vector<std::string> notes;
  if (report.budget.unchecked_allowed)
    notes.push_back("no copy was checked: " + report.budget.device.reason +
                    " (it passes because CUNUMPY_ALLOW_NO_DEVICE=1)");
  json.member("notes", notes);
  json.member("ok", !report.failed());
  json.member("rules", report.budget.rule_count);
  json.member("unentered_phases", never_entered(report));
  json.member("verdict", report.verdict());
  json.key("violations");
  write_violations(json, report);
  json.end_object();
}

void write_dual_views(JsonWriter& json, const Report& report) {
  const auto write_sync = [&json](const auto& sync) {
    json.begin_object();
    if (sync.copied) {
      json.member("bytes", sync.nbytes);
      json.member("copy_kind", to_string(sync.copy_kind));
    }
    json.member("count", sync.count);
    json.member("label", sync.label);
    json.member("site", sync.site.str());
    json.member("to", side_text(sync.to_device));
    json.end_object();
  };
  json.begin_object();
  json.key("modified_never_synced");
  json.begin_array();
  for (const auto& modify : report.unsynced_modifies) {
    json.begin_object();
    json.member("label", modify.label);
    json.member("modifies", modify.count);
    json.member("on", side_text(modify.on_device));
    json.member("site", modify.site.str());
    json.end_object();
  }
  json.end_array();
  for (const bool copied : {true, false}) {
    json.key(copied ? "syncs" : "syncs_without_copy");
    json.begin_array();
    for (const auto& sync : report.dual_view_syncs)
      if (sync.copied == copied)
        write_sync(sync);
    json.end_array();
  }
  json.end_object();
}

} // namespace

std::string format_json(const Report& report) {
  PhaseSummary total;
  total.name = "total";
  total.calls = 1;
  total.entered = true;
  total.totals = report.budget.total;
  total.sites = report.budget.total_sites;
  PhaseSummary outside = report.budget.outside;
  outside.name = "outside any phase";
  outside.entered = true;
  // A name given twice keeps its last value; the writer wants them sorted.
  std::map<std::string_view, std::string_view> metadata;
  for (const auto& [key, value] : report.metadata)
    metadata[key] = value;

  JsonWriter json;
  json.begin_object();
  json.key("advice");
  write_advice(json, report);
  json.member("backtrace_depth", report.backtrace_depth);
  json.key("budget");
  write_budget(json, report);
  json.member("callbacks_unwatched_reason", unless_empty(report.unwatched));
  json.member("callbacks_watched", report.unwatched.empty());
  json.member("complete", report.budget.losses.empty());
  json.key("cuda_view");
  write_cuda_view(json, report.cuda_view);
  json.member("cunumpy_version", CUNUMPY_VERSION_STRING);
  json.key("device");
  json.begin_object();
  json.member("present", report.budget.device.present);
  json.member("reason", report.budget.device.reason);
  json.end_object();
  json.member("device_spaces", report.device_spaces);
  json.key("dual_views");
  write_dual_views(json, report);
  json.member("elapsed_seconds", report.elapsed);
  json.member("format", "cunumpy-report");
  json.key("kokkos");
  json.begin_object();
  json.member("backends", report.budget.device.backends);
  json.member("interface", report.kokkos_interface);
  json.member("interface_known",
              Impl::kokkosp::known_interface(report.kokkos_interface));
  json.member("sessions", report.kokkos_sessions);
  // One Kokkos, or several in one process: "5.1.1, 5.2.2".
  std::string versions;
  for (const std::string& version : report.kokkos_versions)
    versions += (versions.empty() ? "" : ", ") + version;
  json.member("version", unless_empty(versions));
  json.member("versions", report.kokkos_versions);
  json.end_object();
  json.member("losses", report.budget.losses);
  json.key("metadata");
  json.begin_object();
  for (const auto& [key, value] : metadata)
    json.member(key, value);
  json.end_object();
  json.member("open_regions", report.open_regions);
  json.key("outside");
  write_phase(json, outside, top_sites_phase);
  json.key("phases");
  json.begin_array();
  for (const auto& phase : report.budget.phases)
    write_phase(json, phase, top_sites_phase);
  json.end_array();
  json.member("pid", report.pid);
  json.member("program", report.program);
  json.member("rank", report.rank);
  json.member("rank_known", report.rank_known);
  json.member("region_tree_cut", unless_empty(report.region_tree_cut));
  json.key("regions");
  json.begin_array();
  for (const auto& node : report.budget.regions)
    write_region(json, node);
  json.end_array();
  json.key("run");
  json.begin_object();
  json.member("id", report.run_id);
  json.member("label", unless_empty(report.label));
  json.member("rank", report.rank);
  json.member("size",
              report.size > 0 ? std::optional<int>(report.size) : std::nullopt);
  json.end_object();
  json.member("site_problems", report.site_problems);
  json.key("total");
  write_phase(json, total, top_sites_total);
  json.key("trace");
  if (report.trace_path.empty()) {
    json.value(nullptr);
  } else {
    json.begin_object();
    json.member("dropped_slices", report.trace_dropped);
    json.member("file", report.trace_path);
    json.end_object();
  }
  json.key("unknown_spaces");
  json.begin_object();
  json.member("names", report.unknown_spaces.names);
  json.member("uncounted_copies", report.unknown_spaces.copies);
  json.end_object();
  json.member("version", 3);
  json.end_object();
  return json.take() + "\n";
}

} // namespace cunumpy::plugin
