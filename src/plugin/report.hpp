#ifndef CUNUMPY_PLUGIN_REPORT_HPP
#define CUNUMPY_PLUGIN_REPORT_HPP

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cunumpy/transfer_budget.hpp>

#include "consumers/budget_state.hpp"
#include "consumers/counter_state.hpp"
#include "dual_view_log.hpp"
#include "recorder/recorder.hpp"

namespace cunumpy::plugin {

/// The events of one region (or of all, or of none), as the report shows
/// them.
struct PhaseReport {
  std::string name;
  std::uint64_t calls = 0;
  bool entered = false;
  std::optional<std::string> rule; ///< Rule::str() when the budget has one
  bool broken = false;             ///< a rule of this phase is broken
  std::array<Impl::KindTotals, event_kind_count> totals{};
  std::vector<profiling::SiteSummary> top_sites;

  std::uint64_t transfers() const; ///< events of every kind but sync
};

/// Everything the plugin reports at the end of a run.
struct Report {
  std::string program;
  int rank = 0;
  bool rank_known = false;
  long pid = 0;
  double elapsed = 0.0;
  int backtrace_depth = 0;
  std::vector<std::string> device_spaces;
  /// Copies taken for host-to-host because a space's name is unknown.
  Impl::UnknownSpaceCopies unknown_spaces;

  std::string budget_path;  ///< "" without CUNUMPY_BUDGET
  std::string budget_error; ///< why the budget file was not used
  std::size_t rule_count = 0;
  std::vector<profiling::Violation> violations;

  PhaseReport total;
  std::vector<PhaseReport> regions;
  PhaseReport outside;

  std::vector<DualViewLog::Sync> dual_view_syncs;
  std::vector<DualViewLog::Modify> unsynced_modifies;

  std::string trace_path;
  std::uint64_t trace_dropped = 0;
  std::vector<std::pair<std::string, std::string>> metadata;

  /// A rule is broken, or the budget asked for could not be checked.
  bool failed() const { return !violations.empty() || !budget_error.empty(); }
};

/// Fills the phases, violations and DualView lists of `report` from the
/// budget and the DualView log. Needs the recorder's mutex; call sites are
/// symbolized here, once per unique site.
void collect(Report& report, const Impl::BudgetState& budget,
             const DualViewLog& dual_views);

/// Lines (without "cunumpy: note: ") on what the report may hide: copies
/// taken as host-to-host because a memory space's name is unknown, rules
/// of phases no region ran.
std::vector<std::string> report_notes(const Report& report);

/// The full text report.
std::string format_text(const Report& report);
/// A few lines for stderr: totals, regions, verdict and broken rules;
/// `report_path` names the file holding the full report, if any.
std::string format_summary(const Report& report,
                           const std::string& report_path = "");
/// The JSON report (cunumpy-report merges these across ranks).
std::string format_json(const Report& report);

} // namespace cunumpy::plugin

#endif
