// to_host_async: a read that returns at once, recorded as a non-blocking
// to_host; result() waits only when the copy has not finished.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::iota_host;
using cunumpy_tests::site;

TEST(ToHostAsync, HostViewIsReadyAtOnceWithoutEvents) {
  auto host = iota_host(8);
  Kokkos::View<double, Kokkos::HostSpace> scalar("s");
  scalar() = 4.5;
  auto counted = count_transfers();
  auto pending = cunumpy::to_host_async(host);
  auto value = cunumpy::to_host_async(scalar);
  static_assert(std::is_same_v<decltype(value.result()), double>);
  static_assert(std::is_same_v<decltype(pending.result()), decltype(host)>);
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.result().data(), host.data());
  EXPECT_EQ(value.result(), 4.5);
  EXPECT_EQ(counted.counter().total(), 0u);
  EXPECT_EQ(counted.counter().syncs(), 0u);
}

TEST(ToHostAsync, UnallocatedViewThrowsNamingTheFunction) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  Kokkos::View<double*, Kokkos::HostSpace> empty;
  const std::string message = message_of<std::invalid_argument>(
      [&] { (void)cunumpy::to_host_async(empty); });
  EXPECT_TRUE(contains(message, "cunumpy::to_host_async: 'view'"));
}

/// Adds `amount` to `value()` `count` times on one thread: a kernel that
/// keeps a device busy for a while.
struct SlowAdd {
  Kokkos::View<double, cunumpy::default_device_memory_space> value;
  double amount;
  long count;
  KOKKOS_INLINE_FUNCTION void operator()(int) const {
    for (long i = 0; i < count; ++i)
      value() += amount;
  }
};

TEST(ToHostAsyncOnTheDevice, ReadsAfterQueuedWorkAndRecordsTheWaitAsASync) {
  if constexpr (!cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has no device backend";
  } else {
    Kokkos::View<double, cunumpy::default_device_memory_space> value("value");
    const long count = 1 << 24;
    Kokkos::parallel_for(
        "slow", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, 1),
        SlowAdd{value, 1.0, count});
    auto counted = count_transfers();
    const int line = __LINE__ + 1;
    auto pending = cunumpy::to_host_async(value); // returns at once
    const bool ready_at_once = pending.ready();
    EXPECT_FALSE(ready_at_once) << "the slow kernel should still run";
    EXPECT_EQ(pending.result(), double(count)); // after the queued kernel
    EXPECT_TRUE(pending.ready());
    const auto& counter = counted.counter();
    EXPECT_EQ(counter.to_host(), 1u);
    EXPECT_EQ(counter.async_count(EventKind::to_host), 1u);
    EXPECT_EQ(counter.syncs(), ready_at_once ? 0u : 1u);
    for (const auto& event : counter.events()) {
      EXPECT_EQ(
          event.site.str(),
          site(__FILE__, event.kind == EventKind::sync ? line + 3 : line));
      if (event.kind == EventKind::sync) {
        EXPECT_EQ(event.what, "PendingHost::result()");
      }
    }
  }
}

TEST(ToHostAsyncOnTheDevice, WorkQueuedLaterDoesNotChangeTheValue) {
  if constexpr (!cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has no device backend";
  } else {
    Kokkos::View<double, cunumpy::default_device_memory_space> value("value");
    using Policy = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>;
    Kokkos::parallel_for("slow", Policy(0, 1), SlowAdd{value, 1.0, 1 << 22});
    auto pending = cunumpy::to_host_async(value);
    Kokkos::parallel_for("overwrite", Policy(0, 1), SlowAdd{value, -1.0, 10});
    EXPECT_EQ(pending.result(), double(1 << 22));
    EXPECT_EQ(cunumpy::to_host(value)(), double((1 << 22) - 10));
  }
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::poke;
using cunumpy_tests::TestDevice;

TEST(ToHostAsync, ScalarIsCopiedAtOnceAndRecordedAsNonBlocking) {
  Kokkos::View<double, TestDevice> norm("residual_norm");
  poke(norm, 0.25);
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  auto pending = cunumpy::to_host_async(norm);
  static_assert(std::is_same_v<decltype(pending.result()), double>);
  const bool ready_at_once = pending.ready();
  if constexpr (cunumpy_tests::test_device_is_fake) {
    EXPECT_TRUE(ready_at_once); // the fake device copies at once
  }
  const int result_line = __LINE__ + 1;
  EXPECT_EQ(pending.result(), 0.25);
  EXPECT_TRUE(pending.ready());
  EXPECT_EQ(pending.result(), 0.25); // a second read gives the same value

  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), sizeof(double));
  EXPECT_EQ(counter.async_count(EventKind::to_host), 1u);
  // The first result() waits, a sync, only when the value was not there yet.
  EXPECT_EQ(counter.syncs(), ready_at_once ? 0u : 1u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u + counter.syncs());
  EXPECT_EQ(events[0].kind, EventKind::to_host);
  EXPECT_FALSE(events[0].blocking);
  EXPECT_TRUE(events[0].async);
  EXPECT_EQ(events[0].nbytes, sizeof(double));
  EXPECT_EQ(events[0].what, "to_host_async(shape=(), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(events[0].src_space, cunumpy_tests::test_device_name());
  EXPECT_EQ(events[0].dst_space, cunumpy::pinned_memory_space::name());
  EXPECT_NE(counter.report().find("[async]"), std::string::npos)
      << counter.report();
  if (!ready_at_once) {
    EXPECT_EQ(events[1].kind, EventKind::sync);
    EXPECT_EQ(events[1].what, "PendingHost::result()");
    EXPECT_EQ(events[1].site.str(), site(__FILE__, result_line));
  }
}

