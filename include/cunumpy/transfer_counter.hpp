#ifndef CUNUMPY_TRANSFER_COUNTER_HPP
#define CUNUMPY_TRANSFER_COUNTER_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cunumpy/advice.hpp>
#include <cunumpy/event.hpp>

namespace cunumpy {
namespace Impl {
struct CounterState;
struct CounterAccess;
} // namespace Impl

namespace profiling {

/// What a counter holds for one event kind.
struct KindTotals {
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
  std::uint64_t async_count = 0;    ///< copies the host did not wait for
  std::uint64_t implicit_count = 0; ///< waits the program did not ask for
  double seconds = 0.0;             ///< time spent in the events
  /// Time on the device of the copies CUDA's record describes, and their
  /// bytes (for their bandwidth).
  double device_seconds = 0.0;
  std::uint64_t device_timed_nbytes = 0;
};

/// Totals of every kind, indexed by the kind's value
/// (`totals[static_cast<std::size_t>(EventKind::to_host)]`).
using KindTable = std::array<KindTotals, event_kind_count>;

/// Events aggregated by call site: every event of one kind, site,
/// description, blocking/implicit flags, source and memory kinds adds to one
/// summary, so a counter's memory depends on the number of sites, not on the
/// number of events.
struct SiteSummary {
  EventKind kind = EventKind::to_host;
  CallSite site;
  std::string what;
  bool blocking = true;
  bool async = false;
  bool implicit = false;
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;     ///< sum over the events
  std::uint64_t max_nbytes = 0; ///< largest single event
  double seconds = 0.0;         ///< time spent in the events
  /// Who reported the events (Event::source): "kokkos", or the source that
  /// alone saw them, shown `[cuda]` for "cuda".
  std::string source = "kokkos";
  /// The memory kinds of the copies, from CUDA's record.
  MemoryKind src_memory = MemoryKind::unknown;
  MemoryKind dst_memory = MemoryKind::unknown;
  /// Their time on the device, from CUDA's record (0 without it).
  double device_seconds = 0.0;
};

/// Counts the events recorded while it is attached (by count_transfers or a
/// TransferBudget phase): totals per kind, bytes, time, aggregates per call
/// site, and the most recent raw events (a bounded number; counts stay exact
/// however many events there are); and what advice() needs. Safe to read
/// while other threads record.
class TransferCounter {
public:
  /// `max_events` raw events are kept (the newest); 0 keeps none. `advice`
  /// says what is recorded for advice(): `off` (the default: counting
  /// stays as cheap as it can be, 10-20 ns per copy less) nothing, `on` what
  /// the rules need, `contents` also a hash of the host side of every copy
  /// (redundant copies).
  explicit TransferCounter(std::size_t max_events = default_max_events,
                           AdviceRecording advice = AdviceRecording::off);
  ~TransferCounter();
  TransferCounter(TransferCounter&&) noexcept;
  TransferCounter& operator=(TransferCounter&&) noexcept;
  TransferCounter(const TransferCounter&) = delete;
  TransferCounter& operator=(const TransferCounter&) = delete;

  static constexpr std::size_t default_max_events = 4096;

  /// Transfers and markers: to_host + to_device + device_copy +
  /// kernel_conversion + fallback. Syncs are not included.
  std::uint64_t total() const;
  std::uint64_t to_host() const;
  std::uint64_t to_device() const;
  std::uint64_t device_copy() const;
  std::uint64_t kernel_conversion() const;
  std::uint64_t fallback() const;
  std::uint64_t syncs() const;
  /// Unified-memory records (migrations, page faults) of CUDA's record; not
  /// in total(): their bytes, bytes(EventKind::migration), are what counts.
  std::uint64_t migrations() const;
  std::uint64_t count(EventKind kind) const;

