#ifndef CUNUMPY_PLUGIN_REPORT_HPP
#define CUNUMPY_PLUGIN_REPORT_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cunumpy/advice.hpp>
#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/cuda_view.hpp>

#include "dual_view_records.hpp"

namespace cunumpy::plugin {

/// Copies taken for host-to-host because a space's name is unknown: the
/// names, in the order seen, and how many copies that left uncounted.
struct UnknownSpaces {
  std::vector<std::string> names;
  std::uint64_t copies = 0;
};

/// Everything the plugin reports at the end of a run: plain data, made
/// under the recorder's lock and formatted after it.
struct Report {
  std::string program;
  int rank = 0;
  bool rank_known = false;
  int size = 0; ///< the job's ranks; 0: unknown
  std::string run_id;
  std::string label; ///< CUNUMPY_LABEL
  /// The Kokkos that called the plugin: its tools interface, its version
  /// when it declared one, and how many of its sessions (or Kokkos
  /// libraries of the process) initialized the plugin.
  std::uint64_t kokkos_interface = 0;
  /// The version of every Kokkos the process initialized, in order.
  std::vector<std::string> kokkos_versions;
  int kokkos_sessions = 0;
  long pid = 0;
  double elapsed = 0.0;
  int backtrace_depth = 0;
  std::vector<std::string> device_spaces;
  UnknownSpaces unknown_spaces;

  std::string budget_path;  ///< "" without CUNUMPY_BUDGET
  std::string budget_error; ///< why the budget file was not used
  /// The region tree, the phases, the violations and the losses.
  profiling::BudgetSnapshot budget;
  /// Why Kokkos' table of callbacks was not watched ("" when it was).
  std::string unwatched;
  /// Regions still open at the end, as "'path' (thread N)".
  std::vector<std::string> open_regions;
  /// The path below which regions were not made (RegionTree::max_depth),
  /// "" when the tree was not cut.
  std::string region_tree_cut;
  /// Why call sites lack a line, once per module (SiteTable::problems).
  std::vector<std::string> site_problems;
  /// List every region, not only those with transfers
  /// (CUNUMPY_REPORT_ALL_REGIONS).
  bool all_regions = false;

  /// What advice recorded (CUNUMPY_ADVISE), with which thresholds, what
  /// it found (largest estimated saving first), and how many findings the
  /// stderr summary shows.
  profiling::AdviceRecording advice_recording = profiling::AdviceRecording::on;
  profiling::AdviceOptions advice_options;
  std::vector<profiling::Finding> advice;
  std::size_t advice_top = 3;

  std::vector<DualViewSync> dual_view_syncs;
  std::vector<DualViewModify> unsynced_modifies;

  std::string trace_path;
  std::uint64_t trace_dropped = 0;
  /// What CUDA's own record of the process (CUPTI) added, or why not.
  profiling::CudaView cuda_view;
  std::vector<std::pair<std::string, std::string>> metadata;

  /// The budget asked for is broken, could not be checked, may have
  /// missed events, or checked nothing (no device memory space).
  bool failed() const {
    return !budget_path.empty() &&
           (!budget.violations.empty() || !budget_error.empty());
  }
  /// "none", "ok", "broken", "incomplete" (events may be missing, or the
  /// rule file could not be used), "unchecked" (no device memory space).
  std::string_view verdict() const;
};

/// Lines (without "cunumpy: note: ") on what the report may hide: events
/// that may be missing (without a budget, whose verdict says so), copies
/// taken as host-to-host because a memory space's name is unknown; and, in
/// the report file only (not the `summary`), a table of callbacks cunumpy
/// cannot watch.
std::vector<std::string> report_notes(const Report& report, bool summary);

/// The full text report.
std::string format_text(const Report& report);
/// A few lines for stderr: totals, phases, verdict and broken rules;
/// `report_path` names the file holding the full report, if any.
std::string format_summary(const Report& report,
                           const std::string& report_path = "");
/// The JSON report (cunumpy-report merges these across ranks).
std::string format_json(const Report& report);

} // namespace cunumpy::plugin

#endif
