// GoogleTest main for cunumpy's C++ tests: Kokkos is initialized once, and the
// fake device is registered as a device space.

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "synthetic_events.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests needs no Kokkos, so a device build lists them on a
  // machine without the device.
  if (GTEST_FLAG_GET(list_tests))
    return RUN_ALL_TESTS();
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  // The tests make the events of a device build (the fake device, synthetic
  // events naming Cuda): the program has a device memory space, as a GPU
  // build's allocations tell cunumpy. (What a program without one gets is
  // tested on real programs: tests/plugin/test_host_only.py.)
  cunumpy::Impl::ensure_hooks();
  cunumpy_tests::synthetic::device_allocation();
  return RUN_ALL_TESTS();
}
