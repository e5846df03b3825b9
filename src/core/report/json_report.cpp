// The JSON report: what cunumpy-report reads (its schema,
// REPORT_SCHEMA, is compared with this file's output key by key in
// tests/plugin/test_report_tool.py).

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string_view>

#include <cunumpy/version.hpp>

#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/report.hpp"
#include "tools/kokkosp.hpp"

namespace cunumpy::Impl {
namespace {

using profiling::KindTable;
using profiling::KindTotals;
using profiling::PhaseSummary;
using profiling::RegionNode;
using profiling::SiteSummary;

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
    const KindTotals& entry = kind_totals(totals, kind);
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
  json.member("syncs", kind_totals(phase.totals, EventKind::sync).count);
  json.key("top_sites");
  write_sites(json, phase.sites, limit);
  json.member("transfers", transfers(phase.totals));
  json.end_object();
}

void write_region(JsonWriter& json, const RegionNode& node) {
  json.begin_object();
  json.member("calls", node.calls);
  json.member("depth", node.depth);
  json.key("inclusive");
  write_kinds(json, node.inclusive);
  json.member("inclusive_transfers", transfers(node.inclusive));
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
  json.member("transfers", transfers(node.own));
  json.end_object();
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
  json.member("checked", report.has_budget && report.budget_error.empty());
  json.member("error", unless_empty(report.budget_error));
  json.member("file", unless_empty(report.budget_path));
  std::vector<std::string> notes;
  if (report.budget.unchecked_allowed)
    notes.push_back("no copy was checked: " + report.budget.device.reason +
                    " (it passes because CUNUMPY_ALLOW_NO_DEVICE=1)");
  if (!report.unbalanced_pops.empty())
    notes.push_back("regions were popped where none was open, by " +
                    report.unbalanced_pops);
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
              kokkosp::known_interface(report.kokkos_interface));
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
  json.member("ended", report.ended);
  json.member("id", report.run_id);
  json.member("id_unique", report.run_id_unique);
  json.member("label", unless_empty(report.label));
  json.member("rank", report.rank);
  json.member("size",
              report.size > 0 ? std::optional<int>(report.size) : std::nullopt);
  json.member("started", report.started);
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

} // namespace cunumpy::Impl
