// A TransferBudget's data of the recorder's tree of region paths, and the
// phases its rules see. Recording only follows the tree (an event counts in
// the node it happened in, a push counts a call of its node); everything
// that depends on which names are phases happens when the budget is read.

#include "consumers/budget_state.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include "recorder/recorder.hpp"

namespace cunumpy::Impl {
namespace {

using profiling::Limit;
using profiling::Rule;
using profiling::SiteSummary;
using profiling::Violation;

/// Which node each node's events count in, for a given set of phase names.
struct Resolution {
  std::vector<std::uint32_t> phase_of; ///< a node index; 0: outside
  std::vector<char> is_phase;
};

/// What counts in one phase.
struct PhaseTotals {
  explicit PhaseTotals(std::size_t events_kept) : counter(events_kept) {}
  CounterState counter;
  std::uint64_t calls = 0;
  bool entered = false;
  double first_entry = std::numeric_limits<double>::infinity();
  std::size_t first_node = 0;
  std::vector<RawEvent> events; ///< the nodes' raw events, merged
};

const RegionTree& tree_of(const RecorderLock& lock) {
  return lock.regions();
}

std::string_view name_of(std::size_t node, const RecorderLock& lock) {
  return lock.strings().view(
      lock.regions().node(static_cast<std::uint32_t>(node)).name);
}

/// The names that are phases: those of rules and of explicit phases, and
/// `extra` when not empty.
std::unordered_set<std::string_view> phase_name_set(const BudgetState& state,
                                                    const std::string& extra,
                                                    const RecorderLock& lock) {
  std::unordered_set<std::string_view> names;
  for (const auto& [name, rule] : state.rules)
    names.insert(name);
  for (std::uint32_t id : state.explicit_names)
    names.insert(lock.strings().view(id));
  if (!extra.empty())
    names.insert(extra);
  return names;
}

Resolution resolve(const BudgetState& state,
                   const std::unordered_set<std::string_view>& names,
                   const RecorderLock& lock) {
  state.cover(lock);
  const RegionTree& tree = tree_of(lock);
  Resolution result;
  result.phase_of.assign(state.nodes.size(), 0);
  result.is_phase.assign(state.nodes.size(), 0);
  for (std::size_t i = 1; i < state.nodes.size(); ++i) {
    result.is_phase[i] = names.count(name_of(i, lock)) != 0;
    result.phase_of[i] =
        result.is_phase[i]
            ? static_cast<std::uint32_t>(i)
            : result.phase_of[tree.node(static_cast<std::uint32_t>(i)).parent];
  }
  return result;
}

/// The events and calls of every phase of `resolution` (keyed by name; ""
/// is outside every phase).
std::map<std::string, PhaseTotals, std::less<>>
accumulate(const BudgetState& state, const Resolution& resolution,
           std::size_t events_kept, const RecorderLock& lock) {
  std::map<std::string, PhaseTotals, std::less<>> phases;
  const auto totals_of = [&](std::string_view name) -> PhaseTotals& {
    auto found = phases.find(name);
    if (found == phases.end())
      found = phases.emplace(std::string(name), PhaseTotals(events_kept)).first;
    return found->second;
  };
  for (std::size_t i = 0; i < state.nodes.size(); ++i) {
    const BudgetState::Node& node = state.nodes[i];
    const std::uint32_t phase = resolution.phase_of[i];
    PhaseTotals& totals =
        totals_of(phase == 0 ? std::string_view() : name_of(phase, lock));
    totals.counter.merge(node.own, lock, false);
    if (events_kept > 0)
      totals.events.insert(totals.events.end(), node.own.ring.begin(),
                           node.own.ring.end());
    if (!resolution.is_phase[i] || node.calls == 0)
      continue;
    totals.entered = true;
    totals.calls += node.calls - node.continued;
    if (node.first_entry < totals.first_entry) {
      totals.first_entry = node.first_entry;
      totals.first_node = i;
    }
  }
  for (auto& entry : phases)
    entry.second.counter.reorder(lock);
  if (events_kept > 0) {
    for (auto& [name, totals] : phases) {
      auto& events = totals.events;
      std::stable_sort(events.begin(), events.end(),
                       [](const RawEvent& a, const RawEvent& b) {
                         return a.start < b.start;
                       });
      if (events.size() > events_kept)
        events.erase(events.begin(),
                     events.end() - static_cast<long>(events_kept));
    }
  }
  return phases;
}

std::string bool_text(bool value) {
  return value ? "true" : "false";
}

/// Every event a counter counted, of every kind.
std::uint64_t events_counted(const CounterState& counter) {
  std::uint64_t sum = 0;
  for (const KindTotals& totals : counter.totals)
    sum += totals.count;
  return sum;
}

/// The distinct names of the nodes that ran while counting.
std::vector<std::string> names_that_ran(const BudgetState& state,
                                        const RecorderLock& lock) {
  std::vector<std::string> names;
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 1; i < state.nodes.size(); ++i) {
    const std::string_view name = name_of(i, lock);
    if (state.nodes[i].calls > 0 && seen.insert(name).second)
      names.emplace_back(name);
  }
  return names;
}

void check_kinds(const std::string& name, const Rule& rule,
                 const CounterState& counter, const RecorderLock& lock,
                 std::vector<Violation>& result) {
  const auto summaries = counter.summaries(lock);
  for (EventKind kind : all_event_kinds) {
    const KindTotals& totals = counter.totals[index_of(kind)];
    if (totals.count == 0 || rule.ignored().count(kind) != 0)
      continue;
    // Kokkos' own copies are not the program's: checked only against the
    // limits a rule gives them.
    if (kind == EventKind::kokkos_own && rule.allowed().count(kind) == 0)
      continue;
    std::vector<SiteSummary> of_kind;
    for (const auto& summary : summaries)
      if (summary.kind == kind)
        of_kind.push_back(summary);
    const auto allowed = rule.allowed().find(kind);
    if (allowed == rule.allowed().end()) {
      result.push_back({name,
                        kind,
                        Limit::forbidden,
                        "0",
                        std::to_string(totals.count),
                        of_kind,
                        {}});
      continue;
    }
    const profiling::Limits& limits = allowed->second;
    if (limits.max_count() && totals.count > *limits.max_count())
      result.push_back({name,
                        kind,
                        Limit::max_count,
                        std::to_string(*limits.max_count()),
                        std::to_string(totals.count),
                        of_kind,
                        {}});
    if (limits.max_total_bytes() && totals.nbytes > *limits.max_total_bytes())
      result.push_back({name,
                        kind,
                        Limit::max_total_bytes,
                        std::to_string(*limits.max_total_bytes()),
                        std::to_string(totals.nbytes),
                        of_kind,
                        {}});
    const auto offending = [&](auto breaks) {
      std::vector<SiteSummary> selected;
      for (const auto& summary : of_kind)
        if (breaks(summary))
          selected.push_back(summary);
      return selected;
    };
    if (const auto limit = limits.max_nbytes()) {
      auto events = offending([&](const SiteSummary& summary) {
        return summary.max_nbytes > *limit;
      });
      if (!events.empty()) {
        std::uint64_t largest = 0;
        for (const auto& summary : events)
          largest = std::max(largest, summary.max_nbytes);
        result.push_back({name,
                          kind,
                          Limit::max_nbytes,
                          std::to_string(*limit),
                          std::to_string(largest),
                          std::move(events),
                          {}});
      }
    }
    if (const auto value = limits.blocking()) {
      auto events = offending([&](const SiteSummary& summary) {
        return summary.blocking != *value;
      });
      if (!events.empty())
        result.push_back({name,
                          kind,
                          Limit::blocking,
                          bool_text(*value),
                          bool_text(!*value),
                          std::move(events),
                          {}});
    }
    if (const auto value = limits.implicit()) {
      auto events = offending([&](const SiteSummary& summary) {
        return summary.implicit != *value;
      });
      if (!events.empty())
        result.push_back({name,
                          kind,
                          Limit::implicit,
                          bool_text(*value),
                          bool_text(!*value),
                          std::move(events),
                          {}});
    }
  }
}

/// What a region closed early may have moved (UnbalancedPops), for the
/// phases of a resolution: by phase and kind, the events counted elsewhere
/// that may belong to it, and those counted in it that may belong to a
/// phase popped before them.
struct MayHaveMoved {
  using Tallies = std::array<UnbalancedPops::Tally, event_kind_count>;
  std::map<std::string, Tallies, std::less<>> into, out_of;
  bool unknown = false; ///< too many events to tell
};

/// Whether a phase (by `is_phase`) lies on the path of `node` at `depth`
/// or deeper: then a region inserted above it changes nothing of where the
/// node's events count.
bool phase_at_or_below(std::uint32_t node, std::uint32_t depth,
                       const Resolution& resolution, const RegionTree& tree) {
  for (; node != 0 && tree.node(node).depth >= depth;
       node = tree.node(node).parent)
    if (resolution.is_phase[node])
      return true;
  return false;
}

MayHaveMoved may_have_moved(const UnbalancedPops& pops,
                            const Resolution& resolution,
                            const RecorderLock& lock) {
  MayHaveMoved moved;
  if (pops.count() == 0)
    return moved;
  moved.unknown = pops.overflowed();
  const RegionTree& tree = tree_of(lock);
  std::vector<std::string_view> elsewhere;
  pops.for_each_judged(
      [&](std::uint32_t node,
          const std::vector<UnbalancedPops::Candidate>& candidates,
          EventKind kind, const UnbalancedPops::Tally& tally) {
        if (node >= resolution.phase_of.size())
          return;
        const std::uint32_t owner = resolution.phase_of[node];
        const std::string_view here =
            owner == 0 ? std::string_view() : name_of(owner, lock);
        elsewhere.clear();
        for (const UnbalancedPops::Candidate& candidate : candidates) {
          if (candidate.node >= resolution.is_phase.size() ||
              !resolution.is_phase[candidate.node])
            continue;
          const std::string_view name = name_of(candidate.node, lock);
          if (name == here || std::find(elsewhere.begin(), elsewhere.end(),
                                        name) != elsewhere.end())
            continue;
          // Still open, the region would be around the event's own regions
          // from its depth down: a phase among them keeps the event.
          if (!candidate.anywhere &&
              phase_at_or_below(node, tree.node(candidate.node).depth,
                                resolution, tree))
            continue;
          elsewhere.push_back(name);
        }
        if (elsewhere.empty())
          return;
        for (const std::string_view name : elsewhere)
          moved.into[std::string(name)][index_of(kind)].add(tally);
        if (owner != 0)
          moved.out_of[std::string(here)][index_of(kind)].add(tally);
      });
  return moved;
}

/// Whether adding `events` of `kind` to a phase whose events of that kind
/// total `base` (taking them out, unless `adding`) changes whether a limit
/// of `rule` holds; `broken(limit)` says whether it holds now.
template <class Broken>
bool changes_a_limit(const Rule& rule, EventKind kind, const KindTotals& base,
                     const UnbalancedPops::Tally& events, bool adding,
                     Broken broken) {
  if (events.count == 0 || rule.ignored().count(kind) != 0)
    return false;
  const auto allowed = rule.allowed().find(kind);
  if (kind == EventKind::kokkos_own && allowed == rule.allowed().end())
    return false; // Kokkos' own: checked only against limits given
  const std::uint64_t count =
      adding ? base.count + events.count
             : base.count - std::min(base.count, events.count);
  const std::uint64_t nbytes =
      adding ? base.nbytes + events.nbytes
             : base.nbytes - std::min(base.nbytes, events.nbytes);
  if (allowed == rule.allowed().end())
    return (base.count > 0) != (count > 0);
  const profiling::Limits& limits = allowed->second;
  if (const auto limit = limits.max_count();
      limit && (base.count > *limit) != (count > *limit))
    return true;
  if (const auto limit = limits.max_total_bytes();
      limit && (base.nbytes > *limit) != (nbytes > *limit))
    return true;
  // A limit on each event: adding an offending one breaks it if it held;
  // taking offending ones out may make it hold (whether the others offend
  // is not known here).
  const auto offends = [&](Limit limit, bool offending) {
    return offending && broken(limit) != adding;
  };
  if (const auto limit = limits.max_nbytes();
      limit && offends(Limit::max_nbytes, events.max_nbytes > *limit))
    return true;
  if (const auto value = limits.blocking();
      value &&
      offends(Limit::blocking, *value ? events.not_blocking : events.blocking))
    return true;
  if (const auto value = limits.implicit();
      value &&
      offends(Limit::implicit, *value ? events.not_implicit : events.implicit))
    return true;
  return false;
}

/// "3 to_device, 1 sync" of the kinds of `tallies` for which `keep` holds.
template <class Keep>
std::string kinds_text(const MayHaveMoved::Tallies& tallies, Keep keep) {
  std::string text;
  for (EventKind kind : all_event_kinds) {
    const UnbalancedPops::Tally& tally = tallies[index_of(kind)];
    if (tally.count == 0 || !keep(kind, tally))
      continue;
    text += (text.empty() ? "" : ", ") + std::to_string(tally.count) + " " +
            std::string(to_string(kind));
  }
  return text;
}

/// The rules whose verdict the events a region closed early may have
/// moved could change: a line for each (none when no pop was unbalanced).
std::vector<std::string> verdicts_a_closed_region_may_change(
    const BudgetState& state,
    const std::map<std::string, PhaseTotals, std::less<>>& phases,
    const Resolution& resolution, const std::vector<Violation>& violations,
    const RecorderLock& lock) {
  std::vector<std::string> lines;
  const UnbalancedPops& pops = state.unbalanced;
  if (pops.count() == 0 || state.rules.empty())
    return lines;
  const std::string why =
      "a region was popped where none was open (" +
      (pops.count() == 1 ? std::string("once")
                         : std::to_string(pops.count()) + " times") +
      "), so a pop before it may have closed a region early";
  const MayHaveMoved moved = may_have_moved(pops, resolution, lock);
  if (moved.unknown) {
    lines.push_back(why + ", and the events made before it were too many "
                          "to tell which may belong to it");
    return lines;
  }
  for (const auto& entry : state.rules) {
    // Not a structured binding: C++17 lambdas cannot capture one (clang).
    const std::string& name = entry.first;
    const auto& rule = entry.second;
    const auto found = phases.find(name);
    if (found == phases.end() || !found->second.entered)
      continue;
    const KindTable& base = found->second.counter.totals;
    for (const bool adding : {true, false}) {
      const auto& side = adding ? moved.into : moved.out_of;
      const auto tallies = side.find(name);
      if (tallies == side.end())
        continue;
      const std::string kinds =
          kinds_text(tallies->second, [&](EventKind kind,
                                          const UnbalancedPops::Tally& tally) {
            return changes_a_limit(rule, kind, base[index_of(kind)], tally,
                                   adding, [&](Limit limit) {
                                     return std::any_of(
                                         violations.begin(), violations.end(),
                                         [&](const Violation& v) {
                                           return v.phase == name &&
                                                  v.kind == kind &&
                                                  v.limit == limit;
                                         });
                                   });
          });
      if (kinds.empty())
        continue;
      lines.push_back(
          adding ? why + ": phase '" + name + "' may be one, and " + kinds +
                       " event(s) counted outside it after it closed would "
                       "change its verdict in it"
                 : why + ": " + kinds + " event(s) counted in phase '" + name +
                       "' may belong to a phase that closed before them, and "
                       "would change its verdict there");
    }
  }
  return lines;
}

/// Every broken rule of `phases`, and events_lost when the budget may miss
/// events.
std::vector<Violation>
check(const BudgetState& state,
      const std::map<std::string, PhaseTotals, std::less<>>& phases,
      const Resolution& resolution, const RecorderLock& lock) {
  std::vector<Violation> result;
  std::vector<std::string> ran;
  bool ran_known = false;
  for (const auto& [name, rule] : state.rules) {
    const auto found = phases.find(name);
    const bool entered = found != phases.end() && found->second.entered;
    const std::uint64_t calls = found != phases.end() ? found->second.calls : 0;
    std::vector<std::string> details;
    if (!entered && !rule.is_optional()) {
      if (!ran_known) {
        ran = names_that_ran(state, lock);
        ran_known = true;
      }
      details.push_back(
          "regions and phases that ran: " +
          (ran.empty() ? std::string("none") : closest_names(name, ran)));
    }
    if (rule.calls() && *rule.calls() != calls)
      result.push_back({name,
                        std::nullopt,
                        Limit::calls,
                        std::to_string(*rule.calls()),
                        std::to_string(calls),
                        {},
                        details});
    else if (!entered && !rule.is_optional() &&
             !(rule.calls() && *rule.calls() == 0))
      result.push_back(
          {name, std::nullopt, Limit::never_entered, "", "", {}, details});
    if (entered)
      check_kinds(name, rule, found->second.counter, lock, result);
  }
  std::vector<std::string> lost = state.losses.describe(lock);
  for (std::string& line : verdicts_a_closed_region_may_change(
           state, phases, resolution, result, lock))
    lost.push_back(std::move(line));
  std::vector<std::string> truncated;
  for (std::uint32_t id : tree_of(lock).truncated_names()) {
    const std::string_view name = lock.strings().view(id);
    if (state.rule_index.count(std::string(name)) != 0)
      truncated.emplace_back(name);
  }
  if (!truncated.empty())
    lost.push_back("the tree of region paths reached its limit (" +
                   std::to_string(RegionTree::max_nodes) + " nodes, " +
                   std::to_string(RegionTree::max_depth) +
                   " levels), and regions of phases " + quoted_list(truncated) +
                   " ran outside it");
  if (!state.rules.empty()) {
    const profiling::DeviceStatus device = lock.device_status();
    if (device.unchecked)
      result.push_back({"",
                        std::nullopt,
                        Limit::no_device,
                        "",
                        device.reason,
                        {},
                        {device.fix}});
  }
  if (!state.rules.empty()) {
    const bool checks_migrations = std::any_of(
        state.rules.begin(), state.rules.end(), [](const auto& entry) {
          return entry.second.ignored().count(EventKind::migration) == 0;
        });
    if (const std::string why = lock.migrations_unseen();
        checks_migrations && !why.empty())
      result.push_back(
          {"", std::nullopt, Limit::migrations_unseen, "", why, {}, {}});
  }
  if (!lost.empty()) {
    const std::uint64_t known = state.losses.lost();
    result.push_back({"",
                      std::nullopt,
                      Limit::events_lost,
                      "0",
                      known > 0 ? std::to_string(known) : "unknown",
                      {},
                      std::move(lost)});
  }
  return result;
}

} // namespace

