// GoogleTest main for cunumpy's C++ tests: Kokkos is initialized once, and the
// fake device is registered as a device space.

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cunumpy/testing/fake_device.hpp>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests needs no Kokkos, so a device build lists them on a
  // machine without the device.
  if (GTEST_FLAG_GET(list_tests))
    return RUN_ALL_TESTS();
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  return RUN_ALL_TESTS();
}
