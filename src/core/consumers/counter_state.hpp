#ifndef CUNUMPY_SRC_CONSUMERS_COUNTER_STATE_HPP
#define CUNUMPY_SRC_CONSUMERS_COUNTER_STATE_HPP

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <cunumpy/transfer_counter.hpp>

#include "consumers/advice.hpp"
#include "recorder/records.hpp"
#include "report/format.hpp"

namespace cunumpy::Impl {

struct Report;

using profiling::KindTable;
using profiling::KindTotals;

/// The losses a sink was told of (Recorder::losses, open_incident).
struct LossLog {
  std::array<std::uint64_t, loss_reason_count> counts{};
  std::vector<std::uint32_t> incidents; ///< Recorder incident ids

  void add(const Loss& loss);
  void merge(const LossLog& other);
  /// Events known to be lost (incidents count none: their number is
  /// unknown).
  std::uint64_t lost() const noexcept;
  /// Whether nothing may be missing (retracted incidents lost nothing).
  bool complete(const RecorderLock& lock) const;
  /// One line per cause, e.g. "2 event(s) could not be recorded (out of
  /// memory or an internal error in cunumpy)".
  std::vector<std::string> describe(const RecorderLock& lock) const;
};

struct AggregateKey {
  EventKind kind;
  bool blocking;
  bool implicit;
  std::uint8_t origin; ///< RawEvent::origin: who reported it
  std::uint8_t memory; ///< RawEvent::memory: the memory kinds
  std::uint32_t site;
  std::uint32_t description;

  bool operator==(const AggregateKey& other) const noexcept {
    return kind == other.kind && blocking == other.blocking &&
           implicit == other.implicit && origin == other.origin &&
           memory == other.memory && site == other.site &&
           description == other.description;
  }
};

struct AggregateKeyHash {
  std::size_t operator()(const AggregateKey& key) const noexcept {
    std::uint64_t h = (std::uint64_t(key.site) << 32) ^ key.description;
    h ^= (std::uint64_t(key.origin) << 19 | std::uint64_t(key.memory) << 11 |
          std::uint64_t(key.kind) << 2 | std::uint64_t(key.blocking) << 1 |
          std::uint64_t(key.implicit)) *
         0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(h * 0xff51afd7ed558ccdull);
  }
};

struct Aggregate {
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
  std::uint64_t max_nbytes = 0;
  double seconds = 0.0;
  double device_seconds = 0.0; ///< CUDA's record of the copies
  std::uint64_t order = 0;     ///< when first seen, for stable reports
  double first = 0.0;          ///< the first event's start (for merges)
};

/// What a TransferCounter holds. Written by the recorder and read by the
/// counter's accessors, both under the recorder's mutex: its functions take
/// the lock's token, and its data members are touched only inside them or
/// by code that holds one.
struct CounterState final : AdvisedSink {
  explicit CounterState(
      std::size_t max_events,
      profiling::AdviceRecording recording = profiling::AdviceRecording::off);

  void on_event(const RawEvent& event, const RecorderLock& lock) override {
    add(event, lock);
    if (advice)
      advice->on_event(event, lock);
  }
  void on_loss(const Loss& loss, const RecorderLock&) override {
    losses.add(loss);
  }
  void add(const RawEvent& event, const RecorderLock& lock);
  /// Adds `other`'s totals, aggregates and losses (not its raw events). The
  /// order of the aggregates then follows their first events' times; many
  /// merges in a row can leave that to one reorder() at the end.
  void merge(const CounterState& other, const RecorderLock& lock,
             bool reorder_sites = true);
  void reorder(const RecorderLock& lock);
  void clear(const RecorderLock& lock);

  /// Per-site summaries merged by resolved call site, in first-seen order.
  std::vector<profiling::SiteSummary> summaries(const RecorderLock& lock) const;
  /// What the report of a counter says (Report::of_counter): its totals,
  /// sites and losses; format_text writes it.
  void describe(Report& report, const RecorderLock& lock) const;
  std::vector<Event> events(const RecorderLock& lock) const;

  std::uint64_t total(const RecorderLock& lock) const;
  /// Why what it counted checks nothing: the program has shown no device
  /// memory space, so no copy could be a transfer (unless
  /// CUNUMPY_ALLOW_NO_DEVICE=1, as for budgets); empty when it checks.
  std::string unchecked(const RecorderLock& lock) const;
  /// Events may be missing, or nothing was checked: assert_no_transfers
  /// fails, `complete()` is false.
  bool complete(const RecorderLock& lock) const {
    return losses.complete(lock) && unchecked(lock).empty();
  }
  /// Why it is not complete, one line per cause.
  std::vector<std::string> problems(const RecorderLock& lock) const;

  /// Aggregates beyond this are merged into one "(other sites)" entry, so a
  /// counter stays small even when descriptions vary without bound.
  static constexpr std::size_t max_aggregates = 1u << 16;

  KindTable totals{};
  std::unordered_map<AggregateKey, Aggregate, AggregateKeyHash> aggregates;
  /// The aggregate of the previous event: loops repeat the same site.
  std::pair<const AggregateKey, Aggregate>* last_aggregate = nullptr;
  std::uint64_t next_order = 0;
  std::size_t max_events;
  std::vector<RawEvent> ring;
  std::size_t ring_next = 0;
  std::uint64_t dropped = 0;
  LossLog losses;

  /// A counter that is a view of another state (a budget's phase): its
  /// owner rebuilds it before every read. Such a counter cannot count on
  /// its own.
  std::function<void(CounterState&, const RecorderLock&)> refresh;
  /// The recorder whose lock its reads take: handed by who made it (the
  /// library's start for a counter of its own, the budget for a phase's).
  Recorder* recorder = nullptr;

  /// A view has no `advice` of its own: it asks its owner (`advise`).
  std::function<std::vector<profiling::Finding>(const profiling::AdviceOptions&,
                                                const RecorderLock&)>
      advise;
};

/// The shared state of a TransferCounter, for the library's own code.
struct CounterAccess {
  static const std::shared_ptr<CounterState>&
  state(const profiling::TransferCounter& counter) noexcept {
    return counter.state_;
  }
};

} // namespace cunumpy::Impl

#endif