BudgetState::BudgetState(const profiling::BudgetOptions& options)
    : AdvisedSink(options.advice, options.started),
      events_kept(options.events_kept) {}

BudgetState::Node& BudgetState::at(std::uint32_t node) {
  if (last_node != nullptr && last_node_id == node)
    return *last_node;
  while (nodes.size() <= node) {
    allocation_point();
    nodes.emplace_back(events_kept);
  }
  last_node_id = node;
  last_node = &nodes[node];
  return *last_node;
}

void BudgetState::cover(const RecorderLock& lock) const {
  const std::size_t size = tree_of(lock).size();
  while (nodes.size() < size)
    nodes.emplace_back(events_kept);
}

void BudgetState::on_event(const RawEvent& event, const RecorderLock& lock) {
  if (!started)
    return;
  at(event.node).own.add(event, lock);
  unbalanced.on_event(event);
  if (advice)
    advice->on_event(event, lock);
}

void BudgetState::on_region_push(const RegionPush& push,
                                 const RecorderLock& lock) {
  Node& node = at(push.region.node);
  if (started) {
    ++node.calls;
    node.continued += push.region.continues ? 1 : 0;
    if (node.first_entry < 0)
      node.first_entry = push.region.since;
  }
  AdvisedSink::on_region_push(push, lock);
}

