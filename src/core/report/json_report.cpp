// The JSON report: of one process, or of a merged job (its "job" member,
// and the statistics over the ranks of each section, violation and finding),
// which json_reader.cpp reads back to merge again.

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

// The JSON report, written as it is walked (report/json_writer.hpp).

/// `text`, or null in the report when it is empty.
std::optional<std::string_view> unless_empty(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  return text;
}

/// A number that is a whole one (a count, bytes) as an integer.
void write_number(JsonWriter& json, double value) {
  if (value == static_cast<double>(static_cast<std::int64_t>(value)) &&
      value > -9007199254740992.0 && value < 9007199254740992.0)
    json.value(static_cast<std::int64_t>(value));
  else
    json.value(value);
}

void write_ranks(JsonWriter& json, const RankSet& ranks) {
  json.begin_array();
  for (const auto& [first, last] : ranks.ranges()) {
    json.begin_array();
    json.value(first);
    json.value(last);
    json.end_array();
  }
  json.end_array();
}

/// A statistic over the `ranks` ranks of the job (a rank without the
/// number counts 0): min, mean, max, the lowest rank of the max, and the
/// sum that merges again.
void write_statistic(JsonWriter& json, const Statistic& statistic,
                     std::uint64_t ranks) {
  const bool absent = statistic.ranks < ranks;
  json.begin_object();
  json.key("max");
  write_number(json, statistic.ranks == 0 ? 0.0 : statistic.max);
  json.member("max_rank", statistic.max_rank >= 0
                              ? std::optional<int>(statistic.max_rank)
                              : std::nullopt);
  json.member("mean",
              ranks == 0 ? 0.0 : statistic.sum / static_cast<double>(ranks));
  json.key("min");
  write_number(json, statistic.ranks == 0 ? 0.0
                     : absent             ? std::min(statistic.min, 0.0)
                                          : statistic.min);
  json.key("sum");
  write_number(json, statistic.sum);
  json.end_object();
}

