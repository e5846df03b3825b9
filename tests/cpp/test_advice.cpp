// Advice: each rule on a program that has its pattern (it fires, at the
// right line, with the estimate its formula gives for the measured times)
// and on the corrected program (it does not). The events are synthetic
// Kokkos Tools events with the space names of a CUDA build, made through
// Kokkos' own entry points (synthetic_events.hpp), with the host waiting a
// known time inside each copy or fence: they run on every Kokkos. Real
// copies on the fake device (Kokkos 3) check what synthetic events cannot:
// Kokkos' allocation callbacks, DualView and the hashed contents of copies.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <Kokkos_DualView.hpp>

#include <cunumpy/testing/gtest.hpp>

#include "synthetic_events.hpp"
#include "test_helpers.hpp"

namespace {

namespace synthetic = cunumpy_tests::synthetic;
using cunumpy_tests::contains;
using cunumpy_tests::site;
using synthetic::ExecutionSpace;
using synthetic::Region;

using cunumpy::EventKind;
using cunumpy::profiling::AdviceOptions;
using cunumpy::profiling::AdviceRecording;
using cunumpy::profiling::AdviceRule;
using cunumpy::profiling::count_transfers;
using cunumpy::profiling::Finding;
using cunumpy::profiling::Limits;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using cunumpy::profiling::TransferCounter;

/// A counter and budget options that record what advice() needs (counters
/// and budgets record nothing for it by default).
TransferCounter advised() {
  return TransferCounter(TransferCounter::default_max_events,
                         AdviceRecording::on);
}
cunumpy::profiling::BudgetOptions advised_budget(bool started = true) {
  cunumpy::profiling::BudgetOptions options;
  options.started = started;
  options.advice = AdviceRecording::on;
  return options;
}

/// Waits `seconds` on the host, spinning: the measured time of the copy or
/// fence around it.
void busy_wait(double seconds) {
  const auto end =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

/// An address the events carry, never read (contents are not hashed in
/// these tests): `index` * 64 MiB into a range no allocation uses.
const void* address(int index) {
  return reinterpret_cast<const void*>(std::uintptr_t(0x7e0000000000) +
                                       std::uintptr_t(index) * (64u << 20));
}

/// The findings of `rule`.
std::vector<Finding> of_rule(const std::vector<Finding>& findings,
                             AdviceRule rule) {
  std::vector<Finding> result;
  for (const Finding& finding : findings)
    if (finding.rule == rule)
      result.push_back(finding);
  return result;
}

/// The findings, printed with the test's name when CUNUMPY_TEST_SHOW_ADVICE
/// is set (docs/advice.md shows them):
///   CUNUMPY_TEST_SHOW_ADVICE=1 build/tests/cunumpy_tests
///   --gtest_filter='Advice*'
std::vector<Finding> shown(std::vector<Finding> findings) {
  if (std::getenv("CUNUMPY_TEST_SHOW_ADVICE") == nullptr)
    return findings;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  for (const Finding& finding : findings)
    std::printf("%s.%s: %s\n", test->test_suite_name(), test->name(),
                finding.str().c_str());
  return findings;
}

std::string all_text(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& finding : findings)
    text += finding.str() + "\n";
  return text.empty() ? "(no finding)" : text;
}

/// The events of `counter` of `kind` made at `line` of this file.
std::vector<cunumpy::Event> events_at(const TransferCounter& counter, int line,
                                      EventKind kind) {
  std::vector<cunumpy::Event> result;
  for (const cunumpy::Event& event : counter.events())
    if (event.site.line == line && event.kind == kind &&
        event.site.file == __FILE__)
      result.push_back(event);
  return result;
}

/// The time and the bytes of `events`, and the best bandwidth of one.
double seconds_of(const std::vector<cunumpy::Event>& events) {
  double sum = 0.0;
  for (const auto& event : events)
    sum += event.duration;
  return sum;
}
double best_bandwidth(const std::vector<cunumpy::Event>& events) {
  double best = 0.0;
  for (const auto& event : events)
    best = std::max(best, static_cast<double>(event.nbytes) / event.duration);
  return best;
}

/// Two estimates made of the same measured times.
::testing::AssertionResult same_estimate(double value, double expected) {
  if (std::abs(value - expected) <= 1e-9 + 1e-9 * std::abs(expected))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << value << " is not the " << expected << " the measured times give";
}

} // namespace

/// A blocking deep copy of `nbytes` into `dst` in `dst_space` from `src` in
/// `src_space` (the fence of a blocking deep_copy inside it, as Kokkos 4
/// makes it), the host waiting `seconds` in it; its call site is the line
/// of the macro.
#define ADVICE_COPY(dst_space, dst, src_space, src, nbytes, seconds)           \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(                                              \
        Kokkos::Tools::make_space_handle(dst_space), "dst", dst,               \
        Kokkos::Tools::make_space_handle(src_space), "src", src, (nbytes));    \
    busy_wait(seconds);                                                        \
    synthetic::fence(synthetic::post_copy_fence);                              \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

/// deep_copy(exec, dst, src): a copy without the fence (not blocking on
/// Kokkos 4; Kokkos 3 reports no fences, every raw copy blocks there).
#define ADVICE_ASYNC_COPY(dst_space, dst, src_space, src, nbytes)              \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(                                              \
        Kokkos::Tools::make_space_handle(dst_space), "dst", dst,               \
        Kokkos::Tools::make_space_handle(src_space), "src", src, (nbytes));    \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

/// deep_copy(host_scalar, device_view): 8 bytes into the label "Scalar".
#define ADVICE_SCALAR_READ(seconds)                                            \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(Kokkos::Tools::make_space_handle("Host"),     \
                                 "Scalar", address(40),                        \
                                 Kokkos::Tools::make_space_handle("Cuda"),     \
                                 "norm", address(41), sizeof(double));         \
    busy_wait(seconds);                                                        \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

/// A fence of a Cuda instance named `name`, `seconds` long.
#define ADVICE_FENCE(name, seconds)                                            \
  do {                                                                         \
    std::uint64_t advice_handle_ = 0;                                          \
    Kokkos::Tools::beginFence(                                                 \
        name, synthetic::instance_id(ExecutionSpace::cuda), &advice_handle_);  \
    busy_wait(seconds);                                                        \
    Kokkos::Tools::endFence(advice_handle_);                                   \
  } while (false)