void BudgetState::on_region_pop(const RegionPop& pop,
                                const RecorderLock& lock) {
  if (started)
    at(pop.region.node).seconds += pop.time - pop.region.since;
  unbalanced.on_pop(pop.thread, pop.region.node,
                    lock.regions().node(pop.region.node).depth,
                    pop.region.token == 0);
  AdvisedSink::on_region_pop(pop, lock);
}

void BudgetState::add_explicit_phase(const std::string& name,
                                     const RecorderLock& lock) {
  explicit_names.insert(lock.strings().intern(name));
}

void BudgetState::set_rule(const std::string& name, profiling::Rule rule,
                           const RecorderLock&) {
  auto [found, inserted] = rule_index.try_emplace(name, rules.size());
  if (inserted)
    rules.emplace_back(name, std::move(rule));
  else
    rules[found->second].second = std::move(rule);
}

const profiling::Rule* BudgetState::rule(const std::string& name,
                                         const RecorderLock&) const {
  const auto found = rule_index.find(name);
  return found == rule_index.end() ? nullptr : &rules[found->second].second;
}

void BudgetState::phase_counter(const std::string& name, CounterState& into,
                                std::uint64_t* calls,
                                const RecorderLock& lock) const {
  const Resolution resolution =
      resolve(*this, phase_name_set(*this, name, lock), lock);
  auto phases = accumulate(*this, resolution, into.max_events, lock);
  const auto refresh = std::move(into.refresh);
  const std::size_t max_events = into.max_events;
  into.clear(lock);
  const auto found = phases.find(name);
  if (found != phases.end()) {
    into.merge(found->second.counter, lock);
    into.ring = std::move(found->second.events);
    into.ring_next = 0;
    into.dropped = events_counted(found->second.counter) - into.ring.size();
    if (calls != nullptr)
      *calls = found->second.calls;
  } else if (calls != nullptr) {
    *calls = 0;
  }
  into.losses = losses;
  // Its events may be short, or too many, by those a region closed early
  // may have moved into or out of it.
  const MayHaveMoved moved = may_have_moved(unbalanced, resolution, lock);
  for (const auto* side : {&moved.into, &moved.out_of})
    if (const auto tallies = side->find(name); tallies != side->end())
      for (const UnbalancedPops::Tally& tally : tallies->second)
        into.losses
            .counts[static_cast<std::size_t>(LossReason::closed_early)] +=
            tally.count;
  if (moved.unknown)
    into.losses.counts[static_cast<std::size_t>(LossReason::closed_early)] += 1;
  into.max_events = max_events;
  into.refresh = refresh;
}

