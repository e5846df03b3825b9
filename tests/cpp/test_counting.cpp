// Counting: every copy Kokkos makes between host and device is recorded,
// whoever made it, with its size, direction and the line that caused it.

#include <atomic>
#include <gtest/gtest-spi.h>
#include <thread>
#include <vector>

#include <Kokkos_DualView.hpp>

#include <cunumpy/testing/gtest.hpp>

#include "test_helpers.hpp"

// These copy between real views of a device (the fake device on Kokkos
// 3). The same rules are tested on every Kokkos, without a device, by the
// synthetic Kokkos Tools events of test_events.cpp.
#if CUNUMPY_HAS_TEST_DEVICE

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::TransferError;
using cunumpy::profiling::assert_no_transfers;
using cunumpy::profiling::count_transfers;
using cunumpy::profiling::TransferCounter;
using cunumpy_tests::iota_host;
using cunumpy_tests::site;
using cunumpy_tests::TestDevice;

using DeviceVector = Kokkos::View<double*, TestDevice>;
using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;

TEST(Counting, ReportFollowsTheDocumentedFormat) {
  auto host = iota_host(100000);
  DeviceVector device("device", 100000);
  auto counted = count_transfers();
  int up_line = 0, down_line = 0;
  for (int step = 0; step < 10; ++step) {
    up_line = __LINE__ + 1;
    device = cunumpy::to_device<TestDevice>(host);
    down_line = __LINE__ + 1;
    host = cunumpy::to_host(device);
  }
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 20u);
  const std::string expected =
      "20 transfer(s) through cunumpy (10 to_host, 10 to_device, 0 "
      "kernel_conversion, 0 fallback, 0 device_copy)\n"
      "  to_host (10):\n"
      "    " +
      site(__FILE__, down_line) +
      ": to_host(shape=(100000,), dtype=float64) (x10)\n"
      "  to_device (10):\n"
      "    " +
      site(__FILE__, up_line) +
      ": to_device(shape=(100000,), dtype=float64) (x10)\n";
  if constexpr (cunumpy_tests::test_device_is_fake) {
    EXPECT_EQ(counter.report(), expected);
  } else {
    // A device adds the syncs of Kokkos' allocations and frees after them.
    EXPECT_EQ(counter.report().substr(0, expected.size()), expected);
  }
}

TEST(Counting, RawDeepCopyIsAttributedToItsSourceLine) {
  auto host = iota_host(64, "raw_host");
  DeviceVector device("raw_device", 64);
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  Kokkos::deep_copy(device, host);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::to_device);
  EXPECT_EQ(events[0].nbytes, 64 * sizeof(double));
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line))
      << counted.counter().report();
  EXPECT_EQ(events[0].what, "deep_copy(\"raw_host\", nbytes=512)");
}

TEST(Counting, MirrorAndCopyIsCountedHostToHostIsNot) {
  DeviceVector device("d", 32);
  auto counted = count_transfers();
  auto mirror =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), device);
  HostVector other("other", 32);
  Kokkos::deep_copy(other, mirror); // host to host: not a transfer
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(Counting, DeviceToDeviceIsADeviceCopy) {
  DeviceVector a("a", 10), b("b", 10);
  auto counted = count_transfers();
  Kokkos::deep_copy(b, a);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
  EXPECT_EQ(counted.counter().bytes(EventKind::device_copy), 80u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(Counting, ScalarReadIsAnImplicitSync) {
  Kokkos::View<double, TestDevice> norm("norm");
  auto counted = count_transfers();
  double value = 0.0;
  Kokkos::deep_copy(value, norm);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 8u);
  EXPECT_EQ(counter.syncs(), 1u);
  EXPECT_EQ(counter.total(), 1u); // syncs are not transfers
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, EventKind::sync);
  EXPECT_TRUE(events[1].implicit);
  EXPECT_NE(counter.report().find("[implicit]"), std::string::npos);
}

TEST(Counting, DualViewSyncIsCounted) {
  Kokkos::DualView<double*, TestDevice> dual("dual", 100);
  auto counted = count_transfers();
  dual.modify_host();
  dual.sync_device();
  dual.modify_device();
  dual.sync_host();
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 800u);
}

TEST(Counting, ScopesNestAndAccumulate) {
  auto host = iota_host(4);
  TransferCounter accumulated;
  for (int call = 0; call < 3; ++call) {
    auto outer = count_transfers(accumulated);
    auto inner = count_transfers();
    (void)cunumpy::to_device<TestDevice>(host);
    EXPECT_EQ(inner.counter().to_device(), 1u);
  }
  EXPECT_EQ(accumulated.to_device(), 3u);
  // Attaching a counter twice counts once.
  {
    auto a = count_transfers(accumulated);
    auto b = count_transfers(accumulated);
    (void)cunumpy::to_device<TestDevice>(host);
  }
  EXPECT_EQ(accumulated.to_device(), 4u);
  // After its scope, a counter no longer counts.
  (void)cunumpy::to_device<TestDevice>(host);
  EXPECT_EQ(accumulated.to_device(), 4u);
}