/// DualView::sync_device() (`to_device`) or sync_host() of the DualView
/// `label` whose data are `device` and `host`: the copy, then the event.
#define ADVICE_DUAL_VIEW_SYNC(label, to_device, device, host, nbytes, seconds) \
  do {                                                                         \
    ADVICE_COPY((to_device) ? "Cuda" : "Host", (to_device) ? device : host,    \
                (to_device) ? "Host" : "Cuda", (to_device) ? host : device,    \
                nbytes, seconds);                                              \
    Kokkos::Tools::syncDualView(label, (to_device) ? device : host,            \
                                to_device);                                    \
  } while (false)

// Rule 1: copies from or to pageable memory, against page-locked ones.

TEST(AdvicePageable, LargeCopiesFromPageableMemoryAreComparedWithPinnedOnes) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  constexpr std::uint64_t mib = 1u << 20;
  int pinned_line = 0;
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    // 1 MiB through pinned memory in 100 us: 10.5 GB/s.
    pinned_line = __LINE__ + 1;
    ADVICE_COPY("Cuda", address(0), "CudaHostPinned", address(1), mib, 100e-6);
    line = __LINE__ + 1; // the same from pageable memory in 400 us
    ADVICE_COPY("Cuda", address(2), "Host", address(3), mib, 400e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  const auto pageable = of_rule(findings, AdviceRule::pageable_memory);
  ASSERT_EQ(pageable.size(), 1u) << all_text(findings);
  const Finding& finding = pageable[0];
  ASSERT_EQ(finding.sites.size(), 1u);
  EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(finding.sites[0].kind, EventKind::to_device);
  EXPECT_EQ(finding.region, "step");
  EXPECT_EQ(finding.count, 12u);
  EXPECT_EQ(finding.calls, 12u);
  EXPECT_EQ(finding.region_calls, 12u);
  EXPECT_EQ(finding.bytes, 12 * mib);
  // Their time less the same bytes at the best pinned copy's bandwidth:
  // about 12 x (400 - 100) us.
  const auto copies = events_at(counter, line, EventKind::to_device);
  const double pinned =
      best_bandwidth(events_at(counter, pinned_line, EventKind::to_device));
  ASSERT_EQ(copies.size(), 12u);
  ASSERT_TRUE(finding.saving_seconds) << finding.str();
  EXPECT_TRUE(same_estimate(*finding.saving_seconds,
                            seconds_of(copies) - 12.0 * mib / pinned));
  EXPECT_TRUE(
      same_estimate(*finding.saving_per_call, *finding.saving_seconds / 12));
  EXPECT_TRUE(same_estimate(finding.seconds, seconds_of(copies)));
  EXPECT_GE(*finding.saving_seconds, 12 * 200e-6);
  EXPECT_TRUE(contains(finding.evidence, "pageable memory (Host)"));
  EXPECT_TRUE(contains(finding.estimate, "the best page-locked copy"));
  EXPECT_TRUE(contains(finding.fix, "HostStaging"));
  EXPECT_TRUE(contains(finding.str(), "[pageable_memory] in region 'step'"));
  // One line a reader takes in at once (the site's path aside).
  EXPECT_LT(finding.str().size() - finding.sites[0].site.str().size(), 300u)
      << finding.str();
}

TEST(AdvicePageable, CopiesThroughPinnedMemoryGiveNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    ADVICE_COPY("Cuda", address(0), "CudaHostPinned", address(1), 1u << 20,
                100e-6);
    ADVICE_COPY("Cuda", address(2), "CudaHostPinned", address(3), 1u << 20,
                400e-6);
  }
  counted.stop();
  EXPECT_TRUE(counter.advice().empty()) << all_text(counter.advice());
}

TEST(AdvicePageable, WithoutAPinnedCopyTheSavingIsNotEstimated) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    line = __LINE__ + 1;
    ADVICE_COPY("Host", address(2), "Cuda", address(3), 1u << 20, 200e-6);
  }
  counted.stop();
  auto pageable = of_rule(shown(counter.advice()), AdviceRule::pageable_memory);
  ASSERT_EQ(pageable.size(), 1u);
  EXPECT_FALSE(pageable[0].saving_seconds);
  EXPECT_FALSE(pageable[0].saving_per_call);
  EXPECT_TRUE(contains(pageable[0].estimate,
                       "no blocking page-locked copy of at least 256.0 KiB"));
  EXPECT_TRUE(contains(pageable[0].str(), "saving not estimated"));
  // With the machine's pinned bandwidth given: 1 MiB at 10.5 GB/s is 100 us.
  AdviceOptions options;
  options.pinned_bandwidth = 1048576.0 / 100e-6;
  pageable =
      of_rule(shown(counter.advice(options)), AdviceRule::pageable_memory);
  ASSERT_EQ(pageable.size(), 1u);
  ASSERT_TRUE(pageable[0].saving_seconds);
  EXPECT_TRUE(same_estimate(
      *pageable[0].saving_seconds,
      seconds_of(events_at(counter, line, EventKind::to_host)) - 12 * 100e-6));
  EXPECT_TRUE(contains(pageable[0].estimate, "as set (pinned_bandwidth"));
  // Below the size threshold, copies are latency-bound: no finding.
  options.pageable_min_bytes = 2u << 20;
  EXPECT_TRUE(
      of_rule(counter.advice(options), AdviceRule::pageable_memory).empty());
}

struct SpaceNames {
  const char* host;
  const char* device;
  bool pageable;
};

