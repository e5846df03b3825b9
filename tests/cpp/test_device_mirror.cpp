// DeviceMirror: a host buffer owned by someone else, a device copy, and the
// two explicit copies between them, in place.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::DeviceMirror;
using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::site;

using Unmanaged = Kokkos::View<double*, Kokkos::HostSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

TEST(DeviceMirror, OnAHostBackendDeviceIsTheHostViewAndCopiesRecordNothing) {
  std::vector<double> buffer{1.0, 2.0, 3.0};
  Unmanaged host(buffer.data(), buffer.size());
  auto counted = count_transfers();
  DeviceMirror<Unmanaged, Kokkos::HostSpace> mirror(host);
  static_assert(!decltype(mirror)::copies);
  EXPECT_EQ(mirror.device().data(), buffer.data());
  mirror.to_host();
  mirror.to_device();
  mirror.to_host(Kokkos::DefaultHostExecutionSpace());
  mirror.to_device(Kokkos::DefaultHostExecutionSpace());
  EXPECT_EQ(counted.counter().total(), 0u);
  EXPECT_EQ(counted.counter().syncs(), 0u);
}

TEST(DeviceMirror, DefaultDeviceSpaceFollowsTheBuild) {
  std::vector<double> buffer(4, 0.0);
  DeviceMirror mirror(Unmanaged(buffer.data(), buffer.size()));
  static_assert(decltype(mirror)::copies == cunumpy::has_device_backend);
  if constexpr (!cunumpy::has_device_backend)
    EXPECT_EQ(mirror.device().data(), buffer.data());
  else
    EXPECT_NE(mirror.device().data(), buffer.data());
}

TEST(DeviceMirror, UnallocatedViewThrows) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  using Host = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  Host unallocated;
  const std::string message = message_of<std::invalid_argument>(
      [&] { DeviceMirror<Host, Kokkos::HostSpace> mirror(unallocated); });
  EXPECT_TRUE(contains(message, "cunumpy::DeviceMirror: 'host'"));
}

TEST(DeviceMirror, PaddedViewThrows) {
  using Host = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  Host padded(Kokkos::view_alloc("padded", Kokkos::AllowPadding), 4, 33);
  ASSERT_FALSE(padded.span_is_contiguous());
  const std::string message = message_of<std::invalid_argument>(
      [&] { DeviceMirror<Host, Kokkos::HostSpace> mirror(padded); });
  EXPECT_TRUE(contains(message, "not contiguous"));
  EXPECT_TRUE(contains(message, "\"padded\""));
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::peek;
using cunumpy_tests::TestDevice;
using Mirror = DeviceMirror<Unmanaged, TestDevice>;

TEST(DeviceMirror, ConstructionCopiesTheHostDataUpOnce) {
  std::vector<double> buffer{1.0, 2.0, 3.0, 4.0};
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  Mirror mirror(Unmanaged(buffer.data(), buffer.size()));
  static_assert(
      std::is_same_v<Mirror::device_view_type::memory_space, TestDevice>);
  EXPECT_NE(mirror.device().data(), buffer.data());
  EXPECT_EQ(peek(mirror.device(), 3), 4.0);
  const auto events = cunumpy_tests::events_without_syncs(counted.counter());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::to_device);
  EXPECT_EQ(events[0].nbytes, 4 * sizeof(double));
  EXPECT_EQ(events[0].what, "DeviceMirror(shape=(4,), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
}

TEST(DeviceMirror, ToHostWritesIntoTheOriginalBufferInPlace) {
  std::vector<double> buffer(5, 0.0);
  const double* before = buffer.data();
  Mirror mirror(Unmanaged(buffer.data(), buffer.size()));
  // Work on the device changes the device copy only.
  auto changed = cunumpy_tests::host_copy_uncounted(mirror.device());
  for (int i = 0; i < 5; ++i)
    changed(i) += 10.0 * i;
  cunumpy_tests::copy_uncounted(mirror.device(), changed.view());
  EXPECT_EQ(buffer[4], 0.0); // not yet
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  mirror.to_host();
  EXPECT_EQ(buffer.data(), before);
  EXPECT_EQ(mirror.host().data(), before);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(buffer[i], 10.0 * i);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::to_host);
  EXPECT_TRUE(events[0].blocking);
  EXPECT_EQ(events[0].nbytes, 5 * sizeof(double));
  EXPECT_EQ(events[0].what, "DeviceMirror::to_host(shape=(5,), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
}

TEST(DeviceMirror, ToDeviceRefreshesTheDeviceCopyAfterCpuWork) {
  std::vector<double> buffer{1.0, 1.0};
  Mirror mirror(Unmanaged(buffer.data(), buffer.size()));
  buffer[1] = 42.0; // a host library changes its buffer
  EXPECT_EQ(peek(mirror.device(), 1), 1.0);
  auto counted = count_transfers();
  mirror.to_device();
  EXPECT_EQ(peek(mirror.device(), 1), 42.0);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 2 * sizeof(double));
  EXPECT_EQ(counted.counter().events()[0].what,
            "DeviceMirror::to_device(shape=(2,), dtype=float64)");
}

