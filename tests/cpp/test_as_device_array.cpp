// as_device_array: the argument itself when it already has the right form,
// else exactly one contiguous device copy.

#include <array>
#include <stdexcept>
#include <vector>

#include "test_helpers.hpp"

namespace {

using cunumpy::EventKind;
using cunumpy::profiling::count_transfers;

TEST(AsDeviceArray, ThrowsOnAHostBackend) {
  if constexpr (cunumpy::has_device_backend) {
    GTEST_SKIP() << "this Kokkos build has a device backend";
  } else {
    Kokkos::View<int*, Kokkos::HostSpace> degree("degree", 3);
    try {
      (void)cunumpy::as_device_array<int, 1>(degree, "degree");
      FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("cunumpy::as_device_array: 'degree'"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("no device backend"), std::string::npos);
    }
  }
}

#if CUNUMPY_HAS_FAKE_DEVICE

using cunumpy::testing::FakeDevice;

TEST(AsDeviceArray, ContiguousDeviceViewOfTheRightTypeIsReturnedItself) {
  Kokkos::View<double**, FakeDevice> markers("markers", 4, 3);
  auto counted = count_transfers();
  auto result =
      cunumpy::as_device_array<double, 2, FakeDevice>(markers, "markers");
  static_assert(
      std::is_same_v<decltype(result)::array_layout, Kokkos::LayoutRight>);
  EXPECT_EQ(result.data(), markers.data()); // kernels write into it
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(AsDeviceArray, RankOneLayoutLeftDeviceViewIsReturnedItself) {
  Kokkos::View<int*, Kokkos::LayoutLeft, FakeDevice> degree("degree", 3);
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<int, 1, FakeDevice>(degree, "degree");
  EXPECT_EQ(result.data(), degree.data());
  EXPECT_EQ(counted.counter().total(), 0u);
}

TEST(AsDeviceArray, HostViewBecomesOneDeviceCopy) {
  Kokkos::View<double**, Kokkos::HostSpace> markers("markers", 4, 3);
  markers(3, 2) = 1.25;
  auto counted = count_transfers();
  const int line = __LINE__ + 2; // the line of the call
  auto result =
      cunumpy::as_device_array<double, 2, FakeDevice>(markers, "markers");
  EXPECT_EQ(result(3, 2), 1.25);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
  const auto events = counted.counter().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "as_device_array(shape=(4, 3), dtype=float64)");
  EXPECT_EQ(events[0].site.str(), cunumpy_tests::site(__FILE__, line));
}

TEST(AsDeviceArray, InitializerListBecomesOneDeviceCopy) {
  auto counted = count_transfers();
  auto degree =
      cunumpy::as_device_array<int, 1, FakeDevice>({3, 3, 3}, "degree");
  ASSERT_EQ(degree.extent(0), 3u);
  EXPECT_EQ(degree(2), 3);
  EXPECT_EQ(degree.label(), "degree");
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, VectorAndArrayBecomeOneDeviceCopy) {
  std::vector<long> values{1, 2, 3, 4};
  std::array<float, 2> pair{0.5f, 1.5f};
  auto counted = count_transfers();
  auto converted =
      cunumpy::as_device_array<int, 1, FakeDevice>(values, "values");
  auto floats = cunumpy::as_device_array<float, 1, FakeDevice>(pair, "pair");
  EXPECT_EQ(converted(3), 4);
  EXPECT_EQ(floats(1), 1.5f);
  EXPECT_EQ(counted.counter().to_device(), 2u);
  EXPECT_EQ(counted.counter().total(), 2u);
}

TEST(AsDeviceArray, AnotherElementTypeOnTheDeviceIsOneDeviceCopy) {
  Kokkos::View<float*, FakeDevice> single("single", 5);
  Kokkos::deep_copy(single, 2.5f);
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<double, 1, FakeDevice>(single, "x");
  EXPECT_EQ(result(4), 2.5);
  EXPECT_EQ(counted.counter().device_copy(), 1u);
  EXPECT_EQ(counted.counter().to_device(), 0u);
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, AnotherElementTypeOnTheHostIsOneTransfer) {
  Kokkos::View<long*, Kokkos::HostSpace> wide("wide", 5);
  wide(4) = 7;
  auto counted = count_transfers();
  auto result = cunumpy::as_device_array<int, 1, FakeDevice>(wide, "x");
  EXPECT_EQ(result(4), 7);
  EXPECT_EQ(counted.counter().to_device(), 1u);
  EXPECT_EQ(counted.counter().bytes_to_device(), 5 * sizeof(int));
  EXPECT_EQ(counted.counter().total(), 1u);
}

TEST(AsDeviceArray, StridedAndLayoutLeftDeviceViewsAreOneDeviceCopy) {
  Kokkos::View<double**, FakeDevice> matrix("m", 4, 6);
  auto column = Kokkos::subview(matrix, Kokkos::ALL, 1);
  Kokkos::View<double**, Kokkos::LayoutLeft, FakeDevice> fortran("f", 2, 3);
  auto counted = count_transfers();
  auto packed = cunumpy::as_device_array<double, 1, FakeDevice>(column, "col");
  auto transposed =
      cunumpy::as_device_array<double, 2, FakeDevice>(fortran, "fortran");
  EXPECT_NE(packed.data(), matrix.data());
  EXPECT_NE(transposed.data(), fortran.data());
  EXPECT_EQ(counted.counter().device_copy(), 2u);
  EXPECT_EQ(counted.counter().total(), 2u);
}

TEST(AsDeviceArray, BadInputThrowsNamingTheArgument) {
  Kokkos::View<double**, FakeDevice> matrix("m", 2, 2);
  try {
    (void)cunumpy::as_device_array<double, 1, FakeDevice>(matrix, "degree");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "cunumpy::as_device_array: 'degree' has rank 2, expected 1");
  }
  Kokkos::View<Kokkos::complex<double>*, FakeDevice> complex("c", 2);
  try {
    (void)cunumpy::as_device_array<double, 1, FakeDevice>(complex, "field");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cunumpy::as_device_array: 'field' has dtype "
                               "complex128, which does not convert to float64");
  }
  Kokkos::View<double*, FakeDevice> unallocated;
  const auto convert_unallocated = [&] {
    (void)cunumpy::as_device_array<double, 1, FakeDevice>(unallocated, "u");
  };
  EXPECT_THROW(convert_unallocated(), std::invalid_argument);
}

#endif // CUNUMPY_HAS_FAKE_DEVICE

} // namespace
