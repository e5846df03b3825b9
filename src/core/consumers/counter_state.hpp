#ifndef CUNUMPY_SRC_COUNTER_STATE_HPP
#define CUNUMPY_SRC_COUNTER_STATE_HPP

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <cunumpy/transfer_counter.hpp>

#include "recorder/recorder.hpp"

namespace cunumpy::Impl {

struct KindTotals {
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
  std::uint64_t async_count = 0;
  std::uint64_t implicit_count = 0;
  double seconds = 0.0;
};

struct AggregateKey {
  EventKind kind;
  bool blocking;
  bool implicit;
  std::uint32_t site;
  std::uint32_t what;

  bool operator==(const AggregateKey& other) const noexcept {
    return kind == other.kind && blocking == other.blocking &&
           implicit == other.implicit && site == other.site &&
           what == other.what;
  }
};

struct AggregateKeyHash {
  std::size_t operator()(const AggregateKey& key) const noexcept {
    std::uint64_t h = (std::uint64_t(key.site) << 32) ^ key.what;
    h ^= (std::uint64_t(key.kind) << 2 | std::uint64_t(key.blocking) << 1 |
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
  std::uint64_t order = 0; ///< when first seen, for stable reports
  double first = 0.0;      ///< the first event's start (for merges)
};

/// What a TransferCounter holds. Written by the recorder and read by the
/// counter's accessors, both under the recorder's mutex.
struct CounterState final : EventSink {
  explicit CounterState(std::size_t max_events) : max_events(max_events) {}

  void on_event(const RawEvent& event) override { add(event); }
  void add(const RawEvent& event);
  /// Adds `other`'s totals and aggregates (not its raw events). The order
  /// of the aggregates follows their first events' times.
  void merge(const CounterState& other);
  void clear();

  /// Per-site summaries merged by resolved call site, in first-seen order.
  std::vector<profiling::SiteSummary> summaries() const;
  /// The report body (the lines under the summary line), indented by
  /// `indent` spaces; `kinds` filters the sections.
  std::string report() const;
  std::vector<Event> events() const;

  std::uint64_t total() const;

  /// Aggregates beyond this are merged into one "(other sites)" entry, so a
  /// counter stays small even when descriptions vary without bound.
  static constexpr std::size_t max_aggregates = 1u << 16;

  std::array<KindTotals, event_kind_count> totals{};
  std::unordered_map<AggregateKey, Aggregate, AggregateKeyHash> aggregates;
  /// The aggregate of the previous event: loops repeat the same site.
  std::pair<const AggregateKey, Aggregate>* last_aggregate = nullptr;
  std::uint64_t next_order = 0;
  std::size_t max_events;
  std::vector<RawEvent> ring;
  std::size_t ring_next = 0;
  std::uint64_t dropped = 0;
};

/// The report of `summaries`, in the seed's format: the summary line, then
/// one section per kind with a line per call site. `indent` prefixes every
/// line.
std::string
format_report(const std::array<KindTotals, event_kind_count>& totals,
              const std::vector<profiling::SiteSummary>& summaries,
              const std::string& indent = "");

/// One report line for a site: "file:line: what (xN) [async]".
std::string format_site_line(const profiling::SiteSummary& summary);

} // namespace cunumpy::Impl

#endif