TEST(AdvicePageable, PageLockedSpacesAreKnownByTheirNames) {
  const SpaceNames pairs[] = {
      {"Host", "Cuda", true},
      {"Host", "CudaUVM", true},
      {"Host", "HIP", true},
      {"Host", "SYCLDeviceUSM", true},
      {"HBW", "Cuda", true},
      {"CudaHostPinned", "Cuda", false},
      {"HIPHostPinned", "HIP", false},
      {"SharedHostPinned", "Cuda", false},
      {"SYCLHostUSM", "SYCLDeviceUSM", false},
      // A host space cunumpy does not know: it cannot tell.
      {"MyHostSpace", "Cuda", false},
      // A fake device has no page-locked memory to measure against.
      {"Host", "FakeDevice", false},
  };
  AdviceOptions options;
  options.pinned_bandwidth = 1e9; // 1 MiB in about 1 ms
  for (const SpaceNames& pair : pairs) {
    SCOPED_TRACE(std::string(pair.host) + " <-> " + pair.device);
    TransferCounter counter = advised();
    {
      auto counted = count_transfers(counter);
      for (int call = 0; call < 3; ++call) {
        ADVICE_COPY(pair.device, address(0), pair.host, address(1), 1u << 20,
                    2e-3);
        ADVICE_COPY(pair.host, address(2), pair.device, address(3), 1u << 20,
                    2e-3);
      }
    }
    const auto pageable =
        of_rule(counter.advice(options), AdviceRule::pageable_memory);
    EXPECT_EQ(pageable.size(), pair.pageable ? 2u : 0u)
        << all_text(counter.advice(options));
  }
}

// Rule 2: round trips.

TEST(AdviceRoundTrips, TheSameAllocationThereAndBackInEveryCall) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int up = 0;
  int down = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    up = __LINE__ + 1;
    ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 200e-6);
    down = __LINE__ + 1;
    ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 200e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  const Finding& finding = findings[0];
  EXPECT_EQ(finding.rule, AdviceRule::round_trip);
  EXPECT_EQ(finding.name(), "round_trip");
  ASSERT_EQ(finding.sites.size(), 2u);
  EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, up));
  EXPECT_EQ(finding.sites[0].kind, EventKind::to_device);
  EXPECT_EQ(finding.sites[1].site.str(), site(__FILE__, down));
  EXPECT_EQ(finding.sites[1].kind, EventKind::to_host);
  EXPECT_EQ(finding.region, "step");
  EXPECT_EQ(finding.calls, 12u);
  EXPECT_EQ(finding.count, 24u);
  EXPECT_EQ(finding.bytes, 24u * 800000);
  // Every pair but one: about 11 x 400 us.
  const double pairs =
      seconds_of(events_at(counter, up, EventKind::to_device)) +
      seconds_of(events_at(counter, down, EventKind::to_host));
  ASSERT_TRUE(finding.saving_seconds);
  EXPECT_TRUE(same_estimate(*finding.saving_seconds, pairs * 11 / 12));
  EXPECT_TRUE(same_estimate(finding.seconds, pairs));
  EXPECT_GE(*finding.saving_seconds, 11 * 400e-6);
  EXPECT_TRUE(contains(finding.evidence, "went to the device and back in 12 "
                                         "of 12 calls"));
  EXPECT_TRUE(contains(finding.fix, "convert once before the loop"));
  // Its copies are not reported again as pageable ones.
  EXPECT_TRUE(of_rule(findings, AdviceRule::pageable_memory).empty());
}

TEST(AdviceRoundTrips, ARecursiveRegionIsTheCallOfTheRegionItRepeats) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    Region library("library");
    Region inner("step");
    ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 200e-6);
    ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 200e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  EXPECT_EQ(findings[0].rule, AdviceRule::round_trip);
  EXPECT_EQ(findings[0].region, "step");
  EXPECT_EQ(findings[0].calls, 12u);
  EXPECT_EQ(findings[0].region_calls, 12u);
}

TEST(AdviceRoundTrips, BackAndUpOutsideEveryRegionCountsRepetitions) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int down = 0;
  int up = 0;
  for (int call = 0; call < 15; ++call) {
    down = __LINE__ + 1;
    ADVICE_COPY("Host", address(5), "Cuda", address(6), 4096, 100e-6);
    up = __LINE__ + 1;
    ADVICE_COPY("Cuda", address(6), "Host", address(5), 4096, 100e-6);
  }
  counted.stop();
  const auto trips = of_rule(shown(counter.advice()), AdviceRule::round_trip);
  ASSERT_EQ(trips.size(), 1u) << all_text(counter.advice());
  EXPECT_EQ(trips[0].region, "");
  EXPECT_EQ(trips[0].calls, 15u);
  EXPECT_EQ(trips[0].sites[0].site.str(), site(__FILE__, down));
  EXPECT_EQ(trips[0].sites[0].kind, EventKind::to_host);
  EXPECT_EQ(trips[0].sites[1].site.str(), site(__FILE__, up));
  EXPECT_TRUE(contains(trips[0].str(), "outside every region (15 times)"));
}

TEST(AdviceRoundTrips, CopiesAtTheBoundariesGiveNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 200e-6);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    ADVICE_FENCE("step done", 10e-6);
  }
  ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 200e-6);
  counted.stop();
  EXPECT_TRUE(of_rule(counter.advice(), AdviceRule::round_trip).empty())
      << all_text(counter.advice());
  // A pattern of fewer calls than min_calls is not one either.
  TransferCounter few = advised();
  auto counted_few = count_transfers(few);
  for (int call = 0; call < 5; ++call) {
    Region step("step");
    ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 300e-6);
    ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 300e-6);
  }
  counted_few.stop();
  EXPECT_TRUE(of_rule(few.advice(), AdviceRule::round_trip).empty());
  AdviceOptions options;
  options.min_calls = 5;
  EXPECT_EQ(of_rule(few.advice(options), AdviceRule::round_trip).size(), 1u);
}

// Rule 3: blocking small reads in a loop.

