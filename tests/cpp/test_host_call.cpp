// host_call and kernels: host-only code called with device views, the copies
// there and back, and the fallback / kernel_conversion markers.

#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::profiling::assert_no_transfers;
using cunumpy::profiling::count_transfers;
using cunumpy_tests::iota_host;
using cunumpy_tests::site;

using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;

/// A host-only function: doubles every element into a new view.
HostVector doubled(const HostVector& x) {
  HostVector y("y", x.extent(0));
  for (std::size_t i = 0; i < x.extent(0); ++i)
    y(i) = 2 * x(i);
  return y;
}

TEST(HostCall, WithoutDeviceArgumentsResultsGoToTheDefaultDeviceSpace) {
  auto x = iota_host(4);
  auto counted = count_transfers();
  auto y = cunumpy::host_call(doubled, x);
  EXPECT_TRUE((std::is_same_v<decltype(y)::memory_space,
                              cunumpy::default_device_memory_space>));
  EXPECT_EQ(counted.counter().to_host(), 0u);
  // Nothing to copy on a host-only build, where y is the host result.
  EXPECT_EQ(counted.counter().to_device(),
            cunumpy::has_device_backend ? 1u : 0u);
  EXPECT_EQ(cunumpy::to_host(y)(3), 6.0);
}

TEST(HostCall, OtherArgumentsPassThroughWithTheirValueCategory) {
  int calls = 0;
  std::string name = "spline";
  auto result = cunumpy::host_call(
      [](int& count, const std::string& text, double scale) {
        ++count;
        return text.size() * scale;
      },
      calls, name, 0.5);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result, 3.0);
  cunumpy::host_call([](std::unique_ptr<int> p) { EXPECT_EQ(*p, 7); },
                     std::make_unique<int>(7));
}

TEST(HostCall, AtTakesAnyNumberOfArguments) {
  auto sum = cunumpy::host_call_at(
      cunumpy::SourceLocation::current(),
      [](int a, int b, int c, int d, int e, int f, int g) {
        return a + b + c + d + e + f + g;
      },
      1, 2, 3, 4, 5, 6, 7);
  EXPECT_EQ(sum, 28);
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy_tests::peek;
using cunumpy_tests::TestDevice;
using DeviceVector = Kokkos::View<double*, TestDevice>;

/// Sets every element of a device vector in a kernel on its device.
struct Fill {
  DeviceVector x;
  double value;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const { x(i) = value; }
};

TEST(HostCall, DeviceArgumentsGoToTheHostAndViewResultsComeBack) {
  auto x = cunumpy::to_device<TestDevice>(iota_host(100, "x"));
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  auto y = cunumpy::host_call(doubled, x);
  static_assert(std::is_same_v<decltype(y)::memory_space, TestDevice>);
  EXPECT_EQ(peek(y, 99), 198.0);

  const auto& counter = counted.counter();
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.bytes_to_host(), 100 * sizeof(double));
  EXPECT_EQ(counter.bytes_to_device(), 100 * sizeof(double));
  EXPECT_EQ(counter.kernel_conversion(), 0u);
  EXPECT_EQ(counter.fallback(), 0u);
  for (const auto& event : cunumpy_tests::events_without_syncs(counter)) {
    EXPECT_EQ(event.what, "host_call(shape=(100,), dtype=float64)");
    EXPECT_EQ(event.site.str(), site(__FILE__, line));
  }
}

TEST(HostCall, UnallocatedDeviceArgumentThrowsNamingTheFunction) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  DeviceVector empty;
  const std::string message = message_of<std::invalid_argument>(
      [&] { (void)cunumpy::host_call(doubled, empty); });
  EXPECT_TRUE(contains(message, "cunumpy::host_call: 'argument'"));
}

TEST(HostCall, ArgumentsAreNotCopiedBack) {
  auto x = cunumpy::to_device<TestDevice>(iota_host(3));
  auto counted = count_transfers();
  cunumpy::host_call([](HostVector host) { host(0) = 100.0; }, x);
  EXPECT_EQ(peek(x, 0), 0.0);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().to_device(), 0u);
}

