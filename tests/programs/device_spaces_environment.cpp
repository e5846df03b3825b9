// CUNUMPY_DEVICE_SPACES makes spaces device spaces without code: run with
// CUNUMPY_DEVICE_SPACES=FakeDevice copies to the fake device are transfers;
// without it, they are host-to-host copies and not counted. On a Kokkos
// without the fake device (Kokkos 4, 5) the copy is the event Kokkos
// reports for it, made through Kokkos' own entry point with the space name
// "FakeDevice".

#include <cstdlib>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "check.hpp"

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const bool registered = std::getenv("CUNUMPY_DEVICE_SPACES") != nullptr;
#if CUNUMPY_HAS_FAKE_DEVICE
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 10);
  Kokkos::View<double*, cunumpy::testing::FakeDevice> device("device", 10);
#endif
  auto counted = cunumpy::profiling::count_transfers();
#if CUNUMPY_HAS_FAKE_DEVICE
  Kokkos::deep_copy(device, host);
#else
  static double data[10];
  Kokkos::Tools::beginDeepCopy(
      Kokkos::Tools::make_space_handle("FakeDevice"), "device", data,
      Kokkos::Tools::make_space_handle("Host"), "host", data, sizeof(data));
  Kokkos::Tools::endDeepCopy();
#endif
  CHECK_EQ(counted.counter().to_device(), std::uint64_t(registered ? 1 : 0));
  // Unnamed, the copy to FakeDevice was not counted: the counter checked
  // nothing and says which space to name, CUNUMPY_ALLOW_NO_DEVICE or not.
  CHECK_EQ(counted.counter().complete(), registered);
  CHECK_EQ(counted.counter().report().find(
               "NOT CHECKED: 1 copy to or from memory space(s) 'FakeDevice'") !=
               std::string::npos,
           !registered);
  CHECK_EQ(counted.counter().report().find(
               "set CUNUMPY_DEVICE_SPACES=FakeDevice") != std::string::npos,
           !registered);
  CHECK_EQ(counted.counter().report().find("CUNUMPY_ALLOW_NO_DEVICE") ==
               std::string::npos,
           true);
  CHECK_EQ(cunumpy::space_side("Other") == cunumpy::SpaceSide::device,
           registered);
  CHECK_EQ(cunumpy::space_side("Cuda") == cunumpy::SpaceSide::device, true);
  CHECK_EQ(cunumpy::space_side("CudaHostPinned") == cunumpy::SpaceSide::host,
           true);
  return failures() == 0 ? 0 : 1;
}