TEST(AdviceBlockingReads, AScalarReadInEveryIterationWaitsEveryTime) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int iteration = 0; iteration < 20; ++iteration) {
    Region iterate("iterate");
    line = __LINE__ + 1;
    ADVICE_SCALAR_READ(100e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  const Finding& finding = findings[0];
  EXPECT_EQ(finding.rule, AdviceRule::blocking_small_read);
  EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(finding.region, "iterate");
  EXPECT_EQ(finding.calls, 20u);
  EXPECT_EQ(finding.count, 20u);
  ASSERT_TRUE(finding.saving_seconds);
  EXPECT_TRUE(
      same_estimate(*finding.saving_seconds,
                    seconds_of(events_at(counter, line, EventKind::to_host))));
  EXPECT_GE(*finding.saving_seconds, 20 * 100e-6);
  EXPECT_TRUE(contains(finding.fix, "to_host_async"));
  // The scalar read's wait is the read's: no implicit_sync besides.
  EXPECT_TRUE(of_rule(findings, AdviceRule::implicit_sync).empty());
}

TEST(AdviceBlockingReads, AReadTheHostDoesNotWaitForGivesNoFinding) {
  if constexpr (!synthetic::kokkos_reports_fences)
    GTEST_SKIP() << "Kokkos 3 reports no fences: every raw copy blocks "
                    "there (the fake device's test covers to_host_async)";
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int iteration = 0; iteration < 20; ++iteration) {
    Region iterate("iterate");
    ADVICE_ASYNC_COPY("Host", address(40), "Cuda", address(41), 8);
    busy_wait(100e-6);
  }
  counted.stop();
  EXPECT_TRUE(counter.advice().empty()) << all_text(counter.advice());
}

// Rule 5: many small copies from one line.

TEST(AdviceSmallCopies, ManyLatencyBoundCopiesPerCallFromOneLine) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 3; ++call) {
    Region assemble("assemble");
    for (int value = 0; value < 16; ++value) {
      line = __LINE__ + 1;
      ADVICE_COPY("Cuda", address(value), "Host", address(20), 8, 50e-6);
    }
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  const Finding& finding = findings[0];
  EXPECT_EQ(finding.rule, AdviceRule::many_small_copies);
  EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(finding.region, "assemble");
  EXPECT_EQ(finding.count, 48u);
  EXPECT_EQ(finding.calls, 3u);
  // One copy per call instead of 16: 3 x 15 copies of the mean time saved.
  const double all = seconds_of(events_at(counter, line, EventKind::to_device));
  ASSERT_TRUE(finding.saving_seconds);
  EXPECT_TRUE(same_estimate(*finding.saving_seconds, all * 45 / 48));
  EXPECT_GE(*finding.saving_seconds, 45 * 50e-6);
  EXPECT_TRUE(contains(finding.evidence, "16 copies to the device of at most "
                                         "8 bytes per call"));
  EXPECT_TRUE(contains(finding.fix, "pack the values into one view"));
}

TEST(AdviceSmallCopies, OnePackedCopyPerCallGivesNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 3; ++call) {
    Region assemble("assemble");
    ADVICE_COPY("Cuda", address(0), "Host", address(20), 16 * 8, 50e-6);
  }
  counted.stop();
  EXPECT_TRUE(counter.advice().empty()) << all_text(counter.advice());
}

// Rule 4: fresh host buffers (Kokkos' allocation callbacks tell).

TEST(AdviceFreshBuffers, ACopyIntoABufferAllocatedForItInEveryCall) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  constexpr std::uint64_t size = 8u << 20;
  const auto host = Kokkos::Tools::make_space_handle("Host");
  // The same bytes into a buffer kept across calls: the reference (its
  // first copy went into fresh memory too).
  Kokkos::Profiling::allocateData(host, "kept", address(30), size);
  for (int copy = 0; copy < 2; ++copy)
    ADVICE_COPY("Host", address(30), "Cuda", address(31), size, 250e-6);
  const int kept_line = __LINE__ - 1;
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Region output("output");
    Kokkos::Profiling::allocateData(host, "snapshot", address(1), size);
    line = __LINE__ + 1; // Kokkos copies into the data, after the header
    ADVICE_COPY("Host", static_cast<const char*>(address(1)) + 128, "Cuda",
                address(31), size, 4e-3);
    Kokkos::Profiling::deallocateData(host, "snapshot", address(1), size);
  }
  counted.stop();
  // Times far apart, so that a preemption of a few milliseconds on a loaded
  // machine changes no finding: the kept buffer's 0.5 ms stay below the
  // 3 ms a finding must weigh, and the fresh copies' 48 ms above it.
  AdviceOptions options;
  options.min_saving_seconds = 3e-3;
  const auto findings = shown(counter.advice(options));
  const auto fresh = of_rule(findings, AdviceRule::fresh_host_buffer);
  ASSERT_EQ(fresh.size(), 1u) << all_text(findings);
  EXPECT_EQ(fresh[0].sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(fresh[0].region, "output");
  EXPECT_EQ(fresh[0].count, 12u);
  // At the bandwidth of the second copy into the kept buffer: about
  // 12 x (4 ms - 0.25 ms).
  const auto kept = events_at(counter, kept_line, EventKind::to_host);
  ASSERT_EQ(kept.size(), 2u);
  ASSERT_TRUE(fresh[0].saving_seconds);
  EXPECT_TRUE(
      same_estimate(*fresh[0].saving_seconds,
                    seconds_of(events_at(counter, line, EventKind::to_host)) -
                        12.0 * size / (size / kept[1].duration)));
  EXPECT_GE(*fresh[0].saving_seconds, 12 * 0.5e-3);
  EXPECT_TRUE(contains(fresh[0].estimate, "reused buffer"));
  EXPECT_TRUE(contains(fresh[0].fix, "HostStaging"));
  // Reported once: not also as a pageable copy. (The kept buffer's two
  // copies may be one, if a loaded machine stretched their 0.25 ms sleeps
  // past the 3 ms a finding must weigh.)
  for (const auto& pageable : of_rule(findings, AdviceRule::pageable_memory))
    for (const auto& at : pageable.sites)
      EXPECT_NE(at.site.str(), site(__FILE__, line)) << all_text(findings);
}

TEST(AdviceFreshBuffers, ABufferAllocatedOnceGivesNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  constexpr std::uint64_t size = 8u << 20;
  const auto host = Kokkos::Tools::make_space_handle("Host");
  Kokkos::Profiling::allocateData(host, "staging", address(1), size);
  for (int call = 0; call < 12; ++call) {
    Region output("output");
    ADVICE_COPY("Host", static_cast<const char*>(address(1)) + 128, "Cuda",
                address(31), size, 1e-3);
  }
  Kokkos::Profiling::deallocateData(host, "staging", address(1), size);
  counted.stop();
  EXPECT_TRUE(of_rule(counter.advice(), AdviceRule::fresh_host_buffer).empty())
      << all_text(counter.advice());
}