TEST(HostCall, TuplesAndPairsOfResultsComeBackElementByElement) {
  auto x = cunumpy::to_device<TestDevice>(iota_host(5));
  auto counted = count_transfers();
  auto [y, size] = cunumpy::host_call(
      [](const HostVector& host) {
        return std::make_tuple(doubled(host), host.extent(0));
      },
      x);
  static_assert(std::is_same_v<decltype(y)::memory_space, TestDevice>);
  EXPECT_EQ(peek(y, 4), 8.0);
  EXPECT_EQ(size, 5u);
  auto pair = cunumpy::host_call(
      [](const HostVector& host) { return std::make_pair(host, 1.5); }, x);
  static_assert(std::is_same_v<decltype(pair.first)::memory_space, TestDevice>);
  EXPECT_EQ(pair.second, 1.5);
  EXPECT_EQ(counted.counter().to_host(), 2u);
  EXPECT_EQ(counted.counter().to_device(), 2u);
}

TEST(HostCall, ResultsGoToTheSpaceOfTheDeviceArguments) {
  auto x = cunumpy::to_device<TestDevice>(iota_host(2));
  auto host = iota_host(2);
  // The first device argument decides, whatever its position.
  auto y = cunumpy::host_call(
      [](const HostVector& a, const HostVector&) { return doubled(a); }, host,
      x);
  static_assert(std::is_same_v<decltype(y)::memory_space, TestDevice>);
}

TEST(Kernel, WithoutADeviceVersionOnADeviceItFallsBackAndConvertsInPlace) {
  auto scale = cunumpy::make_kernel<TestDevice>(
      "scale", [](HostVector x, double factor) {
        for (std::size_t i = 0; i < x.extent(0); ++i)
          x(i) *= factor;
      });
  auto x = cunumpy::to_device<TestDevice>(iota_host(4));
  const double* before = x.data();
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  scale(x, 3.0);
  EXPECT_EQ(x.data(), before);
  EXPECT_EQ(peek(x, 3), 9.0); // written back in place
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.fallback(), 1u);
  EXPECT_EQ(counter.kernel_conversion(), 1u);
  EXPECT_EQ(counter.to_host(), 1u);
  EXPECT_EQ(counter.to_device(), 1u);
  EXPECT_EQ(counter.total(), 4u);
  for (const auto& event : cunumpy_tests::events_without_syncs(counter)) {
    EXPECT_EQ(event.site.str(), site(__FILE__, line));
    if (event.kind == EventKind::fallback ||
        event.kind == EventKind::kernel_conversion) {
      EXPECT_EQ(event.what, "scale()");
      EXPECT_EQ(event.nbytes, 0u);
    }
  }
}

TEST(Kernel, WithADeviceVersionOnADeviceNothingIsRecorded) {
  int host_runs = 0;
  auto scale = cunumpy::make_kernel<TestDevice>(
      "scale", [&](DeviceVector) { ++host_runs; },
      [](DeviceVector x) {
        Kokkos::parallel_for(
            Kokkos::RangePolicy<DeviceVector::execution_space>(0, x.extent(0)),
            Fill{x, -1.0});
      });
  DeviceVector x("x", 3);
  auto counted = count_transfers();
  scale(x);
  EXPECT_EQ(peek(x, 2), -1.0);
  EXPECT_EQ(host_runs, 0);
  EXPECT_EQ(counted.counter().total(), 0u);
  EXPECT_NO_THROW(assert_no_transfers([&] { scale(x); }));
}