/// "over_ranks": the section's ranks and its rows over the job's ranks; a
/// row zero on every rank is not written.
void write_section_ranks(JsonWriter& json, const SectionRanks& section,
                         std::uint64_t ranks) {
  std::map<std::string, const Statistic*> rows;
  for (std::size_t i = 0; i < measure::size; ++i)
    if (i == measure::calls || !section.values[i].all_zero())
      rows.emplace(measure::name(i), &section.values[i]);
  json.key("over_ranks");
  json.begin_object();
  json.member("ranks", section.ranks);
  json.key("rows");
  json.begin_object();
  for (const auto& [name, statistic] : rows) {
    json.key(name);
    write_statistic(json, *statistic, ranks);
  }
  json.end_object();
  json.end_object();
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

/// A phase or section; of a job, its ranks (`job`), the ranks that broke it
/// and its rule's text.
struct PhaseRanks {
  const SectionRanks* section = nullptr;
  const RankSet* broken = nullptr;
  const std::string* rule = nullptr;
  std::uint64_t ranks = 0;
};

void write_phase(JsonWriter& json, const PhaseSummary& phase, std::size_t limit,
                 const PhaseRanks& job = {}) {
  json.begin_object();
  json.member("broken", phase.broken);
  if (job.broken != nullptr) {
    json.key("broken_ranks");
    write_ranks(json, *job.broken);
  }
  json.member("calls", phase.calls);
  json.member("entered", phase.entered);
  json.key("kinds");
  write_kinds(json, phase.totals);
  json.member("name", phase.name);
  json.member("optional", phase.rule && phase.rule->is_optional());
  if (job.section != nullptr)
    write_section_ranks(json, *job.section, job.ranks);
  if (phase.rule)
    json.member("rule", phase.rule->str());
  else if (job.rule != nullptr && !job.rule->empty())
    json.member("rule", *job.rule);
  else
    json.member("rule", nullptr);
  json.member("syncs", kind_totals(phase.totals, EventKind::sync).count);
  json.key("top_sites");
  write_sites(json, phase.sites, limit);
  json.member("transfers", transfers(phase.totals));
  json.end_object();
}

void write_region(JsonWriter& json, const RegionNode& node,
                  const SectionRanks* section, std::uint64_t ranks) {
  json.begin_object();
  json.member("calls", node.calls);
  json.member("depth", node.depth);
  json.key("inclusive");
  write_kinds(json, node.inclusive);
  json.member("inclusive_transfers", transfers(node.inclusive));
  json.member("is_phase", node.is_phase);
  json.member("name", node.name);
  if (section != nullptr)
    write_section_ranks(json, *section, ranks);
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
  const JobRanks& job = report.job;
  json.key("findings");
  json.begin_array();
  for (std::size_t i = 0; i < report.advice.size(); ++i) {
    const profiling::Finding& finding = report.advice[i];
    const FindingRanks* ranks =
        job.merged && i < job.findings.size() ? &job.findings[i] : nullptr;
    json.begin_object();
    json.member("bytes", finding.bytes);
    json.member("calls", finding.calls);
    json.member("count", finding.count);
    json.member("estimate", finding.estimate);
    if (ranks != nullptr) {
      json.key("estimated_on_ranks");
      write_ranks(json, ranks->estimated);
    }
    json.member("evidence", finding.evidence);
    json.member("fix", finding.fix);
    json.member("message", ranks != nullptr ? ranks->message : finding.str());
    if (ranks != nullptr) {
      const std::uint64_t count = ranks->ranks.size();
      json.key("over_ranks");
      json.begin_object();
      json.key("calls");
      write_statistic(json, ranks->calls, count);
      json.key("events");
      write_statistic(json, ranks->events, count);
      json.key("saving");
      write_statistic(json, ranks->saving, ranks->estimated.size());
      json.key("seconds");
      write_statistic(json, ranks->seconds, count);
      json.end_object();
    }
    json.member("phase", finding.phase);
    if (ranks != nullptr) {
      json.member("rank", ranks->rank);
      json.key("ranks");
      write_ranks(json, ranks->ranks);
    }
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
  const JobRanks& job = report.job;
  json.begin_array();
  for (std::size_t i = 0; i < report.budget.violations.size(); ++i) {
    const profiling::Violation& violation = report.budget.violations[i];
    const ViolationRanks* ranks =
        job.merged && i < job.violations.size() ? &job.violations[i] : nullptr;
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
    json.member("message", ranks != nullptr ? ranks->message : violation.str());
    json.member("phase", violation.phase);
    if (ranks != nullptr) {
      json.member("rank", ranks->rank);
      json.key("ranks");
      write_ranks(json, ranks->ranks);
    }
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

/// The ranks of a merged job: which it holds, which failed how, which
/// wrote which note, and what cunumpy-report --check says of them.
void write_job(JsonWriter& json, const Report& report) {
  const JobRanks& job = report.job;
  json.begin_object();
  const auto ranks = [&json](const char* name, const RankSet& set) {
    json.key(name);
    write_ranks(json, set);
  };
  ranks("broken", job.broken);
  ranks("callbacks_unwatched", job.unwatched);
  json.key("check");
  json.begin_object();
  const std::vector<std::string> problems = job_problems(report);
  json.member("ok", problems.empty());
  json.member("problems", problems);
  json.end_object();
  ranks("incomplete", job.incomplete);
  ranks("missing", missing_ranks(report));
  ranks("open_regions", job.open_regions);
  ranks("ranks", job.ranks);
  json.key("reasons");
  json.begin_object();
  for (const auto& [name, reason] :
       {std::pair{"incomplete", &job.incomplete_reason},
        {"unchecked", &job.unchecked_reason},
        {"without_device", &job.without_device_reason}}) {
    if (reason->rank < 0)
      continue;
    json.key(name);
    json.begin_object();
    json.member("rank", reason->rank);
    json.member("text", reason->text);
    json.end_object();
  }
  json.end_object();
  ranks("region_tree_cut", job.region_tree_cut);
  const int size = job_size(report);
  json.member("size", size > 0 ? std::optional<int>(size) : std::nullopt);
  ranks("unbalanced_pops", job.unbalanced_pops);
  ranks("unchecked", job.unchecked);
  ranks("unknown_spaces", job.unknown_spaces);
  ranks("without_advice", job.without_advice);
  ranks("without_budget", job.without_budget);
  ranks("without_device", job.without_device);
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
  const JobRanks& job = report.job;
  const std::uint64_t ranks = job.ranks.size();
  if (job.merged) {
    json.key("job");
    write_job(json, report);
  }
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
  write_phase(json, outside, top_sites_phase,
              job.merged ? PhaseRanks{&job.outside, nullptr, nullptr, ranks}
                         : PhaseRanks{});
  json.key("phases");
  json.begin_array();
  for (std::size_t i = 0; i < report.budget.phases.size(); ++i)
    write_phase(json, report.budget.phases[i], top_sites_phase,
                job.merged && i < job.phases.size()
                    ? PhaseRanks{&job.phases[i], &job.phase_broken[i],
                                 &job.phase_rules[i], ranks}
                    : PhaseRanks{});
  json.end_array();
  json.member("pid", report.pid);
  json.member("program", report.program);
  json.member("rank", report.rank);
  json.member("rank_known", report.rank_known);
  json.member("region_tree_cut", unless_empty(report.region_tree_cut));
  json.key("regions");
  json.begin_array();
  for (std::size_t i = 0; i < report.budget.regions.size(); ++i)
    write_region(json, report.budget.regions[i],
                 job.merged && i < job.regions.size() ? &job.regions[i]
                                                      : nullptr,
                 ranks);
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
  write_phase(json, total, top_sites_total,
              job.merged ? PhaseRanks{&job.total, nullptr, nullptr, ranks}
                         : PhaseRanks{});
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
