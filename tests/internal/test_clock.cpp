// The recorder's clock: steady_clock until the time-stamp counter's rate is
// measured over the first millisecond, without making anyone wait for it,
// then the counter, continuing from steady_clock's time.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <thread>

#include "recorder/clock.hpp"

namespace {

using cunumpy::Impl::Clock;
using std::chrono::steady_clock;

double since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

void spin(double seconds) {
  const auto start = steady_clock::now();
  while (since(start) < seconds) {
  }
}

TEST(Clock, MadeWithoutWaitingForItsCalibration) {
  // The fastest of five: a preemption can slow one, not all.
  double fastest = 1.0;
  for (int i = 0; i < 5; ++i) {
    const auto start = steady_clock::now();
    const Clock clock;
    fastest = std::min(fastest, since(start));
    EXPECT_FALSE(clock.uses_tsc());
    EXPECT_GE(clock.now(), 0.0);
  }
  EXPECT_LT(fastest, 200e-6) << "no busy wait when it is made";
}

TEST(Clock, CalibratedAfterAMillisecondAndContinuous) {
  Clock clock;
  clock.calibrate(); // too early: not yet
  EXPECT_FALSE(clock.uses_tsc());
#ifdef CUNUMPY_HAVE_TSC
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const double before = clock.now();
  clock.calibrate();
  const double after = clock.now();
  if (!clock.uses_tsc())
    GTEST_SKIP() << "no invariant time-stamp counter on this machine";
  EXPECT_GE(after, before) << "no step back at the switch";
  EXPECT_LT(after - before, 1e-3) << "no step forward either";
  // The counter's seconds are steady_clock's: a spin of 20 ms, timed by
  // both. A preemption between the two clocks' reads (not the clock's
  // doing) can spoil one try, hardly three: the closest of three.
  double error = 1.0;
  for (int i = 0; i < 3; ++i) {
    const auto start = steady_clock::now();
    const double t0 = clock.now();
    spin(20e-3);
    const double measured = clock.now() - t0;
    const double steady = since(start);
    error = std::min(error, std::abs(measured - steady) / steady);
  }
  EXPECT_LT(error, 0.01) << "the counter's rate is steady_clock's";
  // A later call changes nothing.
  const double rate_check = clock.now();
  clock.calibrate();
  EXPECT_GE(clock.now(), rate_check);
#endif
}

} // namespace
