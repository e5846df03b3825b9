#ifndef CUNUMPY_SRC_RECORDER_CLOCK_HPP
#define CUNUMPY_SRC_RECORDER_CLOCK_HPP

#include <chrono>
#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CUNUMPY_HAVE_TSC 1
#endif

namespace cunumpy::Impl {

/// Seconds since the clock was made, read from the time-stamp counter where
/// it ticks at a constant rate (about 8 ns a read instead of 20 for
/// clock_gettime: every copy is timed twice), else from
/// std::chrono::steady_clock. Calibrated once, when it is made.
class Clock {
public:
  Clock();

  double now() const noexcept {
#ifdef CUNUMPY_HAVE_TSC
    if (use_tsc_)
      return static_cast<double>(__rdtsc() - tsc_epoch_) * seconds_per_tick_;
#endif
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         epoch_)
        .count();
  }

  /// Whether the time-stamp counter is used.
  bool uses_tsc() const noexcept {
    return use_tsc_;
  }

private:
  std::chrono::steady_clock::time_point epoch_;
  bool use_tsc_ = false;
  std::uint64_t tsc_epoch_ = 0;
  double seconds_per_tick_ = 0.0;
};

} // namespace cunumpy::Impl

#endif
