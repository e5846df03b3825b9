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
/// A steady_clock reading and the counter's value at the same moment: of
/// four tries of (counter, steady_clock, counter), the one whose two
/// counter reads are closest, and the middle of them. A thread preempted
/// between two plain reads (tens of microseconds on a loaded machine, a
/// percent of the first millisecond) would skew the rate for the whole
/// run; a try that was preempted is the widest, and is not taken.
struct Moment {
  std::chrono::steady_clock::time_point steady;
  std::uint64_t tsc = 0;
};

Moment read_moment() {
  Moment best;
  std::uint64_t best_width = ~std::uint64_t(0);
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t before = __rdtsc();
    const auto steady = std::chrono::steady_clock::now();
    const std::uint64_t after = __rdtsc();
    if (after >= before && after - before < best_width) {
      best_width = after - before;
      best = {steady, before + (after - before) / 2};
    }
  }
  return best;
}
#endif

} // namespace

Clock::Clock() : epoch_(std::chrono::steady_clock::now()) {
#ifdef CUNUMPY_HAVE_TSC
  invariant_tsc_ = invariant_tsc();
  if (invariant_tsc_) {
    const Moment start = read_moment();
    epoch_ = start.steady;
    tsc_start_ = start.tsc;
  }
#endif
}

void Clock::calibrate() noexcept {
#ifdef CUNUMPY_HAVE_TSC
  if (!invariant_tsc_ || calibrated_.load(std::memory_order_relaxed))
    return;
  if (std::chrono::steady_clock::now() - epoch_ < std::chrono::milliseconds(1))
    return; // not due: one read
  const Moment end = read_moment();
  const double seconds =
      std::chrono::duration<double>(end.steady - epoch_).count();
  // Each moment is known to within its counter reads, tens of nanoseconds:
  // over a millisecond, the rate is known to about 5e-5.
  if (end.tsc <= tsc_start_)
    return;
  // The rate of the two moments: at the end one the counter's time is
  // steady_clock's, and goes on from it.
  seconds_per_tick_ = seconds / static_cast<double>(end.tsc - tsc_start_);
  tsc_epoch_ = tsc_start_;
  calibrated_.store(true, std::memory_order_release);
#endif
}

} // namespace cunumpy::Impl
