// The text formats: the full report and the stderr summary.

#include <algorithm>
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

} // namespace

std::string format_text(const Report& report) {
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