std::uint64_t BudgetState::calls(const std::string& name,
                                 const RecorderLock& lock) const {
  CounterState scratch(0);
  std::uint64_t result = 0;
  phase_counter(name, scratch, &result, lock);
  return result;
}

profiling::TransferCounter& BudgetState::view(const std::string& name,
                                              const RecorderLock& lock) {
  auto& counter = views[name];
  if (!counter) {
    counter = std::make_unique<profiling::TransferCounter>(events_kept);
    const auto& state = CounterAccess::state(*counter);
    state->recorder = &lock.recorder();
    state->refresh = [this, name](CounterState& state,
                                  const RecorderLock& lock) {
      phase_counter(name, state, nullptr, lock);
    };
    state->advise = [this, name](const profiling::AdviceOptions& options,
                                 const RecorderLock& lock) {
      return findings(options, lock, &name);
    };
  }
  return *counter;
}

profiling::TransferCounter& BudgetState::total_view(const RecorderLock& lock) {
  if (!total) {
    total = std::make_unique<profiling::TransferCounter>(events_kept);
    CounterAccess::state(*total)->recorder = &lock.recorder();
    CounterAccess::state(*total)->advise =
        [this](const profiling::AdviceOptions& options,
               const RecorderLock& lock) { return findings(options, lock); };
    CounterAccess::state(*total)->refresh = [this](CounterState& state,
                                                   const RecorderLock& lock) {
      const auto refresh = std::move(state.refresh);
      state.clear(lock);
      std::vector<RawEvent> events;
      for (const Node& node : nodes) {
        state.merge(node.own, lock, false);
        events.insert(events.end(), node.own.ring.begin(), node.own.ring.end());
      }
      state.reorder(lock);
      std::stable_sort(events.begin(), events.end(),
                       [](const RawEvent& a, const RawEvent& b) {
                         return a.start < b.start;
                       });
      if (events.size() > state.max_events)
        events.erase(events.begin(),
                     events.end() - static_cast<long>(state.max_events));
      state.dropped = events_counted(state) - events.size();
      state.ring = std::move(events);
      state.ring_next = 0;
      state.losses = losses;
      state.refresh = refresh;
    };
  }
  return *total;
}

