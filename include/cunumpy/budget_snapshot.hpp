#ifndef CUNUMPY_BUDGET_SNAPSHOT_HPP
#define CUNUMPY_BUDGET_SNAPSHOT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cunumpy/transfer_budget.hpp>
#include <cunumpy/transfer_counter.hpp>

namespace cunumpy::profiling {

/// One node of the tree of region paths a TransferBudget records: a region
/// or an explicit phase, at one place in the nesting ("step/solve" and
/// "output/solve" are two nodes).
struct RegionNode {
  std::string name;        ///< "" for the root: outside every region
  std::string path;        ///< names from the root, joined by '/'
  std::size_t parent = 0;  ///< index in BudgetSnapshot::regions (root: 0)
  std::size_t depth = 0;   ///< 0 for the root
  std::uint64_t calls = 0; ///< times entered while counting
  double seconds = 0.0;    ///< time inside, over its calls (with children)
  /// The phase the node's own events count in ("" outside every phase):
  /// itself when its name is a phase, else its parent's.
  std::string phase;
  bool is_phase = false; ///< its name is a phase's
  KindTable own{};       ///< events while it was the innermost node
  KindTable inclusive{}; ///< its own and its descendants' events
  std::vector<SiteSummary> own_sites;
};

/// A phase as its rule sees it: every event that counts in it.
struct PhaseSummary {
  std::string name;
  std::uint64_t calls = 0;
  bool entered = false;
  std::optional<Rule> rule;
  bool broken = false; ///< a violation names this phase
  KindTable totals{};
  std::vector<SiteSummary> sites;
};

/// What a TransferBudget knows, as plain data (TransferBudget::snapshot):
/// what reports are made of.
/// What the program has of devices (Recorder::device_status).
struct DeviceStatus {
  /// A device memory space was seen (in a copy, an allocation, a kernel's
  /// execution space, or the default execution space Kokkos named).
  bool present = false;
  /// The execution spaces seen: "OpenMP", "Cuda", ...
  std::vector<std::string> backends;
  /// Without a device: "no device memory space in this program (backends:
  /// OpenMP): no copy could be a transfer", or, where copies went to or
  /// from memory spaces cunumpy does not know, how many.
  std::string reason;
  /// Without a device, the memory spaces of unknown name that copies went
  /// to or from: such a run is not one without a device, and a budget
  /// cannot pass it (not even with CUNUMPY_ALLOW_NO_DEVICE=1).
  std::vector<std::string> unknown_spaces;
  /// Without a device, what to do: the spaces to name in
  /// CUNUMPY_DEVICE_SPACES where copies went to unknown ones, else
  /// CUNUMPY_ALLOW_NO_DEVICE=1 where a run without a device may pass.
  std::string fix;
  /// Nothing was checked, and the run may not pass: no device, and either
  /// copies to unknown spaces or CUNUMPY_ALLOW_NO_DEVICE unset. Budgets,
  /// counters and assert_no_transfers fail alike.
  bool unchecked = false;
};

struct BudgetSnapshot {
  bool started = true;
  /// The tree, parents before children; regions[0] is the root.
  std::vector<RegionNode> regions;
  /// Phases that ran, in first-seen order, then those only a rule names.
  std::vector<PhaseSummary> phases;
  /// Events outside every phase (in transparent regions, or in none).
  PhaseSummary outside;
  KindTable total{};
  std::vector<SiteSummary> total_sites; ///< every event, by call site
  std::size_t rule_count = 0;
  std::vector<Violation> violations;
  /// What the program has of devices; without one, a budget with rules has
  /// a no_device violation, unless CUNUMPY_ALLOW_NO_DEVICE=1 allowed it
  /// (`unchecked_allowed`) and no copy went to a space of unknown name.
  DeviceStatus device;
  bool unchecked_allowed = false;
  /// Why events may be missing, one line per cause; empty when complete.
  std::vector<std::string> losses;
};

} // namespace cunumpy::profiling

#endif