TEST(ToHostAsync, TheValueIsTheOneAtTheCallNotALaterOne) {
  Kokkos::View<int, TestDevice> value("value");
  poke(value, 1);
  auto first = cunumpy::to_host_async(value);
  poke(value, 2);
  auto second = cunumpy::to_host_async(value);
  EXPECT_EQ(second.result(), 2);
  EXPECT_EQ(first.result(), 1);
}

TEST(ToHostAsync, ArrayResultIsAHostViewWithTheLayoutKept) {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> host("f", 3, 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      host(i, j) = 10 * i + j;
  auto device = cunumpy::to_device<TestDevice>(host);
  auto counted = count_transfers();
  auto pending = cunumpy::to_host_async(device);
  auto back = pending.result();
  static_assert(
      std::is_same_v<decltype(back)::array_layout, Kokkos::LayoutLeft>);
  static_assert(cunumpy::is_host_memory_space_v<decltype(back)::memory_space>);
  EXPECT_NE(back.data(), device.data());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(back(i, j), 10 * i + j);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_host(), 12 * sizeof(double));
  EXPECT_EQ(counted.counter().async_count(EventKind::to_host), 1u);
}

TEST(ToHostAsync, StridedViewIsPackedOnTheDeviceThenCopiedOnce) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> device("m", 4, 6);
  Kokkos::deep_copy(device, 1.5);
  auto column = Kokkos::subview(device, Kokkos::ALL, 2);
  auto counted = count_transfers();
  auto host = cunumpy::to_host_async(column).result();
  static_assert(
      std::is_same_v<decltype(host)::array_layout, Kokkos::LayoutRight>);
  EXPECT_EQ(host.extent(0), 4u);
  EXPECT_EQ(host(3), 1.5);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_host(), 4 * sizeof(double));
}

TEST(ToHostAsync, RankZeroSubviewOfAHistoryIsOneScalarCopy) {
  Kokkos::View<double*, TestDevice> history("norms", 10);
  Kokkos::deep_copy(history, 3.0);
  auto counted = count_transfers();
  auto pending = cunumpy::to_host_async(Kokkos::subview(history, 7));
  EXPECT_EQ(pending.result(), 3.0);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_host(), sizeof(double));
  EXPECT_EQ(counted.counter().device_copy(), 0u);
}

TEST(ToHostAsync, WithAProducerInstance) {
  Kokkos::View<float, TestDevice> value("v");
  poke(value, 2.f);
  auto counted = count_transfers();
  auto pending = cunumpy::to_host_async(TestDevice::execution_space(), value);
  EXPECT_EQ(pending.result(), 2.f);
  EXPECT_EQ(counted.counter().async_count(EventKind::to_host), 1u);
}

TEST(ToHostAsync, ManyPendingReadsEachKeepTheirValue) {
  // More reads in flight than one block of the pinned pool holds.
  Kokkos::View<double*, TestDevice> history("norms", 200);
  auto host = iota_host(200);
  Kokkos::deep_copy(history, host);
  std::vector<cunumpy::PendingHost<double>> pending;
  for (int i = 0; i < 200; ++i)
    pending.push_back(cunumpy::to_host_async(Kokkos::subview(history, i)));
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(pending[i].result(), i);
}

TEST(ToHostAsync, BudgetAllowsNonBlockingScalarReadsOnly) {
  using cunumpy::profiling::Limits;
  using cunumpy::profiling::Rule;
  Kokkos::View<double, TestDevice> norm("norm");
  cunumpy::profiling::TransferBudget budget;
  budget.require(
      "iterate",
      Rule().allow(EventKind::to_host, Limits().max_nbytes(8).blocking(false)));
  {
    auto phase = budget.phase("iterate");
    (void)cunumpy::to_host_async(norm).result();
  }
  EXPECT_NO_THROW(budget.check()) << budget.report();
  {
    auto phase = budget.phase("iterate");
    (void)cunumpy::to_host(norm); // blocking: breaks the rule
  }
  EXPECT_THROW(budget.check(), cunumpy::TransferError);
}

TEST(ToHostAsync, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  Kokkos::View<double*, TestDevice> small("small", 4);
  const cunumpy_tests::OverflowingViews<TestDevice> device(small.data());
  using Views = decltype(device);
  auto counted = count_transfers();
  EXPECT_TRUE(contains(message_of<std::invalid_argument>(
                           [&] { (void)cunumpy::to_host_async(device.odd); }),
                       std::string("cunumpy::to_host_async: 'view' has ") +
                           Views::odd_shape));
  EXPECT_EQ(counted.counter().events().size(), 0u)
      << counted.counter().report();
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
