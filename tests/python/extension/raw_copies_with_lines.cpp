// A raw Kokkos copy in a file compiled with debug information: its C++ line
// is a better call site than the Python line that called it.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include <cunumpy/testing/fake_device.hpp>

#if CUNUMPY_HAS_FAKE_DEVICE
using LinesDevice = cunumpy::testing::FakeDevice;
#else
using LinesDevice = Kokkos::DefaultExecutionSpace::memory_space;
#endif

extern const char* const source_with_lines;
const char* const source_with_lines = __FILE__;

int copy_with_lines(std::size_t n) {
  Kokkos::View<double*, Kokkos::HostSpace> host("lines_host", n);
  Kokkos::View<double*, LinesDevice> device("lines_device", n);
  const int line = __LINE__ + 1;
  Kokkos::deep_copy(device, host);
  return line;
}