profiling::BudgetSnapshot
BudgetState::snapshot(const RecorderLock& lock) const {
  profiling::BudgetSnapshot result;
  result.started = started;
  result.rule_count = rules.size();
  result.device = lock.device_status();
  result.unchecked_allowed =
      !rules.empty() && !result.device.present && !result.device.unchecked;
  const Resolution resolution =
      resolve(*this, phase_name_set(*this, "", lock), lock);
  auto phases = accumulate(*this, resolution, 0, lock);
  result.violations = check(*this, phases, resolution, lock);
  result.losses = losses.describe(lock);
  for (const Violation& violation : result.violations)
    if (violation.limit == Limit::events_lost)
      result.losses = violation.details;

  // The tree, with inclusive totals summed from the leaves up: the regions
  // this budget saw (entered, or holding one of its events) and the regions
  // above them, not those of the process' one tree that ran before it. A
  // node's parent comes before it, in the tree and here.
  const RegionTree& tree = tree_of(lock);
  std::vector<std::uint8_t> seen(nodes.size(), 0);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const Node& node = nodes[i];
    bool any = i == 0 || seen[i] != 0 || node.calls > 0;
    for (const profiling::KindTotals& kind : node.own.totals)
      any = any || kind.count > 0;
    if (any) {
      seen[i] = 1;
      seen[tree.node(static_cast<std::uint32_t>(i)).parent] = 1;
    }
  }
  std::vector<std::uint32_t> index(nodes.size(), 0); // tree -> result
  std::vector<std::size_t> kept;                     // result -> tree
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (seen[i] != 0) {
      index[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(i);
    }
  result.regions.resize(kept.size());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const std::size_t i = kept[k];
    const Node& node = nodes[i];
    const RegionTree::Node& shape = tree.node(static_cast<std::uint32_t>(i));
    profiling::RegionNode& out = result.regions[k];
    out.name = std::string(name_of(i, lock));
    out.parent = index[shape.parent];
    out.depth = shape.depth;
    out.calls = node.calls;
    out.seconds = node.seconds;
    out.path = i == 0 ? std::string()
               : out.parent == 0
                   ? out.name
                   : result.regions[out.parent].path + "/" + out.name;
    out.is_phase = resolution.is_phase[i] != 0;
    const std::uint32_t phase = resolution.phase_of[i];
    out.phase = phase == 0 ? std::string() : std::string(name_of(phase, lock));
    out.own = node.own.totals;
    out.inclusive = node.own.totals;
    out.own_sites = node.own.summaries(lock);
  }
  for (std::size_t i = result.regions.size(); i-- > 1;) {
    profiling::KindTable& parent =
        result.regions[result.regions[i].parent].inclusive;
    const profiling::KindTable& mine = result.regions[i].inclusive;
    for (std::size_t k = 0; k < parent.size(); ++k) {
      parent[k].count += mine[k].count;
      parent[k].nbytes += mine[k].nbytes;
      parent[k].async_count += mine[k].async_count;
      parent[k].implicit_count += mine[k].implicit_count;
      parent[k].seconds += mine[k].seconds;
      parent[k].device_seconds += mine[k].device_seconds;
      parent[k].device_timed_nbytes += mine[k].device_timed_nbytes;
    }
  }
  result.total = result.regions[0].inclusive;
  {
    CounterState all(0);
    for (const Node& node : nodes)
      all.merge(node.own, lock, false);
    all.reorder(lock);
    result.total_sites = all.summaries(lock);
  }

  const auto summary_of = [&](const std::string& name) {
    profiling::PhaseSummary summary;
    summary.name = name;
    if (const Rule* found = rule(name, lock))
      summary.rule = *found;
    summary.broken = std::any_of(
        result.violations.begin(), result.violations.end(),
        [&](const Violation& v) { return !name.empty() && v.phase == name; });
    const auto found = phases.find(name);
    if (found != phases.end()) {
      summary.calls = found->second.calls;
      summary.entered = found->second.entered;
      summary.totals = found->second.counter.totals;
      summary.sites = found->second.counter.summaries(lock);
    }
    return summary;
  };
  for (const std::string& name : phase_names(lock))
    result.phases.push_back(summary_of(name));
  result.outside = summary_of("");
  result.outside.name = "";
  return result;
}