// Rule 6: DualView ping-pong, and syncs that copy nothing.

TEST(AdviceDualViews, ADualViewSyncedBothWaysInEveryCall) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int to_device = 0;
  int to_host = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    to_device = __LINE__ + 1;
    ADVICE_DUAL_VIEW_SYNC("particles", true, address(2), address(3), 65536,
                          150e-6);
    to_host = __LINE__ + 1;
    ADVICE_DUAL_VIEW_SYNC("particles", false, address(2), address(3), 65536,
                          150e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  const Finding& finding = findings[0];
  EXPECT_EQ(finding.rule, AdviceRule::dual_view_ping_pong);
  EXPECT_EQ(finding.region, "step");
  EXPECT_EQ(finding.calls, 12u);
  ASSERT_EQ(finding.sites.size(), 2u);
  EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, to_device));
  EXPECT_EQ(finding.sites[1].site.str(), site(__FILE__, to_host));
  EXPECT_TRUE(contains(finding.evidence, "DualView 'particles' synced to the "
                                         "device and back in 12 of 12 calls"));
  ASSERT_TRUE(finding.saving_seconds);
  EXPECT_TRUE(same_estimate(
      *finding.saving_seconds,
      (seconds_of(events_at(counter, to_device, EventKind::to_device)) +
       seconds_of(events_at(counter, to_host, EventKind::to_host))) *
          11 / 12));
  EXPECT_GE(*finding.saving_seconds, 11 * 300e-6);
  EXPECT_TRUE(contains(finding.fix, "modify_device()"));
}

TEST(AdviceDualViews, SyncsAtTheBoundariesGiveNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  ADVICE_DUAL_VIEW_SYNC("particles", true, address(2), address(3), 65536,
                        150e-6);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    ADVICE_FENCE("step done", 10e-6);
  }
  ADVICE_DUAL_VIEW_SYNC("particles", false, address(2), address(3), 65536,
                        150e-6);
  counted.stop();
  EXPECT_TRUE(counter.advice().empty()) << all_text(counter.advice());
}

TEST(AdviceDualViews, ASyncThatCopiesNothingInEveryCall) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    line = __LINE__ + 1;
    Kokkos::Tools::syncDualView("mesh", address(7), true);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  EXPECT_EQ(findings[0].rule, AdviceRule::dual_view_idle_sync);
  EXPECT_EQ(findings[0].sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(findings[0].calls, 12u);
  // It saves no copy time, and is kept whatever the threshold.
  ASSERT_TRUE(findings[0].saving_seconds);
  EXPECT_EQ(*findings[0].saving_seconds, 0.0);
  EXPECT_TRUE(contains(findings[0].fix, "modify_host()"));
}

TEST(AdviceDualViews, ASyncThatCopiesWhatTheHostChangedGivesNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    Kokkos::Tools::modifyDualView("mesh", address(8), false);
    ADVICE_DUAL_VIEW_SYNC("mesh", true, address(7), address(8), 64, 10e-6);
  }
  counted.stop();
  EXPECT_TRUE(
      of_rule(counter.advice(), AdviceRule::dual_view_idle_sync).empty())
      << all_text(counter.advice());
}

// Rule 7: implicit syncs in a loop.

TEST(AdviceImplicitSyncs, AWaitKokkosMakesInEveryCall) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    line = __LINE__ + 1;
    ADVICE_FENCE("Kokkos::sort: fence after sorting", 200e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  EXPECT_EQ(findings[0].rule, AdviceRule::implicit_sync);
  EXPECT_EQ(findings[0].sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(findings[0].sites[0].kind, EventKind::sync);
  EXPECT_EQ(findings[0].calls, 12u);
  ASSERT_TRUE(findings[0].saving_seconds);
  EXPECT_TRUE(
      same_estimate(*findings[0].saving_seconds,
                    seconds_of(events_at(counter, line, EventKind::sync))));
  EXPECT_GE(*findings[0].saving_seconds, 12 * 200e-6);
  EXPECT_TRUE(contains(findings[0].fix, "Kokkos::deep_copy(exec, dst, src)"));
}

TEST(AdviceImplicitSyncs, AFenceTheProgramAskedForGivesNoFinding) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    ADVICE_FENCE("step done", 200e-6);
  }
  counted.stop();
  EXPECT_TRUE(counter.advice().empty()) << all_text(counter.advice());
}

// Rule 8: redundant copies, with the contents hashed.

TEST(AdviceContents, UploadsOfUnchangedDataAndDownloadsOfUnchangedResults) {
  TransferCounter counter(TransferCounter::default_max_events,
                          AdviceRecording::contents);
  std::vector<double> host(8192, 1.0);
  std::vector<double> result(8192, 2.0);
  constexpr std::uint64_t nbytes = 8192 * sizeof(double);
  auto counted = count_transfers(counter);
  int upload = 0;
  int download = 0;
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    upload = __LINE__ + 1; // the same host data into the same buffer
    ADVICE_COPY("Cuda", address(9), "Host", host.data(), nbytes, 200e-6);
    download = __LINE__ + 1; // and a result that never changes
    ADVICE_COPY("Host", result.data(), "Cuda", address(10), nbytes, 200e-6);
  }
  counted.stop();
  const auto redundant =
      of_rule(shown(counter.advice()), AdviceRule::redundant_copy);
  ASSERT_EQ(redundant.size(), 2u) << all_text(counter.advice());
  const Finding* up = nullptr;
  const Finding* down = nullptr;
  for (const Finding& finding : redundant)
    (finding.sites[0].kind == EventKind::to_device ? up : down) = &finding;
  ASSERT_TRUE(up != nullptr && down != nullptr);
  EXPECT_EQ(up->sites[0].site.str(), site(__FILE__, upload));
  EXPECT_EQ(up->count, 11u); // the first upload brought the data
  EXPECT_TRUE(contains(up->evidence, "11 of 12 copies to the device"));
  EXPECT_EQ(down->sites[0].site.str(), site(__FILE__, download));
  EXPECT_EQ(down->count, 12u); // the destination held those bytes already
  const auto uploads = events_at(counter, upload, EventKind::to_device);
  ASSERT_EQ(uploads.size(), 12u);
  ASSERT_TRUE(up->saving_seconds);
  EXPECT_TRUE(same_estimate(*up->saving_seconds,
                            seconds_of(uploads) - uploads[0].duration));
  EXPECT_TRUE(contains(down->fix, "copy back only when the device data "
                                  "changed"));
}

