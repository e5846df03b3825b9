#ifndef CUNUMPY_SRC_CONSUMERS_BUDGET_STATE_HPP
#define CUNUMPY_SRC_CONSUMERS_BUDGET_STATE_HPP

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/transfer_budget.hpp>

#include "consumers/counter_state.hpp"
#include "consumers/unbalanced_pops.hpp"
#include "recorder/records.hpp"
#include "report/format.hpp"

namespace cunumpy::Impl {

/// What a TransferBudget holds: for each node of the recorder's tree of
/// region paths, its calls and the events made while it was innermost; and
/// the rules. Which phase an event counts in is decided when the budget is
/// read, from the tree and the phase names known then (rules may come after
/// the run). A sink of the recorder; every member is read and written under
/// the recorder's mutex, and every function takes the lock's token.
struct BudgetState final : AdvisedSink {
  /// This budget's data of a node of the recorder's tree (same index).
  struct Node {
    explicit Node(std::size_t events_kept) : own(events_kept) {}
    std::uint64_t calls = 0; ///< entries while counting
    /// Of those, entries that continued a call (OpenRegion::continues).
    std::uint64_t continued = 0;
    double seconds = 0.0;      ///< time inside while counting
    double first_entry = -1.0; ///< first entry while counting; <0: none
    CounterState own;          ///< events while it was innermost
  };

  explicit BudgetState(const profiling::BudgetOptions& options);

  void on_event(const RawEvent& event, const RecorderLock& lock) override;
  void on_region_push(const RegionPush& push,
                      const RecorderLock& lock) override;
  void on_region_pop(const RegionPop& pop, const RecorderLock& lock) override;
  void on_unbalanced_pop(const UnbalancedPop&, const RecorderLock&) override {
    unbalanced.on_unbalanced_pop();
  }
  void on_loss(const Loss& loss, const RecorderLock&) override {
    losses.add(loss);
  }

  /// Starts or stops counting (TransferBudget::start, stop).
  void set_started(bool value) noexcept { started = value; }

  /// `name` is an explicit phase of this budget (TransferBudget::phase):
  /// a phase, whether a rule names it or not.
  void add_explicit_phase(const std::string& name, const RecorderLock& lock);
  /// Sets the rule of phase `name`, replacing an earlier one in its place.
  void set_rule(const std::string& name, profiling::Rule rule,
                const RecorderLock& lock);
  const profiling::Rule* rule(const std::string& name,
                              const RecorderLock& lock) const;

  /// The phases (in report order), their events, the violations: what every
  /// reader needs, made in one walk of the tree.
  profiling::BudgetSnapshot snapshot(const RecorderLock& lock) const;
  std::vector<profiling::Violation> violations(const RecorderLock& lock) const;
  /// The findings of advice, each with the phase its region counts in;
  /// only those of phase `phase` when it is given.
  std::vector<profiling::Finding>
  findings(const profiling::AdviceOptions& options, const RecorderLock& lock,
           const std::string* phase = nullptr) const;
  std::vector<std::string> phase_names(const RecorderLock& lock) const;
  /// The counter (and calls) of `name` as if it were a phase, into `into`.
  void phase_counter(const std::string& name, CounterState& into,
                     std::uint64_t* calls, const RecorderLock& lock) const;
  /// A live view of phase `name` (TransferBudget::operator[]).
  profiling::TransferCounter& view(const std::string& name,
                                   const RecorderLock& lock);
  profiling::TransferCounter& total_view(const RecorderLock& lock);
  std::uint64_t calls(const std::string& name, const RecorderLock& lock) const;

  std::size_t events_kept;
  /// The recorder it is attached to (handed by TransferBudget).
  Recorder* recorder = nullptr;
  /// By the recorder's node ids, made as nodes are entered (a node of the
  /// tree past the end has no calls and no events here yet).
  mutable std::deque<Node> nodes;
  std::unordered_set<std::uint32_t> explicit_names; ///< opened by phase()
  std::vector<std::pair<std::string, profiling::Rule>> rules;
  std::unordered_map<std::string, std::size_t> rule_index;
  std::map<std::string, std::unique_ptr<profiling::TransferCounter>> views;
  std::unique_ptr<profiling::TransferCounter> total;
  LossLog losses;
  /// What pops on an empty stack may have moved out of a phase.
  UnbalancedPops unbalanced;

  /// This budget's data of `node`, made if new.
  Node& at(std::uint32_t node);
  /// The node `at` returned last (a deque's elements stay where they are as
  /// it grows): a loop's events in one region skip the deque's arithmetic.
  std::uint32_t last_node_id = 0;
  Node* last_node = nullptr;
  /// Nodes for every node of the recorder's tree, before a read.
  void cover(const RecorderLock& lock) const;
};

/// The rules of a TOML rule file (see TransferBudget::require_file), in file
/// order. Throws std::invalid_argument naming `source`, the line and the key.
std::vector<std::pair<std::string, profiling::Rule>>
parse_rules(std::string_view toml, const std::string& source);

/// Throws std::invalid_argument when `rule` allows a kind it also ignores.
void validate_rule(const std::string& phase, const profiling::Rule& rule,
                   const std::string& where);

} // namespace cunumpy::Impl

#endif
