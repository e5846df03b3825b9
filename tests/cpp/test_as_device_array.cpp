// as_device_array: the argument itself when it already has the right form,
// else exactly one contiguous device copy.

#include <array>
#include <stdexcept>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy_tests::contains;
using cunumpy_tests::message_of;

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;

TEST(AsDeviceArray, ThrowsOnAHostBackend) {
  if constexpr (cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has a device backend";
  } else {
    Kokkos::View<int*, Kokkos::HostSpace> degree("degree", 3);
    const std::string message = message_of<std::runtime_error>(
        [&] { (void)cunumpy::as_device_array<int, 1>(degree, "degree"); });
    EXPECT_TRUE(contains(message, "cunumpy::as_device_array: 'degree'"));
    EXPECT_TRUE(contains(message, "no device backend"));
  }
}

#if CUNUMPY_HAS_TEST_DEVICE

using cunumpy::as_device_array;
using cunumpy_tests::peek;
using cunumpy_tests::TestDevice;

TEST(AsDeviceArray, ContiguousDeviceViewOfTheRightTypeIsReturnedItself) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> markers("markers", 4,
                                                                  3);
  auto counted = count_transfers();
  auto result =
      cunumpy::as_device_array<double, 2, TestDevice>(markers, "markers");
  static_assert(
      std::is_same_v<decltype(result)::array_layout, Kokkos::LayoutRight>);
  EXPECT_EQ(result.data(), markers.data()); // kernels write into it
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(AsDeviceArray, RankOneLayoutLeftDeviceViewIsReturnedItself) {
  Kokkos::View<int*, Kokkos::LayoutLeft, TestDevice> degree("degree", 3);
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<int, 1, TestDevice>(degree, "degree");
  EXPECT_EQ(result.data(), degree.data());
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(AsDeviceArray, HostViewBecomesOneDeviceCopy) {
  Kokkos::View<double**, Kokkos::HostSpace> markers("markers", 4, 3);
  markers(3, 2) = 1.25;
  auto counted = count_transfers();
  // On one line: nvcc gives a call broken over lines the line of the
  // statement, GCC the line of the call.
  const int line = __LINE__ + 1;
  auto result = as_device_array<double, 2, TestDevice>(markers, "markers");
  EXPECT_EQ(peek(result, 3, 2), 1.25);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
  const auto events = cunumpy_tests::events_without_syncs(counted.counter());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "as_device_array(shape=(4, 3), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), cunumpy_tests::site(__FILE__, line));
}

TEST(AsDeviceArray, InitializerListBecomesOneDeviceCopy) {
  auto counted = count_transfers();
  auto degree =
      cunumpy::as_device_array<int, 1, TestDevice>({3, 3, 3}, "degree");
  ASSERT_EQ(degree.extent(0), 3u);
  EXPECT_EQ(peek(degree, 2), 3);
  EXPECT_EQ(degree.label(), "degree");
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, VectorAndArrayBecomeOneDeviceCopy) {
  std::vector<long> values{1, 2, 3, 4};
  std::array<float, 2> pair{0.5f, 1.5f};
  auto counted = count_transfers();
  auto converted =
      cunumpy::as_device_array<int, 1, TestDevice>(values, "values");
  auto floats = cunumpy::as_device_array<float, 1, TestDevice>(pair, "pair");
  EXPECT_EQ(peek(converted, 3), 4);
  EXPECT_EQ(peek(floats, 1), 1.5f);
  EXPECT_EQ(counted.counter().to_device(), 2u);
  EXPECT_EQ(counted.counter().total(), 2u);
}

TEST(AsDeviceArray, AnotherElementTypeOnTheDeviceIsOneDeviceCopy) {
  Kokkos::View<float*, TestDevice> single("single", 5);
  Kokkos::deep_copy(single, 2.5f);
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<double, 1, TestDevice>(single, "x");
  EXPECT_EQ(peek(result, 4), 2.5);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
  EXPECT_EQ(counted.counter().to_device(), 0u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, AnotherElementTypeOnTheHostIsOneTransfer) {
  Kokkos::View<long*, Kokkos::HostSpace> wide("wide", 5);
  wide(4) = 7;
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<int, 1, TestDevice>(wide, "x");
  EXPECT_EQ(peek(result, 4), 7);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 5 * sizeof(int));
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, StridedAndLayoutLeftDeviceViewsAreOneDeviceCopy) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> matrix("m", 4, 6);
  auto column = Kokkos::subview(matrix, Kokkos::ALL, 1);
  Kokkos::View<double**, Kokkos::LayoutLeft, TestDevice> fortran("f", 2, 3);
  auto counted = count_transfers();
  auto packed = cunumpy::as_device_array<double, 1, TestDevice>(column, "col");
  auto transposed =
      cunumpy::as_device_array<double, 2, TestDevice>(fortran, "fortran");
  EXPECT_NE(packed.data(), matrix.data());
  EXPECT_NE(transposed.data(), fortran.data());
  EXPECT_EQ(counted.counter().device_copy(), 2u);
  EXPECT_EQ(counted.counter().total(), 2u);
}

TEST(AsDeviceArray, BadInputThrowsNamingTheArgument) {
  Kokkos::View<double**, Kokkos::LayoutRight, TestDevice> matrix("m", 2, 2);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              (void)cunumpy::as_device_array<double, 1, TestDevice>(matrix,
                                                                    "degree");
            }),
            "cunumpy::as_device_array: 'degree' has rank 2, expected 1");
  Kokkos::View<Kokkos::complex<double>*, TestDevice> complex("c", 2);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              (void)cunumpy::as_device_array<double, 1, TestDevice>(complex,
                                                                    "field");
            }),
            "cunumpy::as_device_array: 'field' has dtype complex128, which "
            "does not convert to float64");
}

TEST(AsDeviceArray, UnallocatedViewThrows) {
  CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH();
  Kokkos::View<double*, TestDevice> unallocated;
  const auto convert_unallocated = [&] {
    (void)cunumpy::as_device_array<double, 1, TestDevice>(unallocated, "u");
  };
  EXPECT_THROW(convert_unallocated(), std::invalid_argument);
}

TEST(AsDeviceArray, ShapesTooLargeToAllocateThrowBeforeAnyCopy) {
  double storage[4] = {};
  const cunumpy_tests::OverflowingViews<Kokkos::HostSpace> host(storage);
  using Views = decltype(host);
  auto counted = count_transfers();
  EXPECT_TRUE(contains(message_of<std::invalid_argument>([&] {
                         (void)as_device_array<double, 3, TestDevice>(host.cube,
                                                                      "grid");
                       }),
                       std::string("cunumpy::as_device_array: 'grid' has ") +
                           Views::cube_shape));
  EXPECT_TRUE(contains(message_of<std::invalid_argument>([&] {
                         (void)as_device_array<double, 1, TestDevice>(host.odd,
                                                                      "x");
                       }),
                       Views::odd_shape));
  // The bytes are those of the element type asked for: 2^61 floats are
  // 2^63 bytes, a size no allocation has.
  EXPECT_TRUE(contains(message_of<std::length_error>([&] {
                         (void)as_device_array<float, 1, TestDevice>(host.odd,
                                                                     "x");
                       }),
                       "cunumpy::as_device_array: 'x' has shape "
                       "(2305843009213693953,) of float32, more than the "
                       "9223372036854775807 bytes"));
  EXPECT_EQ(counted.counter().events().size(), 0u)
      << counted.counter().report();
}

#endif // CUNUMPY_HAS_TEST_DEVICE

} // namespace
