#ifndef CUNUMPY_SRC_CONSUMERS_ADVICE_RULES_HPP
#define CUNUMPY_SRC_CONSUMERS_ADVICE_RULES_HPP

// The rules of advice, one function each, in one table in the order of
// docs/advice.md. A rule reads what AdviceState kept (RuleInput) and adds
// its findings; AdviceState::findings runs them all and sorts what they
// found.

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cunumpy/advice.hpp>

#include "consumers/advice.hpp"
#include "recorder/lock.hpp"

namespace cunumpy::Impl {

/// What a rule reads: the state's statistics, the thresholds, the names
/// (through the lock) and the bandwidths to compare copies with.
struct RuleInput {
  const AdviceState& state;
  const AdviceState::SiteMap& sites;
  const AdviceState::PairMap& round_trips;
  const AdviceState::PairMap& ping_pongs;
  const AdviceState::SyncMap& syncs;
  const RecorderLock& lock;
  const profiling::AdviceOptions& options;
  /// Each region node's calls while counting.
  const std::vector<std::uint64_t>& node_calls;
  /// Each region node's path ("integrate/output"; "" for the root).
  std::vector<std::string> paths;
  /// Page-locked copies' bandwidth per direction (0: to the host), as set
  /// or the best of the run; 0 where there is none.
  double pinned[2] = {0.0, 0.0};
  std::string pinned_source;
  /// The best copy to the host into a reused buffer; 0 if none.
  double reused = 0.0;
};

/// A finding and its place in the order of events (ties of saving keep
/// it).
using Found = std::vector<std::pair<std::uint64_t, profiling::Finding>>;

struct AdviceRuleEntry {
  profiling::AdviceRule rule;
  void (*find)(const RuleInput& input, Found& found);
};

/// Every rule, in the order of docs/advice.md.
extern const std::array<AdviceRuleEntry, profiling::advice_rule_count>
    advice_rules;

} // namespace cunumpy::Impl

#endif
