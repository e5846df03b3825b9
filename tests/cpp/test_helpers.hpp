#ifndef CUNUMPY_TESTS_TEST_HELPERS_HPP
#define CUNUMPY_TESTS_TEST_HELPERS_HPP

#include <gtest/gtest.h>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

/// The Kokkos 4.6.99 development snapshot crashes when a default-constructed
/// View is copied or destroyed; tests of unallocated views skip there.
#if KOKKOS_VERSION == 40699
#define CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH()                              \
  GTEST_SKIP() << "the Kokkos 4.6.99 development snapshot crashes when a "     \
                  "default-constructed View is copied or destroyed"
#else
#define CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH() (void)0
#endif

namespace cunumpy_tests {

/// "this_file.cpp:LINE", the way reports name a call site.
inline std::string site(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

/// A host view of `n` doubles holding 0, 1, 2, ...
inline Kokkos::View<double*, Kokkos::HostSpace>
iota_host(int n, const char* label = "h") {
  Kokkos::View<double*, Kokkos::HostSpace> view(std::string(label), n);
  for (int i = 0; i < n; ++i)
    view(i) = i;
  return view;
}

} // namespace cunumpy_tests

#endif