TEST(Counting, StopEndsCountingEarly) {
  auto host = iota_host(4);
  auto counted = count_transfers();
  (void)cunumpy::to_device<TestDevice>(host);
  counted.stop();
  (void)cunumpy::to_device<TestDevice>(host);
  EXPECT_EQ(counted.counter().to_device(), 1u);
}

TEST(Counting, EventsFromManyThreadsAreAllCounted) {
  constexpr int threads = 4;
  constexpr int copies = 2000;
  auto counted = count_transfers();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([] {
      HostVector host("h", 8);
      DeviceVector device("d", 8);
      for (int i = 0; i < copies; ++i)
        Kokkos::deep_copy(device, host);
    });
  for (auto& worker : workers)
    worker.join();
  EXPECT_EQ(counted.counter().to_device(), std::uint64_t(threads * copies));
  EXPECT_EQ(counted.counter().bytes_to_device(),
            std::uint64_t(threads * copies * 8 * sizeof(double)));
}

TEST(Counting, EightThreadsCopyingBothWaysWhileTheCounterIsRead) {
  // 8 threads, each 10^5 copies to the device and 10^5 back, into one
  // counter that this thread reads all along: what it reads only grows and
  // never passes the total, and the end is exact. scripts/test-threads runs
  // it under ThreadSanitizer.
  constexpr int threads = 8;
  constexpr std::uint64_t copies = 100000; // each way, per thread
  constexpr std::uint64_t total = threads * copies;
  auto counted = count_transfers();
  const TransferCounter& counter = counted.counter();
  std::atomic<int> running{threads};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&running] {
      HostVector host("h", 2);
      DeviceVector device("d", 2);
      for (std::uint64_t i = 0; i < copies; ++i) {
        Kokkos::deep_copy(device, host);
        Kokkos::deep_copy(host, device);
      }
      --running;
    });
  std::uint64_t reads = 0, last_to_device = 0, last_to_host = 0;
  bool in_order = true;
  while (running > 0) {
    const std::uint64_t to_device = counter.to_device();
    const std::uint64_t to_host = counter.to_host();
    in_order = in_order && to_device >= last_to_device &&
               to_host >= last_to_host && to_device <= total &&
               to_host <= total;
    last_to_device = to_device;
    last_to_host = to_host;
    ++reads;
  }
  for (auto& worker : workers)
    worker.join();
  EXPECT_TRUE(in_order) << "a read went back or past the total";
  EXPECT_GT(reads, 0u);
  EXPECT_EQ(counter.to_device(), total);
  EXPECT_EQ(counter.to_host(), total);
  EXPECT_EQ(counter.total(), 2 * total);
  EXPECT_EQ(counter.bytes_to_device(), total * 2 * sizeof(double));
  EXPECT_EQ(counter.bytes_to_host(), total * 2 * sizeof(double));
}

TEST(Counting, EventsOfARunningThreadAreCountedWhenRead) {
  // A running worker's copies are counted as they happen: reading the
  // counter while the worker still runs sees them all.
  constexpr int copies = 10;
  auto counted = count_transfers();
  std::atomic<bool> copied{false}, release{false};
  std::thread worker([&] {
    HostVector host("h", 4);
    DeviceVector device("d", 4);
    for (int i = 0; i < copies; ++i)
      Kokkos::deep_copy(device, host);
    copied = true;
    while (!release)
      std::this_thread::yield();
  });
  while (!copied)
    std::this_thread::yield();
  EXPECT_EQ(counted.counter().to_device(), std::uint64_t(copies));
  release = true;
  worker.join();
}

TEST(Counting, AScopeSeesOnlyEventsMadeWhileItIsOpen) {
  // The first copy is still queued when the inner scope opens: attaching
  // flushes first, so it is the outer scope's only. Closing flushes too.
  HostVector host("h", 4);
  DeviceVector device("d", 4);
  auto outer = count_transfers();
  Kokkos::deep_copy(device, host);
  TransferCounter inner_counter;
  {
    auto inner = count_transfers(inner_counter);
    EXPECT_EQ(inner.counter().to_device(), 0u);
    Kokkos::deep_copy(device, host);
  }
  Kokkos::deep_copy(device, host);
  EXPECT_EQ(inner_counter.to_device(), 1u);
  EXPECT_EQ(outer.counter().to_device(), 3u);
}

