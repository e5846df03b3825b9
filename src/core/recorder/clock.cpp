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
  if (invariant_tsc()) {
    // Calibrate against steady_clock over a quarter of a millisecond: a
    // clock read costs tens of nanoseconds, so the rate is known to about
    // 2e-4, and every process that loads cunumpy waits for it.
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = __rdtsc();
    auto t1 = t0;
    while (t1 - t0 < std::chrono::microseconds(250))
      t1 = std::chrono::steady_clock::now();
    const std::uint64_t c1 = __rdtsc();
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    if (c1 > c0) {
      seconds_per_tick_ = seconds / static_cast<double>(c1 - c0);
      tsc_epoch_ = c0 - static_cast<std::uint64_t>(
                            std::chrono::duration<double>(t0 - epoch_).count() /
                            seconds_per_tick_);
      use_tsc_ = true;
    }
  }
#endif
}

} // namespace cunumpy::Impl