TEST(AdviceContents, CopiesOfChangedDataGiveNoFinding) {
  TransferCounter counter(TransferCounter::default_max_events,
                          AdviceRecording::contents);
  std::vector<double> host(8192, 1.0);
  // A value no call writes: with 2.0, call 2's copy left the destination
  // as it was, a true finding whenever the load made that copy slow.
  std::vector<double> result(8192, -1.0);
  constexpr std::uint64_t nbytes = 8192 * sizeof(double);
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    host[call] += 1.0; // the host changed the data
    ADVICE_COPY("Cuda", address(9), "Host", host.data(), nbytes, 200e-6);
    Kokkos::Tools::beginDeepCopy(
        Kokkos::Tools::make_space_handle("Host"), "dst", result.data(),
        Kokkos::Tools::make_space_handle("Cuda"), "src", address(10), nbytes);
    result[call] = call; // the copy brought new bytes
    busy_wait(200e-6);
    Kokkos::Tools::endDeepCopy();
  }
  counted.stop();
  EXPECT_TRUE(of_rule(counter.advice(), AdviceRule::redundant_copy).empty())
      << all_text(counter.advice());
}

TEST(AdviceContents, NotHashedUnlessAskedFor) {
  TransferCounter counter = advised();
  std::vector<double> host(8192, 1.0);
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call)
    ADVICE_COPY("Cuda", address(9), "Host", host.data(), 8192 * 8, 200e-6);
  counted.stop();
  EXPECT_TRUE(of_rule(counter.advice(), AdviceRule::redundant_copy).empty());
}

// Thresholds, order, budgets, and what advice never changes.

TEST(AdviceOptionsAndOrder, FindingsAreSortedByTheirEstimatedSaving) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    ADVICE_SCALAR_READ(100e-6); // 1.2 ms in all
    ADVICE_COPY("Cuda", address(0), "Host", address(1), 4096, 300e-6);
    ADVICE_COPY("Host", address(1), "Cuda", address(0), 4096, 300e-6);
  }
  counted.stop();
  const auto findings = shown(counter.advice());
  ASSERT_EQ(findings.size(), 2u) << all_text(findings);
  EXPECT_EQ(findings[0].rule, AdviceRule::round_trip); // about 6.6 ms
  EXPECT_EQ(findings[1].rule, AdviceRule::blocking_small_read);
  // A threshold between the two savings measured (a loaded machine
  // stretches the waits) leaves the larger one only.
  ASSERT_TRUE(findings[0].saving_seconds && findings[1].saving_seconds);
  ASSERT_GT(*findings[0].saving_seconds, *findings[1].saving_seconds);
  AdviceOptions options;
  options.min_saving_seconds =
      (*findings[0].saving_seconds + *findings[1].saving_seconds) / 2;
  const auto large = counter.advice(options);
  ASSERT_EQ(large.size(), 1u) << all_text(large);
  EXPECT_EQ(large[0].rule, AdviceRule::round_trip);
  options.min_saving_seconds = 0.0;
  options.min_calls = 13;
  EXPECT_TRUE(counter.advice(options).empty()) << all_text(counter.advice());
}

TEST(AdviceOptionsAndOrder, OffByDefault) {
  // Counting stays as cheap as it can be unless advice is asked for: a
  // default counter or budget records nothing for it and says so.
  auto counted = count_transfers();
  synthetic::copy("Cuda", "Host", 8);
  counted.stop();
  EXPECT_TRUE(contains(cunumpy_tests::message_of<std::logic_error>(
                           [&] { counted.counter().advice(); }),
                       "make it with AdviceRecording::on"));
  TransferBudget budget;
  EXPECT_TRUE(contains(
      cunumpy_tests::message_of<std::logic_error>([&] { budget.advice(); }),
      "make it with AdviceRecording::on"));
}

TEST(AdviceOptionsAndOrder, ACounterWithoutAdviceSaysSo) {
  TransferCounter counter(16, AdviceRecording::off);
  auto counted = count_transfers(counter);
  synthetic::copy("Cuda", "Host", 8);
  counted.stop();
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_TRUE(contains(
      cunumpy_tests::message_of<std::logic_error>([&] { counter.advice(); }),
      "cunumpy::TransferCounter::advice: this counter records nothing for "
      "advice"));
  TransferBudget budget(
      cunumpy::profiling::BudgetOptions{true, 16, AdviceRecording::off});
  EXPECT_TRUE(contains(
      cunumpy_tests::message_of<std::logic_error>([&] { budget.advice(); }),
      "cunumpy::TransferBudget::advice: this budget records nothing"));
}

TEST(AdviceBudgets, FindingsNameThePhaseAndNeverChangeTheVerdict) {
  int up = 0;
  int down = 0;
  const auto run = [&](TransferBudget& budget) {
    auto integrate = budget.count("integrate", [&] {
      Region solve("solve"); // a library's region inside the phase
      up = __LINE__ + 1;
      ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 200e-6);
      down = __LINE__ + 1;
      ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 200e-6);
    });
    for (int step = 0; step < 12; ++step)
      integrate();
    budget.require("integrate",
                   Rule()
                       .calls(12)
                       .allow(EventKind::to_device)
                       .allow(EventKind::to_host, Limits().max_count(5)));
  };
  std::vector<std::string> verdict_without;
  {
    TransferBudget without(
        cunumpy::profiling::BudgetOptions{true, 4096, AdviceRecording::off});
    run(without);
    for (const auto& violation : without.violations())
      verdict_without.push_back(violation.str());
  }
  TransferBudget budget(advised_budget());
  run(budget);
  // Advice is advice: the same broken rule with it as without it.
  std::vector<std::string> verdict;
  for (const auto& violation : budget.violations())
    verdict.push_back(violation.str());
  ASSERT_EQ(verdict.size(), 1u) << budget.report();
  EXPECT_EQ(verdict, verdict_without);
  const auto findings = shown(budget.advice());
  ASSERT_EQ(findings.size(), 1u) << all_text(findings);
  EXPECT_EQ(findings[0].rule, AdviceRule::round_trip);
  EXPECT_EQ(findings[0].region, "integrate/solve");
  EXPECT_EQ(findings[0].phase, "integrate");
  EXPECT_EQ(findings[0].calls, 12u);
  EXPECT_EQ(findings[0].sites[0].site.str(), site(__FILE__, up));
  EXPECT_EQ(findings[0].sites[1].site.str(), site(__FILE__, down));
  // The phase's counter gives its own findings, the total all of them.
  EXPECT_EQ(budget["integrate"].advice().size(), 1u);
  EXPECT_TRUE(budget["output"].advice().empty());
  EXPECT_EQ(budget.total().advice().size(), 1u);
}

