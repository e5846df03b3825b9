// Conversions between host and device views: copy only when needed, keep
// LayoutLeft/LayoutRight, pack strided views, never touch the source.

#include <stdexcept>
#include <type_traits>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::iota_host;
using cunumpy_tests::site;

TEST(Conversions, HostViewToHostIsTheSameViewWithoutEvents) {
  auto host = iota_host(10);
  auto counted = count_transfers();
  auto result = cunumpy::to_host(host);
  static_assert(std::is_same_v<decltype(result), decltype(host)>);
  EXPECT_EQ(result.data(), host.data());
  EXPECT_EQ(counted.counter().total(), 0u);
  EXPECT_EQ(counted.counter().syncs(), 0u);
}

TEST(Conversions, OnAHostBackendToDeviceAndToActiveReturnTheHostView) {
  if constexpr (cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has a device backend";
  } else {
    auto host = iota_host(10);
    auto counted = count_transfers();
    EXPECT_EQ(cunumpy::to_device(host).data(), host.data());
    EXPECT_EQ(cunumpy::to_active(host).data(), host.data());
    EXPECT_EQ(counted.counter().total(), 0u);
  }
}

TEST(Conversions, UnallocatedViewThrowsNamingTheFunction) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  Kokkos::View<double*, Kokkos::HostSpace> empty;
  const std::string message =
      message_of<std::invalid_argument>([&] { (void)cunumpy::to_host(empty); });
  EXPECT_TRUE(contains(message, "cunumpy::to_host"));
  EXPECT_TRUE(contains(message, "not allocated"));
}

TEST(Conversions, VectorToHostIsAViewOfItsElements) {
  std::vector<double> values{1.0, 2.0, 3.0};
  auto counted = count_transfers();
  auto view = cunumpy::to_host(values);
  EXPECT_EQ(view.data(), values.data());
  EXPECT_EQ(view.extent(0), 3u);
  EXPECT_EQ(counted.counter().total(), 0u);
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::host_copy_uncounted;
using cunumpy_tests::peek;
using cunumpy_tests::TestDevice;

TEST(Conversions, ToDeviceCopiesOnceAndRecordsTheCallersLine) {
  auto host = iota_host(100000, "state");
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  auto device = cunumpy::to_device<TestDevice>(host);
  static_assert(std::is_same_v<decltype(device)::memory_space, TestDevice>);
  static_assert(
      std::is_same_v<decltype(device)::array_layout, Kokkos::LayoutRight>);
  ASSERT_EQ(device.extent(0), 100000u);
  EXPECT_NE(device.data(), host.data());
  EXPECT_EQ(peek(device, 99999), 99999.0);

  const auto& counter = counted.counter();
  EXPECT_EQ(counter.total(), 1u);
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.bytes_to_device(), 800000u);
  const auto events = cunumpy_tests::events_without_syncs(counter);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::to_device);
  EXPECT_EQ(events[0].nbytes, 800000u);
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(events[0].what, "to_device(shape=(100000,), dtype=float64)");
  EXPECT_EQ(events[0].src_space, "Host");
  EXPECT_EQ(events[0].dst_space, cunumpy_tests::test_device_name());
  EXPECT_EQ(events[0].label, "state");
}

TEST(Conversions, DeviceViewToDeviceIsTheSameView) {
  Kokkos::View<double*, TestDevice> device("d", 10);
  auto counted = count_transfers();
  auto result = cunumpy::to_device<TestDevice>(device);
  EXPECT_EQ(result.data(), device.data());
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(Conversions, ToHostOfADeviceViewCopiesOnce) {
  auto device = cunumpy::to_device<TestDevice>(iota_host(16));
  auto counted = count_transfers();
  auto host = cunumpy::to_host(device);
  static_assert(
      std::is_same_v<decltype(host)::memory_space, Kokkos::HostSpace>);
  EXPECT_EQ(host(15), 15.0);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_host(), 16 * sizeof(double));
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(Conversions, LayoutLeftStaysLayoutLeftBothWays) {
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> host("f", 3, 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      host(i, j) = 10 * i + j;
  auto counted = count_transfers();
  auto device = cunumpy::to_device<TestDevice>(host);
  static_assert(
      std::is_same_v<decltype(device)::array_layout, Kokkos::LayoutLeft>);
  auto back = cunumpy::to_host(device);
  static_assert(
      std::is_same_v<decltype(back)::array_layout, Kokkos::LayoutLeft>);
  EXPECT_EQ(back.stride(1), 3u); // column-major: F-contiguous
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(back(i, j), 10 * i + j);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().device_copy(), 0u);
}

TEST(Conversions, StridedHostViewIsPackedOnTheHostThenCopiedOnce) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> host("m", 4,
                                                                      6);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      host(i, j) = 100 * i + j;
  // Every other column: not contiguous.
  Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::HostSpace> columns(
      host.data(), Kokkos::LayoutStride(4, 6, 3, 2));
  auto counted = count_transfers();
  auto device = cunumpy::to_device<TestDevice>(columns);
  static_assert(
      std::is_same_v<decltype(device)::array_layout, Kokkos::LayoutRight>);
  ASSERT_EQ(device.extent(0), 4u);
  ASSERT_EQ(device.extent(1), 3u);
  const auto copied = host_copy_uncounted(device);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(copied(i, j), 100 * i + 2 * j);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 12 * sizeof(double));
  EXPECT_EQ(counted.counter().device_copy(), 0u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(Conversions, StridedDeviceViewIsPackedOnTheDeviceThenCopiedOnce) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> device("m", 4, 6);
  Kokkos::deep_copy(device, 1.5);
  auto column = Kokkos::subview(device, Kokkos::ALL, 2); // stride 6
  auto counted = count_transfers();
  auto host = cunumpy::to_host(column);
  static_assert(
      std::is_same_v<decltype(host)::array_layout, Kokkos::LayoutRight>);
  EXPECT_EQ(host.extent(0), 4u);
  EXPECT_EQ(host(3), 1.5);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_host(), 4 * sizeof(double));
}

