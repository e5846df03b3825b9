#include "consumers/counter_state.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/transfer_counter.hpp>

#include "recorder/recorder.hpp"
#include "report/report.hpp"

namespace cunumpy {
namespace Impl {

void LossLog::add(const Loss& loss) {
  counts[static_cast<std::size_t>(loss.reason)] += loss.count;
  if (loss.incident != 0 && std::find(incidents.begin(), incidents.end(),
                                      loss.incident) == incidents.end())
    incidents.push_back(loss.incident);
}

void LossLog::merge(const LossLog& other) {
  for (std::size_t i = 0; i < counts.size(); ++i)
    counts[i] += other.counts[i];
  for (std::uint32_t incident : other.incidents)
    add({LossReason::incident, 0, incident});
}

std::uint64_t LossLog::lost() const noexcept {
  std::uint64_t sum = 0;
  for (std::uint64_t count : counts)
    sum += count;
  return sum;
}

bool LossLog::complete(const RecorderLock& lock) const {
  if (lost() > 0)
    return false;
  for (std::uint32_t id : incidents)
    if (!lock.incident(id).retracted)
      return false;
  return true;
}

std::vector<std::string> LossLog::describe(const RecorderLock& lock) const {
  std::vector<std::string> lines;
  const auto count = [&](LossReason reason) {
    return counts[static_cast<std::size_t>(reason)];
  };
  if (const auto n = count(LossReason::record_failed))
    lines.push_back(std::to_string(n) +
                    " event(s) could not be recorded (out of memory, or an "
                    "internal error of cunumpy's); the counts are short");
  if (const auto n = count(LossReason::sink_failed))
    lines.push_back(std::to_string(n) +
                    " event(s) could not be counted (out of memory); the "
                    "counts are short");
  if (const auto n = count(LossReason::copy_begin_missed))
    lines.push_back(std::to_string(n) +
                    " copy(ies) ended whose begin another tool took from "
                    "cunumpy (its Kokkos Tools begin_deep_copy callback was "
                    "replaced); they were not counted");
  if (const auto n = count(LossReason::copy_unseen))
    lines.push_back(std::to_string(n) +
                    " fence(s) of Kokkos' deep copies came while cunumpy was "
                    "not told of any copy: copies were made while its "
                    "deep-copy callbacks were taken away (another tool or "
                    "library cleared them), and were not counted");
  if (const auto n = count(LossReason::late_record_unplaced))
    lines.push_back(std::to_string(n) +
                    " record(s) of CUDA's came later than cunumpy remembers "
                    "which region was open at their time; they were not "
                    "counted in any phase");
  if (const auto n = count(LossReason::placement_unknown))
    lines.push_back(std::to_string(n) +
                    " event(s) of a thread with no region open came while "
                    "other threads were in different regions; which phase "
                    "they belong to is not known (they counted in one of "
                    "them)");
  if (const auto n = count(LossReason::closed_early))
    lines.push_back(std::to_string(n) +
                    " event(s) may belong to another phase: a region was "
                    "popped where none was open, so a region popped before "
                    "them may have closed early");
  // One line per kind of incident (a tool that replaces its callback at
  // every step makes many of one text).
  std::vector<std::pair<std::string, std::size_t>> texts;
  for (std::uint32_t id : incidents) {
    const Incident& incident = lock.incident(id);
    if (incident.retracted)
      continue;
    auto found = std::find_if(texts.begin(), texts.end(), [&](const auto& t) {
      return t.first == incident.text;
    });
    if (found == texts.end())
      texts.emplace_back(incident.text, 1);
    else
      ++found->second;
  }
  for (const auto& [text, times] : texts)
    lines.push_back(
        "events may have been lost: " + text +
        (times > 1 ? " (" + std::to_string(times) + " times)" : std::string()));
  return lines;
}

CounterState::CounterState(std::size_t max_events,
                           profiling::AdviceRecording recording)
    : AdvisedSink(recording, true), max_events(max_events) {}

void CounterState::add(const RawEvent& event, const RecorderLock&) {
  KindTotals& kind = totals[index_of(event.kind)];
  ++kind.count;
  kind.nbytes += event.nbytes;
  kind.seconds += event.duration;
  kind.async_count += event.async() ? 1 : 0;
  kind.implicit_count += event.implicit ? 1 : 0;

  AggregateKey key{event.kind,   event.blocking, event.implicit,   event.origin,
                   event.memory, event.site,     event.description};
  if (last_aggregate == nullptr || !(last_aggregate->first == key)) {
    auto found = aggregates.find(key);
    if (found == aggregates.end()) {
      allocation_point();
      if (aggregates.size() >= max_aggregates) {
        key.site = 0;
        key.description = 0; // "(other sites)" in summaries
      }
      found = aggregates.try_emplace(key).first;
      if (found->second.count == 0) {
        found->second.order = next_order++;
        found->second.first = event.start;
      }
    }
    last_aggregate = &*found; // map nodes never move
  }
  Aggregate& aggregate = last_aggregate->second;
  ++aggregate.count;
  aggregate.nbytes += event.nbytes;
  aggregate.max_nbytes = std::max(aggregate.max_nbytes, event.nbytes);
  aggregate.seconds += event.duration;
  if (event.device_time != 0) { // CUDA's record timed it on the device
    const double device = event.device_seconds();
    kind.device_seconds += device;
    kind.device_timed_nbytes += event.nbytes;
    aggregate.device_seconds += device;
  }

  if (max_events == 0) {
    ++dropped;
    return;
  }
  if (ring.size() < max_events) {
    ring.push_back(event);
  } else {
    ring[ring_next] = event;
    // A compare, not `% max_events`: a division by a size known only at
    // run time is tens of cycles, on every event once the ring is full.
    if (++ring_next == max_events)
      ring_next = 0;
    ++dropped;
  }
}

void CounterState::merge(const CounterState& other, const RecorderLock& lock,
                         bool reorder_sites) {
  for (std::size_t i = 0; i < totals.size(); ++i) {
    KindTotals& into = totals[i];
    const KindTotals& from = other.totals[i];
    into.count += from.count;
    into.nbytes += from.nbytes;
    into.async_count += from.async_count;
    into.implicit_count += from.implicit_count;
    into.seconds += from.seconds;
    into.device_seconds += from.device_seconds;
    into.device_timed_nbytes += from.device_timed_nbytes;
  }
  for (const auto& entry : other.aggregates) {
    auto [it, inserted] = aggregates.try_emplace(entry.first);
    Aggregate& aggregate = it->second;
    aggregate.first = inserted ? entry.second.first
                               : std::min(aggregate.first, entry.second.first);
    aggregate.count += entry.second.count;
    aggregate.nbytes += entry.second.nbytes;
    aggregate.max_nbytes =
        std::max(aggregate.max_nbytes, entry.second.max_nbytes);
    aggregate.seconds += entry.second.seconds;
    aggregate.device_seconds += entry.second.device_seconds;
  }
  last_aggregate = nullptr;
  dropped += other.dropped;
  losses.merge(other.losses);
  if (reorder_sites)
    reorder(lock);
}

void CounterState::reorder(const RecorderLock&) {
  std::vector<Aggregate*> by_time;
  by_time.reserve(aggregates.size());
  for (auto& entry : aggregates)
    by_time.push_back(&entry.second);
  std::sort(by_time.begin(), by_time.end(),
            [](const Aggregate* a, const Aggregate* b) {
              return a->first < b->first;
            });
  next_order = 0;
  for (Aggregate* aggregate : by_time)
    aggregate->order = next_order++;
}

void CounterState::clear(const RecorderLock&) {
  totals = {};
  last_aggregate = nullptr;
  aggregates.clear();
  next_order = 0;
  ring.clear();
  ring_next = 0;
  dropped = 0;
  losses = {};
  if (advice)
    advice->clear();
}

std::uint64_t CounterState::total(const RecorderLock&) const {
  return transfers(totals);
}

std::vector<profiling::SiteSummary>
CounterState::summaries(const RecorderLock& lock) const {
  // Different stacks can resolve to the same line: merge them.
  using MergeKey =
      std::tuple<int, std::string, std::string, bool, bool, int, int>;
  std::map<MergeKey, std::size_t> merged;
  std::vector<std::pair<std::uint64_t, profiling::SiteSummary>> ordered;
  for (const auto& [key, aggregate] : aggregates) {
    const CallSite& site = lock.sites().resolve(key.site);
    const std::string description =
        key.site == 0 && key.description == 0
            ? std::string("(other sites)")
            : std::string(lock.strings().view(key.description));
    MergeKey merge_key{static_cast<int>(key.kind),
                       site.str(), // file and line, and a Python line
                       description,
                       key.blocking,
                       key.implicit,
                       key.origin,
                       key.memory};
    auto [it, inserted] = merged.try_emplace(merge_key, ordered.size());
    if (inserted) {
      RawEvent detail; // to read the packed memory kinds
      detail.memory = key.memory;
      profiling::SiteSummary summary;
      summary.kind = key.kind;
      summary.site = site;
      summary.what = description;
      summary.blocking = key.blocking;
      summary.async = is_copy(key.kind) && !key.blocking;
      summary.implicit = key.implicit;
      summary.source = lock.source_name(key.origin);
      summary.src_memory = detail.src_memory();
      summary.dst_memory = detail.dst_memory();
      ordered.emplace_back(aggregate.order, std::move(summary));
    }
    auto& [order, summary] = ordered[it->second];
    order = std::min(order, aggregate.order);
    summary.count += aggregate.count;
    summary.nbytes += aggregate.nbytes;
    summary.max_nbytes = std::max(summary.max_nbytes, aggregate.max_nbytes);
    summary.seconds += aggregate.seconds;
    summary.device_seconds += aggregate.device_seconds;
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) {
                     const auto rank = [](EventKind kind) {
                       return std::find(all_event_kinds.begin(),
                                        all_event_kinds.end(), kind) -
                              all_event_kinds.begin();
                     };
                     return std::make_pair(rank(a.second.kind), a.first) <
                            std::make_pair(rank(b.second.kind), b.first);
                   });
  std::vector<profiling::SiteSummary> result;
  result.reserve(ordered.size());
  for (auto& entry : ordered)
    result.push_back(std::move(entry.second));
  return result;
}

std::string CounterState::unchecked(const RecorderLock& lock) const {
  return unchecked_text(lock.device_status());
}

std::vector<std::string>
CounterState::problems(const RecorderLock& lock) const {
  std::vector<std::string> lines = losses.describe(lock);
  if (std::string why = unchecked(lock); !why.empty())
    lines.push_back(std::move(why));
  return lines;
}

void CounterState::describe(Report& report, const RecorderLock& lock) const {
  report.of_counter = true;
  report.budget.total = totals;
  report.budget.total_sites = summaries(lock);
  report.budget.losses = losses.describe(lock);
  report.budget.device = lock.device_status();
  report.site_problems = site_problems(report.budget.total_sites);
  report.counter_complete = complete(lock);
}

std::vector<Event> CounterState::events(const RecorderLock& lock) const {
  std::vector<Event> result;
  result.reserve(ring.size());
  bool late = false;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const RawEvent& event = ring[(ring_next + i) % ring.size()];
    late = late || event.late;
    result.push_back(to_public(event, lock));
  }
  // Events that waited for CUDA's record came after later ones: put them
  // in the order the others are in, that of their ends.
  if (late)
    std::stable_sort(
        result.begin(), result.end(), [](const Event& a, const Event& b) {
          return a.timestamp + a.duration < b.timestamp + b.duration;
        });
  return result;
}

} // namespace Impl
} // namespace cunumpy