TEST(AdviceBudgets, APageableCopyThatBreaksItsRuleIsToBeRemovedNotPinned) {
  TransferBudget budget(advised_budget());
  int kept = 0;
  int broken = 0;
  for (int step = 0; step < 12; ++step) {
    {
      auto phase = budget.phase("integrate");
      broken = __LINE__ + 1;
      ADVICE_COPY("Host", address(0), "Cuda", address(1), 1u << 20, 2e-3);
    }
    auto phase = budget.phase("output");
    kept = __LINE__ + 1;
    ADVICE_COPY("Host", address(2), "Cuda", address(3), 1u << 20, 2e-3);
  }
  budget.require("integrate", Rule()); // no copy
  budget.require("output", Rule().allow(EventKind::to_host));
  AdviceOptions options;
  options.pinned_bandwidth = 1e9; // 1 MiB in about 1 ms
  const auto pageable =
      of_rule(shown(budget.advice(options)), AdviceRule::pageable_memory);
  ASSERT_EQ(pageable.size(), 2u) << all_text(budget.advice(options));
  for (const Finding& finding : pageable) {
    SCOPED_TRACE(finding.str());
    if (finding.sites[0].site.str() == site(__FILE__, broken)) {
      EXPECT_EQ(finding.phase, "integrate");
      EXPECT_TRUE(contains(finding.fix, "remove the copy from phase "
                                        "'integrate' or move it out"));
      EXPECT_FALSE(contains(finding.fix, "HostStaging"));
    } else {
      EXPECT_EQ(finding.sites[0].site.str(), site(__FILE__, kept));
      EXPECT_TRUE(contains(finding.fix, "HostStaging"));
    }
  }
}

TEST(AdviceBudgets, ABudgetThatIsNotStartedAdvisesNothing) {
  TransferBudget budget(advised_budget(false));
  for (int step = 0; step < 12; ++step) {
    auto phase = budget.phase("integrate");
    ADVICE_COPY("Cuda", address(0), "Host", address(1), 800000, 200e-6);
    ADVICE_COPY("Host", address(1), "Cuda", address(0), 800000, 200e-6);
  }
  EXPECT_TRUE(budget.advice().empty()) << all_text(budget.advice());
}

// Rule 7 again: the waits of an allocation and of a deallocation.

TEST(AdviceImplicitSyncs, WaitsOfAViewMadeInEveryCallSayAllocateItOnce) {
  // Kokkos 4.6 making a device view in a loop: the allocation, the fence
  // after copying its header, its initialization kernel and the fence
  // after it (peclet-dem's ArborX temporaries on an H200).
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  const auto cuda = Kokkos::Profiling::make_space_handle("Cuda");
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    Kokkos::Tools::allocateData(cuda, "offsets", address(3), 4096);
    ADVICE_FENCE("SharedAllocationRecord<Kokkos::CudaSpace, void>::"
                 "SharedAllocationRecord(): fence after copying header from "
                 "HostSpace",
                 200e-6);
    std::uint64_t kernel = 0;
    Kokkos::Tools::beginParallelFor(
        "Kokkos::View::initialization [offsets] via memset",
        synthetic::instance_id(ExecutionSpace::cuda), &kernel);
    Kokkos::Tools::endParallelFor(kernel);
    ADVICE_FENCE("Kokkos::View::initialization via memset", 200e-6);
    Kokkos::Tools::deallocateData(cuda, "offsets", address(3), 4096);
  }
  counted.stop();
  const auto findings = of_rule(counter.advice(), AdviceRule::implicit_sync);
  ASSERT_EQ(findings.size(), 2u) << all_text(counter.advice());
  for (const auto& finding : findings)
    EXPECT_TRUE(contains(finding.fix, "allocate it once outside the loop"))
        << finding.fix;
}

TEST(AdviceImplicitSyncs, AWaitBeforeAHostViewIsFreedSaysAllocateItOnce) {
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  const auto host = Kokkos::Profiling::make_space_handle("Host");
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    Kokkos::Tools::allocateData(host, "mirror", address(4), 4096);
    ADVICE_FENCE("HostSpace::impl_deallocate before free", 200e-6);
    Kokkos::Tools::deallocateData(host, "mirror", address(4), 4096);
  }
  counted.stop();
  const auto findings = of_rule(counter.advice(), AdviceRule::implicit_sync);
  ASSERT_EQ(findings.size(), 1u) << all_text(counter.advice());
  EXPECT_TRUE(contains(findings[0].fix, "freed here in every call"))
      << findings[0].fix;
}