TEST(Kernel, FallbackWithHostViewsIsAMarkerWithoutCopies) {
  auto norm = cunumpy::make_kernel<TestDevice>(
      "norm", [](const HostVector& x) { return x(0); });
  auto x = iota_host(3);
  auto counted = count_transfers();
  EXPECT_EQ(norm(x), 0.0);
  EXPECT_EQ(counted.counter().fallback(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(Kernel, AssertNoTransfersRejectsAFallback) {
  auto norm = cunumpy::make_kernel<TestDevice>(
      "norm", [](const HostVector& x) { return x(0); });
  auto x = iota_host(3);
  const std::string message = message_of<cunumpy::TransferError>(
      [&] { assert_no_transfers([&] { (void)norm(x); }); });
  EXPECT_TRUE(contains(message, "fallback"));
}

TEST(Kernel, OnAHostBackendTheHostVersionRunsWithoutEvents) {
  cunumpy::Kernel<void (*)(HostVector), cunumpy::NoDeviceVersion,
                  Kokkos::HostSpace>
      fill("fill", [](HostVector x) { x(0) = 1.0; });
  auto x = iota_host(2);
  auto counted = count_transfers();
  fill(x);
  EXPECT_EQ(x(0), 1.0);
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(HostKernel, WithDeviceViewsRecordsAConversionAndCopiesThereAndBack) {
  cunumpy::HostKernel shift("shift", [](HostVector x, HostVector y) {
    for (std::size_t i = 0; i < x.extent(0); ++i)
      y(i) = x(i) + 1.0;
  });
  auto x = cunumpy::to_device<TestDevice>(iota_host(6));
  DeviceVector y("y", 6);
  auto counted = count_transfers();
  const int line = __LINE__ + 1;
  shift(x, y);
  EXPECT_EQ(peek(y, 5), 6.0);
  const auto& counter = counted.counter();
  EXPECT_EQ(counter.kernel_conversion(), 1u);
  EXPECT_EQ(counter.fallback(), 0u);
  EXPECT_EQ(counter.to_host(), 2u);
  EXPECT_EQ(counter.to_device(), 2u); // both non-const views go back
  const auto events = counter.events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].kind, EventKind::kernel_conversion);
  EXPECT_EQ(events[0].what, "shift()");
  EXPECT_EQ(events[0].site.str(), site(__FILE__, line));
  EXPECT_EQ(events[1].what, "shift(shape=(6,), dtype=float64)");
}

TEST(HostKernel, ConstDeviceViewsAreNotCopiedBack) {
  cunumpy::HostKernel sum("sum",
                          [](Kokkos::View<const double*, Kokkos::HostSpace> x) {
                            double total = 0;
                            for (std::size_t i = 0; i < x.extent(0); ++i)
                              total += x(i);
                            return total;
                          });
  Kokkos::View<const double*, TestDevice> x =
      cunumpy::to_device<TestDevice>(iota_host(4));
  auto counted = count_transfers();
  EXPECT_EQ(sum(x), 6.0);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().to_device(), 0u);
}

TEST(HostKernel, StridedDeviceArgumentIsWrittenBackThroughAPackedCopy) {
  cunumpy::HostKernel fill("fill", [](HostVector x) {
    for (std::size_t i = 0; i < x.extent(0); ++i)
      x(i) = 5.0;
  });
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> matrix("m", 3, 4);
  auto column = Kokkos::subview(matrix, Kokkos::ALL, 1);
  auto counted = count_transfers();
  fill(column);
  EXPECT_EQ(peek(matrix, 2, 1), 5.0);
  EXPECT_EQ(peek(matrix, 2, 2), 0.0);
  EXPECT_EQ(counted.counter().to_host(), 1u);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().device_copy(), 2u); // packed there and back
}

TEST(HostKernel, WithHostViewsItJustRuns) {
  cunumpy::HostKernel fill("fill", [](HostVector x) { x(1) = 3.0; });
  auto x = iota_host(2);
  EXPECT_NO_THROW(assert_no_transfers([&] { fill(x); }));
  EXPECT_EQ(x(1), 3.0);
}

TEST(HostKernel, AssertNoTransfersRejectsAConversion) {
  cunumpy::HostKernel fill("fill", [](HostVector x) { x(1) = 3.0; });
  DeviceVector x("x", 2);
  const std::string message = message_of<cunumpy::TransferError>(
      [&] { assert_no_transfers([&] { fill(x); }); });
  EXPECT_TRUE(contains(message, "kernel_conversion"));
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
