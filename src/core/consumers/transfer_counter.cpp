#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include <cunumpy/assert_no_transfers.hpp>
#include <cunumpy/impl/recorder.hpp>
#include <cunumpy/transfer_counter.hpp>

#include "consumers/counter_state.hpp"

namespace cunumpy {
namespace Impl {
namespace {

std::size_t index_of(EventKind kind) {
  return static_cast<std::size_t>(kind);
}

} // namespace

void CounterState::add(const RawEvent& event) {
  KindTotals& kind = totals[index_of(event.kind)];
  ++kind.count;
  kind.nbytes += event.nbytes;
  kind.seconds += event.duration;
  kind.async_count += event.async() ? 1 : 0;
  kind.implicit_count += event.implicit ? 1 : 0;

  AggregateKey key{event.kind, event.blocking, event.implicit, event.site,
                   event.what};
  if (last_aggregate == nullptr || !(last_aggregate->first == key)) {
    auto found = aggregates.find(key);
    if (found == aggregates.end()) {
      if (aggregates.size() >= max_aggregates) {
        key.site = 0;
        key.what = Recorder::instance().strings().intern("(other sites)");
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

  if (max_events == 0) {
    ++dropped;
    return;
  }
  if (ring.size() < max_events) {
    ring.push_back(event);
  } else {
    ring[ring_next] = event;
    ring_next = (ring_next + 1) % max_events;
    ++dropped;
  }
}

void CounterState::merge(const CounterState& other) {
  for (std::size_t i = 0; i < totals.size(); ++i) {
    KindTotals& into = totals[i];
    const KindTotals& from = other.totals[i];
    into.count += from.count;
    into.nbytes += from.nbytes;
    into.async_count += from.async_count;
    into.implicit_count += from.implicit_count;
    into.seconds += from.seconds;
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
  }
  std::vector<Aggregate*> by_time;
  for (auto& entry : aggregates)
    by_time.push_back(&entry.second);
  std::sort(by_time.begin(), by_time.end(),
            [](const Aggregate* a, const Aggregate* b) {
              return a->first < b->first;
            });
  next_order = 0;
  for (Aggregate* aggregate : by_time)
    aggregate->order = next_order++;
  last_aggregate = nullptr;
  dropped += other.dropped;
}

void CounterState::clear() {
  totals = {};
  last_aggregate = nullptr;
  aggregates.clear();
  next_order = 0;
  ring.clear();
  ring_next = 0;
  dropped = 0;
}

std::uint64_t CounterState::total() const {
  std::uint64_t sum = 0;
  for (EventKind kind : all_event_kinds)
    if (kind != EventKind::sync)
      sum += totals[index_of(kind)].count;
  return sum;
}

std::vector<profiling::SiteSummary> CounterState::summaries() const {
  Recorder& recorder = Recorder::instance();
  // Different stacks can resolve to the same line: merge them.
  using MergeKey = std::tuple<int, std::string, int, std::string, bool, bool>;
  std::map<MergeKey, std::size_t> merged;
  std::vector<std::pair<std::uint64_t, profiling::SiteSummary>> ordered;
  for (const auto& [key, aggregate] : aggregates) {
    const CallSite& site = recorder.sites().resolve(key.site);
    const std::string what(recorder.strings().view(key.what));
    MergeKey merge_key{static_cast<int>(key.kind),
                       site.file,
                       site.line,
                       what,
                       key.blocking,
                       key.implicit};
    auto [it, inserted] = merged.try_emplace(merge_key, ordered.size());
    if (inserted) {
      profiling::SiteSummary summary;
      summary.kind = key.kind;
      summary.site = site;
      summary.what = what;
      summary.blocking = key.blocking;
      summary.async = is_copy(key.kind) && !key.blocking;
      summary.implicit = key.implicit;
      ordered.emplace_back(aggregate.order, std::move(summary));
    }
    auto& [order, summary] = ordered[it->second];
    order = std::min(order, aggregate.order);
    summary.count += aggregate.count;
    summary.nbytes += aggregate.nbytes;
    summary.max_nbytes = std::max(summary.max_nbytes, aggregate.max_nbytes);
    summary.seconds += aggregate.seconds;
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

std::string format_site_line(const profiling::SiteSummary& summary) {
  std::string line = summary.site.str() + ": " + summary.what + " (x" +
                     std::to_string(summary.count) + ")";
  if (summary.async)
    line += " [async]";
  if (summary.implicit)
    line += " [implicit]";
  return line;
}

std::string
format_report(const std::array<KindTotals, event_kind_count>& totals,
              const std::vector<profiling::SiteSummary>& summaries,
              const std::string& indent) {
  const auto count = [&](EventKind kind) {
    return totals[index_of(kind)].count;
  };
  std::uint64_t total = 0;
  for (EventKind kind : all_event_kinds)
    if (kind != EventKind::sync)
      total += count(kind);
  std::string text =
      indent + std::to_string(total) + " transfer(s) through cunumpy (" +
      std::to_string(count(EventKind::to_host)) + " to_host, " +
      std::to_string(count(EventKind::to_device)) + " to_device, " +
      std::to_string(count(EventKind::kernel_conversion)) +
      " kernel_conversion, " + std::to_string(count(EventKind::fallback)) +
      " fallback, " + std::to_string(count(EventKind::device_copy)) +
      " device_copy)\n";
  for (EventKind kind : all_event_kinds) {
    if (count(kind) == 0)
      continue;
    text += indent + "  " + std::string(to_string(kind)) + " (" +
            std::to_string(count(kind)) + "):\n";
    for (const auto& summary : summaries)
      if (summary.kind == kind)
        text += indent + "    " + format_site_line(summary) + "\n";
  }
  return text;
}

std::string CounterState::report() const {
  return format_report(totals, summaries());
}

std::vector<Event> CounterState::events() const {
  std::vector<Event> result;
  result.reserve(ring.size());
  for (std::size_t i = 0; i < ring.size(); ++i)
    result.push_back(to_public(ring[(ring_next + i) % ring.size()]));
  return result;
}

void throw_if_transfers(const profiling::TransferCounter& counter,
                        SourceLocation where) {
  const std::uint64_t transfers = counter.to_host() + counter.to_device() +
                                  counter.kernel_conversion() +
                                  counter.fallback();
  if (transfers == 0)
    return;
  std::string message =
      "cunumpy::profiling::assert_no_transfers: " + std::to_string(transfers) +
      " host/device transfer(s) where none are allowed";
  if (where.known())
    message += " (checked at " + std::string(where.file) + ":" +
               std::to_string(where.line) + ")";
  message += "\n" + counter.report();
  throw TransferError(message);
}

} // namespace Impl

namespace profiling {

using Impl::index_of;
using Impl::lock_recorder;

TransferCounter::TransferCounter(std::size_t max_events)
    : state_(std::make_shared<Impl::CounterState>(max_events)) {}
TransferCounter::~TransferCounter() = default;
TransferCounter::TransferCounter(TransferCounter&&) noexcept = default;
TransferCounter&
TransferCounter::operator=(TransferCounter&&) noexcept = default;

std::uint64_t TransferCounter::total() const {
  auto lock = lock_recorder();
  return state_->total();
}
std::uint64_t TransferCounter::count(EventKind kind) const {
  auto lock = lock_recorder();
  return state_->totals[index_of(kind)].count;
}
std::uint64_t TransferCounter::to_host() const {
  return count(EventKind::to_host);
}
std::uint64_t TransferCounter::to_device() const {
  return count(EventKind::to_device);
}
std::uint64_t TransferCounter::device_copy() const {
  return count(EventKind::device_copy);
}
std::uint64_t TransferCounter::kernel_conversion() const {
  return count(EventKind::kernel_conversion);
}
std::uint64_t TransferCounter::fallback() const {
  return count(EventKind::fallback);
}
std::uint64_t TransferCounter::syncs() const {
  return count(EventKind::sync);
}
std::uint64_t TransferCounter::bytes(EventKind kind) const {
  auto lock = lock_recorder();
  return state_->totals[index_of(kind)].nbytes;
}
std::uint64_t TransferCounter::bytes_to_host() const {
  return bytes(EventKind::to_host);
}
std::uint64_t TransferCounter::bytes_to_device() const {
  return bytes(EventKind::to_device);
}
double TransferCounter::seconds(EventKind kind) const {
  auto lock = lock_recorder();
  return state_->totals[index_of(kind)].seconds;
}
std::uint64_t TransferCounter::async_count(EventKind kind) const {
  auto lock = lock_recorder();
  return state_->totals[index_of(kind)].async_count;
}
std::vector<Event> TransferCounter::events() const {
  auto lock = lock_recorder();
  return state_->events();
}
std::uint64_t TransferCounter::events_dropped() const {
  auto lock = lock_recorder();
  return state_->dropped;
}
std::vector<SiteSummary> TransferCounter::sites() const {
  auto lock = lock_recorder();
  return state_->summaries();
}
std::string TransferCounter::report() const {
  auto lock = lock_recorder();
  return state_->report();
}
void TransferCounter::clear() {
  auto lock = lock_recorder();
  state_->clear();
}

TransferCountScope::TransferCountScope()
    : owned_(std::make_unique<TransferCounter>()), counter_(owned_.get()) {
  Impl::ensure_hooks();
  attached_ = counter_->state();
  Impl::Recorder::instance().attach(attached_.get());
}

TransferCountScope::TransferCountScope(TransferCounter& counter)
    : counter_(&counter) {
  Impl::ensure_hooks();
  attached_ = counter_->state();
  Impl::Recorder::instance().attach(attached_.get());
}

TransferCountScope::TransferCountScope(TransferCountScope&& other) noexcept
    : owned_(std::move(other.owned_)), counter_(other.counter_),
      attached_(std::move(other.attached_)) {}

TransferCountScope::~TransferCountScope() {
  stop();
}

void TransferCountScope::stop() noexcept {
  if (attached_) {
    Impl::Recorder::instance().detach(attached_.get());
    attached_.reset();
  }
}

TransferCountScope count_transfers() {
  return TransferCountScope();
}

void set_backtrace_depth(int depth) {
  Impl::Recorder::instance().set_backtrace_depth(depth);
}

int backtrace_depth() {
  return Impl::Recorder::instance().backtrace_depth();
}

TransferCountScope count_transfers(TransferCounter& counter) {
  return TransferCountScope(counter);
}

} // namespace profiling
} // namespace cunumpy