std::vector<std::string>
BudgetState::phase_names(const RecorderLock& lock) const {
  const Resolution resolution =
      resolve(*this, phase_name_set(*this, "", lock), lock);
  // Phases that ran, by their first entry; then those only a rule names.
  std::vector<std::pair<double, std::string>> entered;
  std::unordered_set<std::string_view> listed;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    if (!resolution.is_phase[i] || nodes[i].calls == 0)
      continue;
    const std::string_view name = name_of(i, lock);
    if (!listed.insert(name).second) {
      for (auto& [first, known] : entered)
        if (known == name)
          first = std::min(first, nodes[i].first_entry);
      continue;
    }
    entered.emplace_back(nodes[i].first_entry, std::string(name));
  }
  std::stable_sort(
      entered.begin(), entered.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (auto& [first, name] : entered)
    names.push_back(std::move(name));
  for (const auto& [name, rule] : rules)
    if (listed.count(name) == 0)
      names.push_back(name);
  return names;
}

std::vector<profiling::Violation>
BudgetState::violations(const RecorderLock& lock) const {
  const Resolution resolution =
      resolve(*this, phase_name_set(*this, "", lock), lock);
  return check(*this, accumulate(*this, resolution, 0, lock), resolution, lock);
}

namespace {

/// A copy that breaks its phase's rule is fixed by taking it out of the
/// phase: page-locked memory makes it faster, and it still breaks the rule.
void remove_rather_than_pin(profiling::Finding& finding,
                            const std::vector<profiling::Violation>& broken) {
  for (const profiling::Violation& violation : broken) {
    if (violation.phase != finding.phase || finding.phase.empty() ||
        profiling::verdict({violation}) != profiling::Verdict::broken)
      continue;
    for (const profiling::SiteSummary& event : violation.events)
      for (const profiling::FindingSite& at : finding.sites)
        if (event.kind == at.kind && event.site.str() == at.site.str()) {
          finding.fix = "remove the copy from phase '" + finding.phase +
                        "' or move it out: it breaks the phase's rule, "
                        "however fast it is";
          return;
        }
  }
}

} // namespace

