#ifndef CUNUMPY_SRC_RECORDER_CLOCK_HPP
#define CUNUMPY_SRC_RECORDER_CLOCK_HPP

#include <atomic>
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
/// std::chrono::steady_clock. The counter's rate is measured against
/// steady_clock over the first millisecond or more of the run, without
/// waiting: until calibrate() completes it, steady_clock is read, and the
/// counter's times go on from the steady time of that moment.
class Clock {
public:
  Clock();

  double now() const noexcept {
#ifdef CUNUMPY_HAVE_TSC
    if (calibrated_.load(std::memory_order_acquire))
      return static_cast<double>(__rdtsc() - tsc_epoch_) * seconds_per_tick_;
#endif
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         epoch_)
        .count();
  }

  /// Completes the calibration once a millisecond has passed since the
  /// clock was made (the rate is then known to about 5e-5); cheap when done
  /// or not due. One caller at a time (the recorder calls it as it
  /// delivers, with its mutex held); now() may run meanwhile on any thread.
  void calibrate() noexcept;

  /// Whether the time-stamp counter is read now.
  bool uses_tsc() const noexcept {
    return calibrated_.load(std::memory_order_relaxed);
  }

private:
  // What now() reads first, then what calibrate() reads: 40 bytes.
  std::atomic<bool> calibrated_{false};
  bool invariant_tsc_ = false;
  std::uint64_t tsc_epoch_ = 0;
  double seconds_per_tick_ = 0.0;
  std::chrono::steady_clock::time_point epoch_;
  std::uint64_t tsc_start_ = 0;
};

} // namespace cunumpy::Impl

#endif
