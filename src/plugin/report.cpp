#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace cunumpy::plugin {
namespace {

constexpr std::size_t top_sites_total = 10;
constexpr std::size_t top_sites_region = 5;

std::size_t index_of(EventKind kind) {
  return static_cast<std::size_t>(kind);
}

/// Copies first, then by bytes, then by count.
std::vector<profiling::SiteSummary>
top_sites(std::vector<profiling::SiteSummary> sites, std::size_t limit) {
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

PhaseReport phase_report(std::string name, const Impl::CounterState& counter,
                         std::size_t limit) {
  PhaseReport phase;
  phase.name = std::move(name);
  phase.entered = true;
  phase.totals = counter.totals;
  phase.top_sites = top_sites(counter.summaries(), limit);
  return phase;
}

std::string printf_string(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

double bandwidth(const Impl::KindTotals& totals) {
  return totals.seconds > 0.0
             ? static_cast<double>(totals.nbytes) / totals.seconds
             : 0.0;
}

std::string bandwidth_text(const Impl::KindTotals& totals) {
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

std::string seed_summary_line(const PhaseReport& phase) {
  const auto count = [&](EventKind kind) {
    return std::to_string(phase.totals[index_of(kind)].count);
  };
  return std::to_string(phase.transfers()) + " transfer(s) through cunumpy (" +
         count(EventKind::to_host) + " to_host, " +
         count(EventKind::to_device) + " to_device, " +
         count(EventKind::kernel_conversion) + " kernel_conversion, " +
         count(EventKind::fallback) + " fallback, " +
         count(EventKind::device_copy) + " device_copy), " +
         count(EventKind::sync) + " sync(s)";
}

std::string site_line(const profiling::SiteSummary& summary) {
  std::string line = Impl::format_site_line(summary);
  if (is_copy(summary.kind))
    line += ", " + std::to_string(summary.nbytes) + " bytes";
  if (summary.seconds > 0.0)
    line += printf_string(", %.6f s", summary.seconds);
  return line;
}

void append_phase_body(std::string& text, const PhaseReport& phase) {
  if (!phase.entered) {
    text += "  never entered\n";
    return;
  }
  text += "  " + seed_summary_line(phase) + "\n";
  bool any = false;
  for (EventKind kind : all_event_kinds)
    any = any || phase.totals[index_of(kind)].count > 0;
  if (!any)
    return;
  char line[160];
  std::snprintf(line, sizeof line, "  %-18s %8s %14s %9s %7s %12s  %s\n",
                "kind", "count", "bytes", "blocking", "async", "time [s]",
                "bandwidth");
  text += line;
  for (EventKind kind : all_event_kinds) {
    const Impl::KindTotals& totals = phase.totals[index_of(kind)];
    if (totals.count == 0)
      continue;
    if (is_copy(kind)) {
      std::snprintf(
          line, sizeof line, "  %-18s %8llu %14llu %9llu %7llu %12.6f  %s\n",
          std::string(to_string(kind)).c_str(),
          static_cast<unsigned long long>(totals.count),
          static_cast<unsigned long long>(totals.nbytes),
          static_cast<unsigned long long>(totals.count - totals.async_count),
          static_cast<unsigned long long>(totals.async_count), totals.seconds,
          bandwidth_text(totals).c_str());
    } else {
      std::snprintf(
          line, sizeof line, "  %-18s %8llu %14s %9s %7s %12.6f  %s\n",
          std::string(to_string(kind)).c_str(),
          static_cast<unsigned long long>(totals.count), "-", "-", "-",
          totals.seconds,
          kind == EventKind::sync && totals.implicit_count > 0
              ? (std::to_string(totals.implicit_count) + " implicit").c_str()
              : "");
    }
    text += line;
  }
  if (!phase.top_sites.empty()) {
    text += "  top call sites:\n";
    for (const auto& summary : phase.top_sites)
      text += "    " + site_line(summary) + "\n";
  }
}

std::string budget_verdict(const Report& report) {
  if (report.budget_path.empty())
    return "budget: none (set CUNUMPY_BUDGET to a rule file)";
  if (!report.budget_error.empty())
    return "budget " + report.budget_path +
           ": NOT CHECKED: " + report.budget_error;
  if (report.violations.empty())
    return "budget " + report.budget_path + ": ok (" +
           std::to_string(report.rule_count) + " rule(s))";
  return "budget " + report.budget_path + ": BROKEN, " +
         std::to_string(report.violations.size()) + " broken rule(s)";
}

std::string header(const Report& report) {
  return "cunumpy transfer report: " + report.program + " (rank " +
         std::to_string(report.rank) + ", pid " + std::to_string(report.pid) +
         printf_string("), %.3f s\n", report.elapsed);
}

void append_violations(std::string& text, const Report& report,
                       const std::string& indent) {
  if (report.violations.empty())
    return;
  text += indent + "broken rules (" + std::to_string(report.violations.size()) +
          "):\n";
  for (const auto& violation : report.violations) {
    std::string paragraph = violation.str();
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

std::string side_text(bool device) {
  return device ? "device" : "host";
}

nlohmann::json site_json(const profiling::SiteSummary& summary) {
  return {{"site", summary.site.str()},
          {"file", summary.site.file},
          {"line", summary.site.line},
          {"function", summary.site.function},
          {"kind", std::string(to_string(summary.kind))},
          {"what", summary.what},
          {"count", summary.count},
          {"bytes", summary.nbytes},
          {"max_bytes", summary.max_nbytes},
          {"seconds", summary.seconds},
          {"blocking", summary.blocking},
          {"async", summary.async},
          {"implicit", summary.implicit}};
}

/// The phases with a rule that no region ran (see unentered_rules_note).
std::vector<std::string> unentered_phases(const Report& report) {
  std::vector<std::string> names;
  for (const auto& phase : report.regions)
    if (!phase.entered && phase.rule && !phase.broken)
      names.push_back(phase.name);
  return names;
}

nlohmann::json phase_json(const PhaseReport& phase) {
  nlohmann::json kinds = nlohmann::json::object();
  for (EventKind kind : all_event_kinds) {
    const Impl::KindTotals& totals = phase.totals[index_of(kind)];
    kinds[std::string(to_string(kind))] = {
        {"count", totals.count},
        {"bytes", totals.nbytes},
        {"blocking", is_copy(kind) ? totals.count - totals.async_count : 0},
        {"async", totals.async_count},
        {"implicit", totals.implicit_count},
        {"seconds", totals.seconds},
        {"bandwidth_bytes_per_second", bandwidth(totals)}};
  }
  nlohmann::json sites = nlohmann::json::array();
  for (const auto& summary : phase.top_sites)
    sites.push_back(site_json(summary));
  return {{"name", phase.name},
          {"calls", phase.calls},
          {"entered", phase.entered},
          {"rule", phase.rule ? nlohmann::json(*phase.rule) : nullptr},
          {"broken", phase.broken},
          {"transfers", phase.transfers()},
          {"syncs", phase.totals[index_of(EventKind::sync)].count},
          {"kinds", kinds},
          {"top_sites", sites}};
}

} // namespace

std::uint64_t PhaseReport::transfers() const {
  std::uint64_t sum = 0;
  for (EventKind kind : all_event_kinds)
    if (kind != EventKind::sync)
      sum += totals[index_of(kind)].count;
  return sum;
}

void collect(Report& report, const Impl::BudgetState& budget,
             const DualViewLog& dual_views) {
  report.total = phase_report("total", budget.total_counter(), top_sites_total);
  report.total.calls = 1;
  report.outside = phase_report("outside any region", *budget.outside.state(),
                                top_sites_region);
  report.violations = budget.violations();
  report.rule_count = budget.rules.size();

  std::vector<std::string> names = budget.order;
  for (const auto& entry : budget.rules)
    if (std::find(names.begin(), names.end(), entry.first) == names.end())
      names.push_back(entry.first);
  for (const auto& name : names) {
    PhaseReport phase;
    if (const auto* entered = budget.find(name)) {
      phase = phase_report(name, *entered->counter->state(), top_sites_region);
      phase.calls = entered->calls;
    } else {
      phase.name = name;
    }
    for (const auto& [rule_name, rule] : budget.rules)
      if (rule_name == name)
        phase.rule = rule.str();
    phase.broken = std::any_of(
        report.violations.begin(), report.violations.end(),
        [&](const profiling::Violation& v) { return v.phase == name; });
    report.regions.push_back(std::move(phase));
  }
  report.dual_view_syncs = dual_views.syncs();
  report.unsynced_modifies = dual_views.unsynced_modifies();
}

namespace {

/// "'a', 'b'"
std::string quoted(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names)
    text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

/// Copies between a host space and a space of unknown name were taken as
/// host-to-host (not counted): a device space no one named?
std::string unknown_spaces_note(const Report& report) {
  const Impl::UnknownSpaceCopies& unknown = report.unknown_spaces;
  if (unknown.copies == 0 || unknown.names.empty())
    return {};
  std::string listed; // the value CUNUMPY_DEVICE_SPACES would need
  for (const auto* names : {&unknown.names, &report.device_spaces})
    for (const std::string& name : *names)
      listed += (listed.empty() ? "" : ",") + name;
  return std::to_string(unknown.copies) +
         (unknown.copies == 1 ? " copy" : " copies") +
         " not counted: cunumpy does not know the memory space(s) " +
         quoted(unknown.names) +
         " and took them for host spaces; if one is a device, set "
         "CUNUMPY_DEVICE_SPACES=" +
         listed;
}

/// Rules of phases no region ran: a typo in the rule file leaves the real
/// region unconstrained. (A broken `calls` rule says so already.)
std::string unentered_rules_note(const Report& report) {
  const std::vector<std::string> names = unentered_phases(report);
  if (names.empty())
    return {};
  std::vector<std::string> entered;
  for (const auto& phase : report.regions)
    if (phase.entered)
      entered.push_back(phase.name);
  return (names.size() == 1 ? "the rule of phase " : "the rules of phases ") +
         quoted(names) + " never applied: no region of that name ran " +
         "(regions that ran: " + (entered.empty() ? "none" : quoted(entered)) +
         "); check the names in " + report.budget_path;
}

} // namespace

std::vector<std::string> report_notes(const Report& report) {
  std::vector<std::string> notes;
  for (std::string note :
       {unknown_spaces_note(report), unentered_rules_note(report)})
    if (!note.empty())
      notes.push_back(std::move(note));
  return notes;
}

std::string format_text(const Report& report) {
  std::string text = header(report);
  text += budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report))
    text += "note: " + note + "\n";
  text += "\ntotal:\n";
  append_phase_body(text, report.total);
  for (const auto& phase : report.regions) {
    text += "\nregion '" + phase.name + "' (" + calls_text(phase.calls) +
            "); " + (phase.rule ? "rule: " + *phase.rule : "no rule") +
            (phase.broken ? " [BROKEN]" : "") + "\n";
    append_phase_body(text, phase);
  }
  if (report.outside.transfers() +
          report.outside.totals[index_of(EventKind::sync)].count >
      0) {
    text += "\noutside any region:\n";
    append_phase_body(text, report.outside);
  }
  if (!report.violations.empty()) {
    text += "\n";
    append_violations(text, report, "");
  }
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
  std::string text = "cunumpy: " + report.program + " (rank " +
                     std::to_string(report.rank) +
                     "): " + seed_summary_line(report.total) + "\n";
  for (const auto& phase : report.regions) {
    if (!phase.entered)
      continue;
    text += "cunumpy:   region '" + phase.name + "' (" +
            calls_text(phase.calls) + "): ";
    std::string kinds;
    for (EventKind kind : all_event_kinds) {
      const Impl::KindTotals& totals = phase.totals[index_of(kind)];
      if (totals.count == 0 || kind == EventKind::sync)
        continue;
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(totals.count) +
               " " + std::string(to_string(kind));
      if (is_copy(kind))
        kinds += " (" + std::to_string(totals.nbytes) + " bytes)";
    }
    text += (kinds.empty() ? "no transfers" : kinds) +
            (phase.broken ? " [BROKEN]" : "") + "\n";
  }
  text += "cunumpy: " + budget_verdict(report) + "\n";
  for (const std::string& note : report_notes(report))
    text += "cunumpy: note: " + note + "\n";
  append_violations(text, report, "cunumpy: ");
  for (const auto& modify : report.unsynced_modifies)
    text += "cunumpy: DualView \"" + modify.label + "\" modified on " +
            side_text(modify.on_device) + ", never synced (" +
            modify.site.str() + ")\n";
  text += report_path.empty()
              ? "cunumpy: full report: set CUNUMPY_REPORT=<file>.txt or .json\n"
              : "cunumpy: full report in " + report_path + "\n";
  return text;
}

std::string format_json(const Report& report) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& violation : report.violations) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& summary : violation.events)
      events.push_back(site_json(summary));
    violations.push_back(
        {{"phase", violation.phase},
         {"kind", violation.kind
                      ? nlohmann::json(std::string(to_string(*violation.kind)))
                      : nullptr},
         {"limit", violation.limit},
         {"allowed", violation.allowed},
         {"actual", violation.actual},
         {"message", violation.str()},
         {"events", events}});
  }
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& phase : report.regions)
    regions.push_back(phase_json(phase));
  nlohmann::json syncs = nlohmann::json::array();
  nlohmann::json empty_syncs = nlohmann::json::array();
  for (const auto& sync : report.dual_view_syncs) {
    nlohmann::json entry = {{"label", sync.label},
                            {"to", side_text(sync.to_device)},
                            {"count", sync.count},
                            {"site", sync.site.str()}};
    if (sync.copied) {
      entry["bytes"] = sync.nbytes;
      entry["copy_kind"] = std::string(to_string(sync.copy_kind));
      syncs.push_back(entry);
    } else {
      empty_syncs.push_back(entry);
    }
  }
  nlohmann::json unsynced = nlohmann::json::array();
  for (const auto& modify : report.unsynced_modifies)
    unsynced.push_back({{"label", modify.label},
                        {"on", side_text(modify.on_device)},
                        {"modifies", modify.count},
                        {"site", modify.site.str()}});
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : report.metadata)
    metadata[key] = value;
  nlohmann::json document = {
      {"format", "cunumpy-report"},
      {"version", 1},
      {"program", report.program},
      {"rank", report.rank},
      {"rank_known", report.rank_known},
      {"pid", report.pid},
      {"elapsed_seconds", report.elapsed},
      {"backtrace_depth", report.backtrace_depth},
      {"device_spaces", report.device_spaces},
      {"unknown_spaces",
       {{"names", report.unknown_spaces.names},
        {"uncounted_copies", report.unknown_spaces.copies}}},
      {"budget",
       {{"file", report.budget_path.empty()
                     ? nlohmann::json(nullptr)
                     : nlohmann::json(report.budget_path)},
        {"checked", !report.budget_path.empty() && report.budget_error.empty()},
        {"error", report.budget_error.empty()
                      ? nlohmann::json(nullptr)
                      : nlohmann::json(report.budget_error)},
        {"rules", report.rule_count},
        {"unentered_phases", unentered_phases(report)},
        {"ok", !report.failed()},
        {"violations", violations}}},
      {"total", phase_json(report.total)},
      {"regions", regions},
      {"outside", phase_json(report.outside)},
      {"dual_views",
       {{"syncs", syncs},
        {"syncs_without_copy", empty_syncs},
        {"modified_never_synced", unsynced}}},
      {"trace",
       report.trace_path.empty()
           ? nlohmann::json(nullptr)
           : nlohmann::json({{"file", report.trace_path},
                             {"dropped_slices", report.trace_dropped}})},
      {"metadata", metadata}};
  return document.dump(2, ' ', false,
                       nlohmann::json::error_handler_t::replace) +
         "\n";
}

} // namespace cunumpy::plugin
