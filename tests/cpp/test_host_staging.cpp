// HostStaging: asynchronous snapshots into pinned buffers that are reused
// once nobody holds them.

#include <stdexcept>
#include <string>
#include <type_traits>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::HostStaging;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::iota_host;
using cunumpy_tests::site;

TEST(HostStaging, HostViewIsReturnedAsItIsWithoutABuffer) {
  auto host = iota_host(16);
  HostStaging staging;
  auto counted = count_transfers();
  auto snapshot = staging.copy(host);
  EXPECT_TRUE(snapshot.ready());
  EXPECT_EQ(snapshot.result().data(), host.data());
  EXPECT_EQ(staging.buffers(), 0u);
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(HostStaging, UnallocatedViewThrowsNamingTheFunction) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  HostStaging staging;
  Kokkos::View<double*, Kokkos::HostSpace> empty;
  const std::string message =
      message_of<std::invalid_argument>([&] { (void)staging.copy(empty); });
  EXPECT_TRUE(contains(message, "cunumpy::HostStaging::copy"));
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::poke;
using cunumpy_tests::TestDevice;

TEST(HostStaging, CopyIsOneNonBlockingToHostAtTheCallersLine) {
  auto state = cunumpy::to_device<TestDevice>(iota_host(1000, "state"));
  HostStaging staging;
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  auto snapshot = staging.copy(state);
  const bool ready_at_once = snapshot.ready();
  if constexpr (cunumpy_tests::test_device_is_fake) {
    EXPECT_TRUE(ready_at_once); // the fake device copies at once
  }
  const int result_line = __LINE__ + 1;
  auto host = snapshot.result();
  static_assert(std::is_same_v<decltype(host)::memory_space,
                               cunumpy::pinned_memory_space>);
  EXPECT_EQ(host.extent(0), 1000u);
  EXPECT_EQ(host(999), 999.0);

  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 1000 * sizeof(double));
  EXPECT_EQ(counter.async_count(EventKind::to_host), 1u);
  // result() waits, a sync, only when the copy had not finished.
  EXPECT_EQ(counter.syncs(), ready_at_once ? 0u : 1u);
  const auto events = counter.events();
  ASSERT_EQ(events.size(), 1u + counter.syncs());
  EXPECT_EQ(events[0].kind, EventKind::to_host);
  EXPECT_FALSE(events[0].blocking);
  EXPECT_EQ(events[0].what, "HostStaging::copy(shape=(1000,), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(events[0].label, "state");
  if (!ready_at_once) {
    EXPECT_EQ(events[1].kind, EventKind::sync);
    EXPECT_EQ(events[1].what, "PendingHost::result()");
    EXPECT_EQ(events[1].site.str(), site(__FILE__, result_line));
  }
}

TEST(HostStaging, BuffersAreReusedAfterTheFirstCopyOfAShape) {
  auto state = cunumpy::to_device<TestDevice>(iota_host(64));
  HostStaging staging;
  const double* first = nullptr;
  for (int step = 0; step < 5; ++step) {
    Kokkos::deep_copy(state, double(step));
    auto host = staging.copy(state).result();
    EXPECT_EQ(host(10), double(step));
    if (step == 0)
      first = host.data();
    EXPECT_EQ(host.data(), first) << "step " << step;
  }
  EXPECT_EQ(staging.allocations(), 1u);
  EXPECT_EQ(staging.buffers(), 1u);
  EXPECT_EQ(staging.bytes(), 64 * sizeof(double));
}

TEST(HostStaging, ABufferStillHeldIsNeverOverwritten) {
  auto state = cunumpy::to_device<TestDevice>(iota_host(8));
  HostStaging staging;
  {
    auto held = staging.copy(state).result();
    Kokkos::deep_copy(state, -1.0);
    auto next = staging.copy(state).result();
    EXPECT_NE(next.data(), held.data());
    EXPECT_EQ(held(3), 3.0);
    EXPECT_EQ(next(3), -1.0);
    EXPECT_EQ(staging.allocations(), 2u);
  }
  // Both are free again: the loop alternates between them from now on.
  (void)staging.copy(state).result();
  (void)staging.copy(state).result();
  EXPECT_EQ(staging.allocations(), 2u);
}

TEST(HostStaging, APendingCopyHoldsItsBuffer) {
  auto state = cunumpy::to_device<TestDevice>(iota_host(8));
  HostStaging staging;
  auto first = staging.copy(state);
  auto second = staging.copy(state);
  EXPECT_NE(first.result().data(), second.result().data());
  EXPECT_EQ(staging.allocations(), 2u);
}

TEST(HostStaging, EachShapeAndTypeHasItsOwnBuffers) {
  Kokkos::View<double*, TestDevice> a("a", 10), b("b", 20);
  Kokkos::View<float*, TestDevice> c("c", 10);
  Kokkos::View<double**, Kokkos::LayoutLeft, TestDevice> d("d", 2, 5);
  HostStaging staging;
  for (int i = 0; i < 3; ++i) {
    (void)staging.copy(a).result();
    (void)staging.copy(b).result();
    (void)staging.copy(c).result();
    (void)staging.copy(d).result();
  }
  EXPECT_EQ(staging.allocations(), 4u);
  EXPECT_EQ(staging.bytes(),
            (10 + 20 + 10) * sizeof(double) + 10 * sizeof(float));
  staging.clear();
  EXPECT_EQ(staging.buffers(), 0u);
  EXPECT_EQ(staging.bytes(), 0u);
}

TEST(HostStaging, LayoutLeftIsKeptAndStridedViewsArePacked) {
  Kokkos::View<double**, Kokkos::LayoutLeft, TestDevice> left("l", 3, 4);
  poke(left, 7.0, 2, 3);
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> right("r", 4, 6);
  poke(right, 5.0, 1, 2);
  HostStaging staging;
  auto counted = count_transfers();
  auto l = staging.copy(left).result();
  static_assert(std::is_same_v<decltype(l)::array_layout, Kokkos::LayoutLeft>);
  EXPECT_EQ(l(2, 3), 7.0);
  auto column = staging.copy(Kokkos::subview(right, Kokkos::ALL, 2)).result();
  static_assert(
      std::is_same_v<decltype(column)::array_layout, Kokkos::LayoutRight>);
  EXPECT_EQ(column(1), 5.0);
  EXPECT_EQ(counted.counter().to_host(), 2u);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
}

TEST(HostStaging, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  Kokkos::View<double*, TestDevice> small("small", 4);
  const cunumpy_tests::OverflowingViews<TestDevice> device(small.data());
  using Views = decltype(device);
  HostStaging staging;
  auto counted = count_transfers();
  EXPECT_TRUE(contains(message_of<std::invalid_argument>(
                           [&] { (void)staging.copy(device.cube); }),
                       std::string("cunumpy::HostStaging::copy: 'view' has ") +
                           Views::cube_shape));
  EXPECT_TRUE(contains(
      message_of<std::length_error>([&] { (void)staging.copy(device.half); }),
      Views::half_shape));
  EXPECT_EQ(staging.buffers(), 0u);
  EXPECT_EQ(counted.counter().events().size(), 0u)
      << counted.counter().report();
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
