// pin_memory: a page-locked copy of a host view, refused on a build without a
// device backend.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::profiling::count_transfers;
using cunumpy_tests::iota_host;

TEST(PinMemory, PinnedSpaceIsHostAccessible) {
  static_assert(cunumpy::is_host_memory_space_v<cunumpy::pinned_memory_space>);
  EXPECT_EQ((std::is_same_v<cunumpy::pinned_memory_space, Kokkos::HostSpace>),
            !cunumpy::has_device_backend);
}

TEST(PinMemory, OnADeviceBackendItIsAPinnedCopy) {
  if constexpr (!cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has no device backend";
  } else {
    auto host = iota_host(8, "snapshot");
    auto counted = count_transfers();
    auto pinned = cunumpy::pin_memory(host);
    EXPECT_NE(pinned.data(), host.data());
    EXPECT_EQ(pinned(7), 7.0);
    EXPECT_EQ(counted.counter().total(), 0u);
    auto device = cunumpy::to_device(pinned);
    EXPECT_EQ(counted.counter().to_device(), 1u);
    EXPECT_EQ(cunumpy::to_host(device)(7), 7.0);
  }
}

TEST(PinMemory, WithoutADeviceBackendItThrowsSayingWhy) {
  if constexpr (cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has a device backend";
  } else {
    auto host = iota_host(4, "snapshot");
    const std::string message = message_of<std::runtime_error>(
        [&] { (void)cunumpy::pin_memory(host); });
    EXPECT_TRUE(
        contains(message, "cunumpy::pin_memory: 'host' (view \"snapshot\")"));
    EXPECT_TRUE(contains(message, "no device backend"));
  }
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::TestDevice;

TEST(PinMemory, IsACopyThatLeavesTheSourceAlone) {
  auto host = iota_host(10, "snapshot");
  auto counted = count_transfers();
  auto pinned = cunumpy::pin_memory<TestDevice>(host);
  static_assert(std::is_same_v<decltype(pinned)::memory_space,
                               cunumpy::pinned_memory_space>);
  EXPECT_NE(pinned.data(), host.data());
  EXPECT_EQ(pinned.label(), "snapshot");
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(pinned(i), i);
  pinned(0) = -1.0;
  EXPECT_EQ(host(0), 0.0);
  // Host to host (pinned) memory is not a transfer.
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(PinMemory, KeepsLayoutLeftAndCopiesToTheDeviceFromPinnedMemory) {
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> host("f", 2, 3);
  host(1, 2) = 5.f;
  auto pinned = cunumpy::pin_memory<TestDevice>(host);
  static_assert(
      std::is_same_v<decltype(pinned)::array_layout, Kokkos::LayoutLeft>);
  EXPECT_EQ(pinned(1, 2), 5.f);
  auto counted = count_transfers();
  auto device = cunumpy::to_device<TestDevice>(pinned);
  EXPECT_EQ(cunumpy_tests::peek(device, 1, 2), 5.f);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 6 * sizeof(float));
}

TEST(PinMemory, VectorBecomesAPinnedRankOneView) {
  std::vector<int> values{3, 1, 4};
  auto pinned = cunumpy::pin_memory<TestDevice>(values);
  static_assert(decltype(pinned)::rank == 1);
  ASSERT_EQ(pinned.extent(0), 3u);
  EXPECT_NE(pinned.data(), values.data());
  EXPECT_EQ(pinned(2), 4);
}

TEST(PinMemory, UnallocatedViewThrows) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  Kokkos::View<double*, Kokkos::HostSpace> empty;
  EXPECT_THROW((void)cunumpy::pin_memory<TestDevice>(empty),
               std::invalid_argument);
}

TEST(PinMemory, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  double storage[4] = {};
  const cunumpy_tests::OverflowingViews<Kokkos::HostSpace> host(storage);
  using Views = decltype(host);
  EXPECT_TRUE(contains(message_of<std::invalid_argument>([&] {
                         (void)cunumpy::pin_memory<TestDevice>(host.cube);
                       }),
                       std::string("cunumpy::pin_memory: 'host' has ") +
                           Views::cube_shape));
  EXPECT_TRUE(contains(message_of<std::length_error>([&] {
                         (void)cunumpy::pin_memory<TestDevice>(host.half);
                       }),
                       Views::half_shape));
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