std::vector<profiling::Finding>
BudgetState::findings(const profiling::AdviceOptions& options,
                      const RecorderLock& lock,
                      const std::string* phase) const {
  if (!advice)
    throw std::logic_error(
        "cunumpy::TransferBudget::advice: this budget records nothing for "
        "advice (it was made with AdviceRecording::off); make it with "
        "AdviceRecording::on");
  std::vector<profiling::Finding> all = advice->findings(options, lock);
  // The phase of each finding's region, by path: both trees follow the
  // same pushes.
  const Resolution resolution =
      resolve(*this, phase_name_set(*this, "", lock), lock);
  const RegionTree& tree = tree_of(lock);
  std::unordered_map<std::string, std::string> phase_of;
  std::vector<std::string> paths(nodes.size());
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const std::string name(name_of(i, lock));
    const std::uint32_t parent =
        tree.node(static_cast<std::uint32_t>(i)).parent;
    paths[i] = parent == 0 ? name : paths[parent] + "/" + name;
    const std::uint32_t owner = resolution.phase_of[i];
    if (owner != 0)
      phase_of.emplace(paths[i], std::string(name_of(owner, lock)));
  }
  const std::vector<profiling::Violation> broken = violations(lock);
  std::vector<profiling::Finding> result;
  for (profiling::Finding& finding : all) {
    if (const auto found = phase_of.find(finding.region);
        found != phase_of.end())
      finding.phase = found->second;
    if (finding.rule == profiling::AdviceRule::pageable_memory)
      remove_rather_than_pin(finding, broken);
    if (phase == nullptr || finding.phase == *phase)
      result.push_back(std::move(finding));
  }
  return result;
}

} // namespace cunumpy::Impl