TEST(Counting, RawEventsAreBoundedCountsStayExact) {
  HostVector host("h", 1);
  DeviceVector device("d", 1);
  TransferCounter counter(100);
  {
    auto counted = count_transfers(counter);
    for (int i = 0; i < 5000; ++i)
      Kokkos::deep_copy(device, host);
  }
  EXPECT_EQ(counter.to_device(), 5000u);
  EXPECT_EQ(counter.events().size(), 100u);
  EXPECT_EQ(counter.events_dropped(), 4900u);
  ASSERT_EQ(counter.sites().size(), 1u);
  EXPECT_EQ(counter.sites()[0].count, 5000u);
  counter.clear();
  EXPECT_EQ(counter.total(), 0u);
  EXPECT_TRUE(counter.events().empty());
}

TEST(Counting, CallSiteCaptureCanBeTurnedOff) {
  HostVector host("h", 1);
  DeviceVector device("d", 1);
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  auto counted = count_transfers();
  Kokkos::deep_copy(device, host);
  cunumpy::profiling::set_backtrace_depth(saved);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].site.known());
  EXPECT_EQ(events[0].site.str(), "<unknown>");
  // cunumpy's own calls know their caller without a stack.
  cunumpy::profiling::set_backtrace_depth(0);
  (void)cunumpy::to_device<TestDevice>(host);
  cunumpy::profiling::set_backtrace_depth(saved);
  EXPECT_TRUE(counted.counter().events().back().site.known());
}

TEST(AssertNoTransfers, PassesForDeviceOnlyWork) {
  DeviceVector a("a", 10), b("b", 10);
  const int result = assert_no_transfers([&] {
    Kokkos::deep_copy(b, a); // device_copy: allowed
    return 7;
  });
  EXPECT_EQ(result, 7);
}

TEST(AssertNoTransfers, ThrowsWithTheReportNamingTheLine) {
  auto host = iota_host(10);
  int line = 0;
  const std::string message = message_of<TransferError>([&] {
    assert_no_transfers([&] {
      line = __LINE__ + 1;
      (void)cunumpy::to_device<TestDevice>(host);
    });
  });
  EXPECT_TRUE(contains(message, "1 transfer(s) through cunumpy"));
  EXPECT_TRUE(contains(message, site(__FILE__, line)));
}

// One text in every front end: the failure in one line, then the counter's
// report of what the block did.
TEST(AssertNoTransfers, TheMessageIsOneLineThenTheCounterReport) {
  auto host = iota_host(10);
  auto counted = count_transfers(); // sees what assert_no_transfers sees
  const int line = __LINE__;
  const std::string message = message_of<TransferError>([&] {
    assert_no_transfers([&] { (void)cunumpy::to_device<TestDevice>(host); },
                        cunumpy::SourceLocation{__FILE__, line, nullptr});
  });
  counted.stop();
  EXPECT_EQ(message, "cunumpy::profiling::assert_no_transfers: 1 host/device "
                     "transfer(s) where none are allowed (checked at " +
                         site(__FILE__, line) + ")\n" +
                         counted.counter().report());
  EXPECT_TRUE(contains(message, "\n  to_device (1):\n    "));
}

TEST(AssertNoTransfers, ExceptionsOfTheCallablePassThrough) {
  EXPECT_THROW(
      assert_no_transfers([] { throw std::logic_error("from the callable"); }),
      std::logic_error);
}

TEST(AssertNoTransfers, GoogleTestMacros) {
  DeviceVector a("a", 10), b("b", 10);
  EXPECT_NO_TRANSFERS(Kokkos::deep_copy(b, a));
  ASSERT_NO_TRANSFERS(Kokkos::deep_copy(b, a));
  auto host = iota_host(10);
  EXPECT_NONFATAL_FAILURE(EXPECT_NO_TRANSFERS(Kokkos::deep_copy(a, host)),
                          "to_device (1)");
}

TEST(AssertNoTransfers, GoogleTestMacrosNameTheTestsLine) {
  DeviceVector a("a", 10);
  auto host = iota_host(10);
  ::testing::TestPartResultArray failures;
  int line = 0;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &failures);
    line = __LINE__ + 1;
    EXPECT_NO_TRANSFERS(Kokkos::deep_copy(a, host));
  }
  ASSERT_EQ(failures.size(), 1);
  const std::string message = failures.GetTestPartResult(0).message();
  EXPECT_TRUE(contains(message, "(checked at " + std::string(__FILE__) + ":" +
                                    std::to_string(line) + ")"))
      << message;
}

} // namespace

#endif // CUNUMPY_HAS_TEST_DEVICE
