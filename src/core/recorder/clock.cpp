#include "recorder/clock.hpp"

#include <fstream>
#include <string>

namespace cunumpy::Impl {
namespace {

bool invariant_tsc() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
  return false;
}

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