TEST(Conversions, RowMajorContiguousStridedViewIsNotPacked) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> device("m", 4, 6);
  auto rows = Kokkos::subview(device, std::make_pair(1, 3), Kokkos::ALL);
  static_assert(
      std::is_same_v<decltype(rows)::array_layout, Kokkos::LayoutStride> ||
      std::is_same_v<decltype(rows)::array_layout, Kokkos::LayoutRight>);
  Kokkos::View<double**, Kokkos::LayoutStride, TestDevice> strided = rows;
  auto counted = count_transfers();
  auto host = cunumpy::to_host(strided);
  EXPECT_EQ(host.extent(0), 2u);
  EXPECT_EQ(counted.counter().device_copy(), 0u);
  EXPECT_EQ(counted.counter().to_host(), 1u);
}

TEST(Conversions, SourceIsNeverModified) {
  auto host = iota_host(8);
  auto device = cunumpy::to_device<TestDevice>(host);
  Kokkos::deep_copy(device, -1.0);
  EXPECT_EQ(host(3), 3.0);
  auto back = cunumpy::to_host(device);
  back(0) = 42.0;
  EXPECT_EQ(peek(device, 0), -1.0);
}

TEST(Conversions, VectorToDeviceCopiesOnce) {
  std::vector<float> values{1.f, 2.f, 3.f, 4.f};
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  auto device = cunumpy::to_device<TestDevice>(values);
  static_assert(std::is_same_v<decltype(device)::value_type, float>);
  EXPECT_EQ(peek(device, 3), 4.f);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  const auto events = cunumpy_tests::events_without_syncs(counted.counter());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "to_device(shape=(4,), dtype=float32)");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
}

TEST(Conversions, ToActiveFollowsTheGivenExecutionSpace) {
  Kokkos::View<int*, TestDevice> device("d", 5);
  auto counted = count_transfers();
  // A host execution space is active: to_active brings the view home.
  auto host = cunumpy::to_active<Kokkos::DefaultHostExecutionSpace>(device);
  static_assert(
      std::is_same_v<decltype(host)::memory_space, Kokkos::HostSpace>);
  auto again = cunumpy::to_active<Kokkos::DefaultHostExecutionSpace>(host);
  EXPECT_EQ(again.data(), host.data());
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
  EXPECT_EQ(counted.counter().events()[0].what,
            "to_active(shape=(5,), dtype=int32)");
}

TEST(Conversions, RankZeroAndHighRankViews) {
  Kokkos::View<double, Kokkos::HostSpace> scalar("s");
  scalar() = 2.5;
  auto device = cunumpy::to_device<TestDevice>(scalar);
  EXPECT_EQ(cunumpy::to_host(device)(), 2.5);

  Kokkos::View<int********, Kokkos::HostSpace> eight("e", 1, 2, 1, 2, 1, 2, 1,
                                                     2);
  eight(0, 1, 0, 1, 0, 1, 0, 1) = 7;
  auto counted = count_transfers();
  auto back = cunumpy::to_host(cunumpy::to_device<TestDevice>(eight));
  EXPECT_EQ(back(0, 1, 0, 1, 0, 1, 0, 1), 7);
  EXPECT_EQ(counted.counter().total(), 2u);
  EXPECT_EQ(counted.counter().events()[0].what,
            "to_device(shape=(1, 2, 1, 2, 1, 2, 1, 2), dtype=int32)");
}

TEST(Conversions, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  double storage[4] = {};
  const cunumpy_tests::OverflowingViews<Kokkos::HostSpace> host(storage);
  Kokkos::View<double*, TestDevice> small("small", 4);
  const cunumpy_tests::OverflowingViews<TestDevice> device(small.data());
  using Views = decltype(host);
  auto counted = count_transfers();
  EXPECT_TRUE(contains(message_of<std::invalid_argument>([&] {
                         (void)cunumpy::to_device<TestDevice>(host.cube);
                       }),
                       std::string("cunumpy::to_device: 'view' has ") +
                           Views::cube_shape));
  EXPECT_TRUE(contains(message_of<std::invalid_argument>([&] {
                         (void)cunumpy::to_device<TestDevice>(host.odd);
                       }),
                       Views::odd_shape));
  EXPECT_TRUE(contains(message_of<std::length_error>([&] {
                         (void)cunumpy::to_device<TestDevice>(host.half);
                       }),
                       Views::half_shape));
  EXPECT_TRUE(contains(message_of<std::invalid_argument>(
                           [&] { (void)cunumpy::to_host(device.cube); }),
                       std::string("cunumpy::to_host: 'view' has ") +
                           Views::cube_shape));
  EXPECT_TRUE(contains(message_of<std::length_error>(
                           [&] { (void)cunumpy::to_host(device.half); }),
                       Views::half_shape));
  EXPECT_EQ(counted.counter().events().size(), 0u)
      << counted.counter().report();
  // An empty shape is empty, whatever its other extents.
  constexpr std::size_t large = std::size_t(1) << 22;
  Kokkos::View<double****, Kokkos::LayoutRight, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      empty(storage, 0, large, large, large);
  EXPECT_EQ(cunumpy::to_device<TestDevice>(empty).extent(3), large);
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