TEST(DeviceMirror, WaitingForAnInstanceIsRecordedAsASync) {
  std::vector<double> buffer(3, 0.0);
  Mirror mirror(Unmanaged(buffer.data(), buffer.size()));
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  mirror.to_host(TestDevice::execution_space());
  mirror.to_device(TestDevice::execution_space());
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.syncs(), 2u);
  std::vector<cunumpy::Event> syncs;
  for (const auto& event : counter.events())
    if (event.kind == EventKind::sync)
      syncs.push_back(event);
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_FALSE(syncs[0].implicit);
  EXPECT_EQ(syncs[0].what, "DeviceMirror::to_host()");
  EXPECT_EQ(syncs[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(syncs[1].what, "DeviceMirror::to_device()");
  EXPECT_EQ(syncs[1].site.str(), site(__FILE__, line + 1));
}

TEST(DeviceMirror, TwoDimensionalLayoutLeftMirror) {
  using Host = Kokkos::View<int**, Kokkos::LayoutLeft, Kokkos::HostSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::vector<int> buffer(6, 0); // column-major 2 x 3, owned elsewhere
  DeviceMirror<Host, TestDevice> mirror(Host(buffer.data(), 2, 3));
  static_assert(std::is_same_v<decltype(mirror)::device_view_type::array_layout,
                               Kokkos::LayoutLeft>);
  cunumpy_tests::poke(mirror.device(), 9, 1, 2);
  mirror.to_host();
  EXPECT_EQ(buffer[1 + 2 * 2], 9);
}

TEST(DeviceMirror, BothDirectionsCountInABudget) {
  using cunumpy::profiling::Limits;
  using cunumpy::profiling::Rule;
  std::vector<double> buffer(100, 0.0);
  Mirror mirror(Unmanaged(buffer.data(), buffer.size()));
  cunumpy::profiling::TransferBudget budget;
  for (int step = 0; step < 3; ++step) {
    auto phase = budget.phase("exchange");
    mirror.to_host();
    mirror.to_device();
  }
  EXPECT_EQ(budget["exchange"].to_host(), 3u);
  EXPECT_EQ(budget["exchange"].to_device(), 3u);
  budget.require("exchange",
                 Rule().allow(EventKind::to_host, Limits().max_count(3)));
  EXPECT_THROW(budget.check(), cunumpy::TransferError); // to_device forbidden
}

TEST(DeviceMirror, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  double storage[4] = {};
  const cunumpy_tests::OverflowingViews<Kokkos::HostSpace> host(storage);
  using Views = decltype(host);
  EXPECT_TRUE(contains(
      message_of<std::invalid_argument>([&] {
        DeviceMirror<Views::Unmanaged<double*>, TestDevice> mirror(host.odd);
      }),
      std::string("cunumpy::DeviceMirror: 'host' has ") + Views::odd_shape));
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
