#ifndef CUNUMPY_SRC_RECORDER_EVENT_SOURCE_HPP
#define CUNUMPY_SRC_RECORDER_EVENT_SOURCE_HPP

// A source of events besides Kokkos Tools whose events reach the recorder
// after the calls that made them: CUDA's own record of the process
// (src/core/cuda) is one, its events waiting for the activity records CUDA
// hands over later. A source has a name (Recorder::register_source), which
// its events carry (RawEvent::origin) and reports show (Event::source, a
// `[name]` marker); a new kind of source needs no change to a public header.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/lock.hpp"
#include "recorder/records.hpp"

namespace cunumpy::Impl {

/// The recorder asks every source it was given (Recorder::add_source) for
/// what it holds before every read of a sink, and gives the sinks what is
/// ready under the same lock; those events are marked RawEvent::late, and
/// sinks that depend on when an event happened place them by their time.
class EventSource {
public:
  virtual ~EventSource() = default;
  /// The name its events carry: "cuda".
  virtual std::string_view name() const noexcept = 0;
  /// Before a read, an attach or a detach, without the recorder's mutex:
  /// fetch what the source holds, so that the read that follows gives the
  /// sinks every event made before it.
  virtual void collect() noexcept {}
  /// With the mutex (Recorder::catch_up): the events ready, oldest first.
  virtual void drain(std::vector<RawEvent>& out,
                     const RecorderLock& lock) noexcept = 0;
  /// No late event still to come starts before this time (seconds on the
  /// recorder's clock).
  virtual double horizon() const noexcept = 0;
  /// The event of a Kokkos copy the source describes, with the wait of a
  /// scalar read: it waits for the source's record instead of being
  /// delivered. Called only for a copy whose InFlightCopy::held_token the
  /// source set (`token`), as `forget` is: a source that sets none needs
  /// neither.
  virtual void hold(std::uint32_t /*token*/, const RawEvent& /*event*/,
                    const RawEvent* /*wait*/) noexcept {}
  /// The Kokkos copy of `token` made no event (its inner copies did).
  virtual void forget(std::uint32_t /*token*/) noexcept {}
  /// Why the migrations of the program's managed memory cannot be seen
  /// (CUDA gives no unified-memory counters here), or "" when they can or
  /// the source does not know of them.
  virtual std::string migrations_unseen() const { return {}; }
  /// The fork handler's, after the recorder's mutex: hold the source's own
  /// lock, so that a child never inherits it held; release it.
  virtual void lock_for_fork() noexcept {}
  virtual void unlock_after_fork() noexcept {}
};

/// A recorder's sources: their names, by id (RawEvent::origin), and the
/// sources of late events added to it, asked at every read. "kokkos"
/// (kokkos_source) is registered when it is made. Thread-safe: names and
/// sources are written once, under a mutex, and read without a lock.
class EventSources {
public:
  /// At most `max` - 1 names ("kokkos" included), of at most `max_name`
  /// characters; any other name gets `other`, whose name is "other".
  static constexpr std::size_t max = 16;
  static constexpr std::uint8_t other = max - 1;
  static constexpr std::size_t max_name = 31;

  EventSources();
  ~EventSources();
  EventSources(const EventSources&) = delete;
  EventSources& operator=(const EventSources&) = delete;

  /// The id of the source named `name`, registered the first time: the
  /// same id for the same name, from any thread.
  std::uint8_t register_name(std::string_view name) noexcept;
  /// The name of `id`: "kokkos", "cuda"; "other" for an id never given.
  std::string_view name(std::uint8_t id) const noexcept;
  /// `source` feeds the recorder from now on, under its name's id, and is
  /// asked for its late events at every read; never removed. False when
  /// another source has that id already (then it is not asked).
  bool add(EventSource& source) noexcept;
  /// Whether a source was added: then Kokkos' allocations are followed and
  /// the main thread's regions kept over time, for its late events. Read
  /// by every allocation event: one word, in the recorder's hot lines.
  bool any() const noexcept {
    return mask_.load(std::memory_order_relaxed) != 0;
  }
  /// The source added under `id`, or null.
  EventSource* added(std::uint8_t id) const noexcept {
    return id < max ? table_->added[id].load(std::memory_order_acquire)
                    : nullptr;
  }
  /// `visit(source)` for every source added, in the order of their ids.
  template <class Visit> void for_each(Visit visit) const {
    const std::uint32_t mask = mask_.load(std::memory_order_acquire);
    for (std::uint32_t id = 0; mask >> id != 0; ++id)
      if ((mask >> id & 1u) != 0)
        visit(*added(static_cast<std::uint8_t>(id)));
  }
  /// No late event still to come starts before this time: the earliest
  /// over the sources (+infinity without one).
  double horizon() const noexcept;
  /// Asks every source for what it holds (EventSource::collect).
  void collect() noexcept;
  /// The state of CUDA's record for this recorder (the CUDA view,
  /// src/core/cuda, a layer above): made by `make` at its first use, owned
  /// here. A source once it is added.
  EventSource& cuda_state(std::unique_ptr<EventSource> (*make)());

  /// The fork handler's: the names' mutex, then every source's own lock in
  /// the order of their ids; released in the reverse order.
  void lock_for_fork() noexcept;
  void unlock_after_fork() noexcept;

private:
  struct Table {
    std::mutex mutex;
    std::array<std::array<char, max_name + 1>, max> names{};
    std::atomic<std::uint32_t> count{0}; ///< names written before counted
    std::array<std::atomic<EventSource*>, max> added{};
    std::atomic<EventSource*> cuda_state{nullptr};
    std::unique_ptr<EventSource> cuda_state_owner; ///< with the mutex
    std::uint32_t forked = 0; ///< the mask the fork handler locked
  };
  std::atomic<std::uint32_t> mask_{0}; ///< bit: an added id
  std::unique_ptr<Table> table_;
};

} // namespace cunumpy::Impl

#endif