TEST(AdviceImplicitSyncs, AReductionsReadKeepsItsFixAfterAnAllocation) {
  // A view made, then a reduction into a host value: the reduction's read
  // and wait are not the allocation's.
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  const auto cuda = Kokkos::Profiling::make_space_handle("Cuda");
  for (int call = 0; call < 12; ++call) {
    Region step("step");
    Kokkos::Tools::allocateData(cuda, "x", address(5), 4096);
    std::uint64_t init = 0;
    Kokkos::Tools::beginParallelFor(
        "Kokkos::View::initialization [x] via memset",
        synthetic::instance_id(ExecutionSpace::cuda), &init);
    Kokkos::Tools::endParallelFor(init);
    ADVICE_FENCE("Kokkos::View::initialization via memset", 10e-6);
    std::uint64_t kernel = 0;
    Kokkos::Tools::beginParallelReduce(
        "norm", synthetic::instance_id(ExecutionSpace::cuda), &kernel);
    Kokkos::Tools::endParallelReduce(kernel);
    ADVICE_FENCE("Kokkos::parallel_reduce: fence due to result being value, "
                 "not view",
                 200e-6);
  }
  counted.stop();
  // The reduction's result is a read of the program's, with its wait: the
  // advice is to read it late, not the allocation's.
  for (const auto& finding :
       of_rule(counter.advice(), AdviceRule::implicit_sync))
    EXPECT_FALSE(contains(finding.evidence, "result being value"))
        << finding.evidence;
  const auto reads = of_rule(counter.advice(), AdviceRule::blocking_small_read);
  ASSERT_EQ(reads.size(), 1u) << all_text(counter.advice());
  EXPECT_TRUE(contains(reads[0].fix, "reduce into a device view and read it "
                                     "with cunumpy::to_host_async"))
      << reads[0].fix;
}

#if CUNUMPY_HAS_FAKE_DEVICE

// Real Kokkos copies on the fake device.

namespace {
using cunumpy::testing::FakeDevice;
using HostView = Kokkos::View<double*, Kokkos::HostSpace>;
using DeviceView = Kokkos::View<double*, FakeDevice>;
} // namespace

TEST(AdviceOnTheFakeDevice, ToHostIntoAFreshViewInEveryCall) {
  DeviceView state("state", 1 << 18); // 2 MiB
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    Kokkos::Profiling::pushRegion("output");
    line = __LINE__ + 1;
    auto host = cunumpy::to_host(state); // a new host view each time
    Kokkos::Profiling::popRegion();
  }
  counted.stop();
  AdviceOptions options;
  options.fresh_min_bytes = 1u << 20;
  options.min_saving_seconds = 0.0;
  const auto fresh =
      of_rule(shown(counter.advice(options)), AdviceRule::fresh_host_buffer);
  ASSERT_EQ(fresh.size(), 1u) << all_text(counter.advice(options));
  EXPECT_EQ(fresh[0].sites[0].site.str(), site(__FILE__, line));
  EXPECT_TRUE(contains(fresh[0].sites[0].what, "to_host(shape=(262144,)"));
  EXPECT_EQ(fresh[0].count, 12u);
}

TEST(AdviceOnTheFakeDevice, HostStagingReusesItsBuffer) {
  DeviceView state("state", 1 << 18);
  cunumpy::HostStaging staging;
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Kokkos::Profiling::pushRegion("output");
    staging.copy(state).result();
    Kokkos::Profiling::popRegion();
  }
  counted.stop();
  AdviceOptions options;
  options.fresh_min_bytes = 1u << 20;
  options.min_saving_seconds = 0.0;
  EXPECT_TRUE(
      of_rule(counter.advice(options), AdviceRule::fresh_host_buffer).empty())
      << all_text(counter.advice(options));
}

TEST(AdviceOnTheFakeDevice, AReadOneIterationLateDoesNotBlock) {
  Kokkos::View<double, FakeDevice> norm("norm");
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int iteration = 0; iteration < 20; ++iteration) {
    Kokkos::Profiling::pushRegion("iterate");
    auto pending = cunumpy::to_host_async(norm);
    (void)pending.result();
    Kokkos::Profiling::popRegion();
  }
  counted.stop();
  AdviceOptions options;
  options.min_saving_seconds = 0.0;
  EXPECT_TRUE(
      of_rule(counter.advice(options), AdviceRule::blocking_small_read).empty())
      << all_text(counter.advice(options));
  // The same read, blocking, is found.
  TransferCounter blocking = advised();
  auto counted_blocking = count_transfers(blocking);
  for (int iteration = 0; iteration < 20; ++iteration) {
    Kokkos::Profiling::pushRegion("iterate");
    (void)cunumpy::to_host(norm);
    Kokkos::Profiling::popRegion();
  }
  counted_blocking.stop();
  EXPECT_EQ(
      of_rule(shown(blocking.advice(options)), AdviceRule::blocking_small_read)
          .size(),
      1u)
      << all_text(blocking.advice(options));
}

TEST(AdviceOnTheFakeDevice, ADualViewSyncedBothWays) {
  Kokkos::DualView<double*, FakeDevice> particles("particles", 1 << 12);
  TransferCounter counter = advised();
  auto counted = count_transfers(counter);
  for (int call = 0; call < 12; ++call) {
    Kokkos::Profiling::pushRegion("step");
    particles.modify_host();
    particles.sync_device();
    particles.modify_device();
    particles.sync_host();
    Kokkos::Profiling::popRegion();
  }
  counted.stop();
  AdviceOptions options;
  options.min_saving_seconds = 0.0;
  const auto findings = shown(counter.advice(options));
  const auto ping_pong = of_rule(findings, AdviceRule::dual_view_ping_pong);
  ASSERT_EQ(ping_pong.size(), 1u) << all_text(findings);
  EXPECT_EQ(ping_pong[0].calls, 12u);
  EXPECT_TRUE(contains(ping_pong[0].evidence, "DualView 'particles'"));
  EXPECT_TRUE(of_rule(findings, AdviceRule::round_trip).empty())
      << all_text(findings);
}

TEST(AdviceOnTheFakeDevice, RedundantUploadsOfARealView) {
  HostView host("host", 1 << 13);
  DeviceView device("device", 1 << 13);
  TransferCounter counter(TransferCounter::default_max_events,
                          AdviceRecording::contents);
  auto counted = count_transfers(counter);
  int line = 0;
  for (int call = 0; call < 12; ++call) {
    line = __LINE__ + 1;
    Kokkos::deep_copy(device, host); // the host data never changes
  }
  counted.stop();
  AdviceOptions options;
  options.min_saving_seconds = 0.0;
  const auto redundant =
      of_rule(shown(counter.advice(options)), AdviceRule::redundant_copy);
  ASSERT_EQ(redundant.size(), 1u) << all_text(counter.advice(options));
  EXPECT_EQ(redundant[0].sites[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(redundant[0].count, 11u);
}

#endif
