#include "recorder/clock.hpp"

#ifdef CUNUMPY_HAVE_TSC
#include <cpuid.h>
#endif

namespace cunumpy::Impl {
namespace {

#ifdef CUNUMPY_HAVE_TSC
/// Whether the time-stamp counter ticks at one rate in every power state
/// (CPUID 8000_0007h, EDX bit 8: Linux's constant_tsc and nonstop_tsc).
/// Asked of the processor: /proc/cpuinfo is made a core at a time (44 us
/// for the 2 cores of the development machine), so it would cost
/// milliseconds on a node of a hundred cores, in every process.
bool invariant_tsc() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) != 0 &&
         (edx & (1u << 8)) != 0;
}
#endif

} // namespace

Clock::Clock() : epoch_(std::chrono::steady_clock::now()) {
#ifdef CUNUMPY_HAVE_TSC
  invariant_tsc_ = invariant_tsc();
  tsc_start_ = __rdtsc();
#endif
}

void Clock::calibrate() noexcept {
#ifdef CUNUMPY_HAVE_TSC
  if (!invariant_tsc_ || calibrated_.load(std::memory_order_relaxed))
    return;
  const auto t1 = std::chrono::steady_clock::now();
  const std::uint64_t c1 = __rdtsc();
  const double seconds = std::chrono::duration<double>(t1 - epoch_).count();
  // The reads around epoch_ and t1 take tens of nanoseconds: over a
  // millisecond, the rate is known to about 5e-5.
  if (seconds < 1e-3 || c1 <= tsc_start_)
    return;
  // The rate of the two readings: at t1 the counter's time is
  // steady_clock's, and goes on from it.
  seconds_per_tick_ = seconds / static_cast<double>(c1 - tsc_start_);
  tsc_epoch_ = tsc_start_;
  calibrated_.store(true, std::memory_order_release);
#endif
}

} // namespace cunumpy::Impl
