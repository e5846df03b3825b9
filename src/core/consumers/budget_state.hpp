#ifndef CUNUMPY_SRC_BUDGET_STATE_HPP
#define CUNUMPY_SRC_BUDGET_STATE_HPP

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cunumpy/transfer_budget.hpp>

#include "consumers/counter_state.hpp"
#include "recorder/recorder.hpp"

namespace cunumpy::Impl {

/// What a TransferBudget holds: the open phases, a counter per phase, and
/// the rules. A sink of the recorder; every member is read and written under
/// the recorder's mutex.
struct BudgetState final : EventSink {
  struct Phase {
    std::unique_ptr<profiling::TransferCounter> counter =
        std::make_unique<profiling::TransferCounter>();
    std::uint64_t calls = 0;
  };
  struct OpenPhase {
    std::uint64_t token = 0;  ///< 0 for a Kokkos region
    bool transparent = false; ///< a library's own region: not a phase
    Phase* phase = nullptr;   ///< in `phases` (a map: never moves)
  };

  explicit BudgetState(bool started) : started(started) {}

  void on_event(const RawEvent& event) override;
  void on_region_push(std::uint32_t name, double time) override;
  void on_region_pop(double time) override;

  Phase& phase(const std::string& name);
  /// The innermost open phase, or null outside every phase.
  const OpenPhase* innermost() const;
  const Phase* find(const std::string& name) const;
  /// Opens `phase` (of `phase(name)`); returns the token that closes it.
  std::uint64_t open(Phase& phase, bool region);
  void close(std::uint64_t token);
  /// Sets the rule of phase `name`, replacing an earlier one in its place.
  void set_rule(const std::string& name, profiling::Rule rule);
  /// Without a total counter, every event updates one counter (its phase's,
  /// or `outside`) instead of two; total_counter() then adds them up. For
  /// the plugin, which reads the total once, at the end.
  void count_total(bool value) { counting_total = value; }
  /// The total: `total`'s state, or the sum of the phases and `outside`.
  CounterState total_counter() const;

  /// How many raw events each counter of the budget keeps (the plugin, whose
  /// reports use the aggregates only, keeps none: a ring slot written per
  /// event is memory a time step then touches for nothing).
  void keep_events(std::size_t max_events);

  std::vector<profiling::Violation> violations() const;
  std::string report() const;

  bool started;
  std::vector<OpenPhase> open_phases;
  std::uint64_t next_token = 1;
  std::map<std::string, Phase> phases;
  /// The phase of each Kokkos region name seen (StringTable id; null for a
  /// library's own region): a time step pushes the same regions again.
  std::unordered_map<std::uint32_t, Phase*> region_phases;
  std::vector<std::string> order; ///< phase names, first seen first
  std::vector<std::pair<std::string, profiling::Rule>> rules;
  profiling::TransferCounter total; ///< empty without count_total
  bool counting_total = true;
  profiling::TransferCounter outside; ///< events in no phase
  std::size_t events_kept = profiling::TransferCounter::default_max_events;
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