  std::uint64_t bytes_to_host() const;
  std::uint64_t bytes_to_device() const;
  /// Bytes unified memory migrated (CUDA's record).
  std::uint64_t bytes_migrated() const;
  std::uint64_t bytes(EventKind kind) const;
  /// Seconds spent in events of `kind` (copy time, or wait time for syncs).
  double seconds(EventKind kind) const;
  /// Copies of `kind` the host did not wait for.
  std::uint64_t async_count(EventKind kind) const;

  /// The newest raw events, oldest first (at most `max_events`).
  std::vector<Event> events() const;
  /// Events that were counted but are no longer kept as raw events.
  std::uint64_t events_dropped() const;
  /// Aggregates per call site, in report order.
  std::vector<SiteSummary> sites() const;

  /// The report: a summary line, then one section per kind with one
  /// line per call site, e.g.
  /// `  file.cpp:17: to_device(shape=(100000,), dtype=float64) (x10)`.
  std::string report() const;

  /// Events that reached cunumpy but could not be recorded (out of memory,
  /// a copy whose begin another tool took): the counts above are short by
  /// this many.
  std::uint64_t events_lost() const;
  /// False when events may be missing: some could not be recorded, or
  /// another tool replaced cunumpy's Kokkos Tools callbacks while counting
  /// (then their number is unknown); and when nothing could be checked: the
  /// program has shown no device memory space, so no copy could be a
  /// transfer (unless CUNUMPY_ALLOW_NO_DEVICE=1). assert_no_transfers and
  /// budgets fail when a counter is not complete.
  bool complete() const;
  /// Why the counter is not complete, one line per cause; empty when it is.
  std::vector<std::string> losses() const;

  /// What the counted events say is worth changing: one Finding per
  /// pattern that passes `options`' thresholds (pageable copies, round
  /// trips, blocking reads in loops, ...; docs/advice.md), largest
  /// estimated saving first. Advice changes no count and no verdict.
  /// Throws std::logic_error for a counter made with AdviceRecording::off.
  std::vector<Finding> advice(const AdviceOptions& options = {}) const;

  /// Forgets every event (and every loss).
  void clear();

private:
  friend struct cunumpy::Impl::CounterAccess;
  std::shared_ptr<cunumpy::Impl::CounterState> state_;
};

/// While alive, counts every event of every thread into a counter. Returned
/// by count_transfers(); scopes nest, each counter sees the events of its
/// whole lifetime.
class TransferCountScope {
public:
  explicit TransferCountScope(TransferCounter& counter);
  TransferCountScope();
  ~TransferCountScope();
  TransferCountScope(TransferCountScope&&) noexcept;
  TransferCountScope& operator=(TransferCountScope&&) = delete;
  TransferCountScope(const TransferCountScope&) = delete;
  TransferCountScope& operator=(const TransferCountScope&) = delete;

  /// The counter the scope counts into.
  TransferCounter& counter() noexcept { return *counter_; }
  const TransferCounter& counter() const noexcept { return *counter_; }

  /// Stops counting before the scope ends; the counter keeps its events.
  void stop() noexcept;

private:
  std::unique_ptr<TransferCounter> owned_;
  TransferCounter* counter_ = nullptr;
  std::shared_ptr<cunumpy::Impl::CounterState> attached_;
};

/// Counts the host/device copies, markers and syncs of every thread, whoever
/// makes them (cunumpy, Kokkos::deep_copy, DualView, Kokkos Kernels), until
/// the returned scope ends:
///
///     auto counted = cunumpy::profiling::count_transfers();
///     step(state, dt);
///     std::cout << counted.counter().report();
[[nodiscard]] TransferCountScope count_transfers();

/// Adds the events until the returned scope ends to `counter`, e.g. to
/// accumulate over several calls. `counter` must outlive the scope.
[[nodiscard]] TransferCountScope count_transfers(TransferCounter& counter);

/// Stack frames captured per event that no cunumpy call explains (a raw
/// Kokkos::deep_copy), to find its file and line; 0 turns capture off and
/// such events get the unknown site. Default 32, or CUNUMPY_BACKTRACE.
void set_backtrace_depth(int depth);
int backtrace_depth();

} // namespace profiling
} // namespace cunumpy

#endif
