#ifndef CUNUMPY_SRC_RECORDER_EVENT_SOURCE_HPP
#define CUNUMPY_SRC_RECORDER_EVENT_SOURCE_HPP

// A source of events besides Kokkos Tools whose events reach the recorder
// after the calls that made them: CUDA's own record of the process
// (src/core/cuda) is one, its events waiting for the activity records CUDA
// hands over later. A source has a name (Recorder::register_source), which
// its events carry (RawEvent::origin) and reports show (Event::source, a
// `[name]` marker); a new kind of source needs no change to a public header.

#include <cstdint>
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

} // namespace cunumpy::Impl

#endif
