// Built with -O0: Kokkos' templates are real frames between the recorder and
// the caller (DualView::sync_device -> sync_impl -> deep_copy), and raw
// copies must still be attributed to the caller's line.

#include <string>
#include <thread>

#include <Kokkos_Core.hpp>
#include <Kokkos_DualView.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "check.hpp"

#if CUNUMPY_HAS_FAKE_DEVICE
using FakeDevice = cunumpy::testing::FakeDevice;

int copy_line = 0;

void copy_through_a_helper(
    const Kokkos::View<double*, FakeDevice>& device,
    const Kokkos::View<double*, Kokkos::HostSpace>& host) {
  copy_line = __LINE__ + 1;
  Kokkos::deep_copy(device, host);
}
#endif

int main(int argc, char** argv) {
#if CUNUMPY_HAS_FAKE_DEVICE
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 10);
  Kokkos::View<double*, FakeDevice> device("device", 10);
  Kokkos::DualView<double*, FakeDevice> dual("dual", 10);
  auto counted = cunumpy::profiling::count_transfers();
  copy_through_a_helper(device, host);
  dual.modify_host();
  const int sync_line = __LINE__ + 1;
  dual.sync_device();
  // A copy made directly in a thread's lambda names the lambda's line.
  int lambda_line = 0;
  std::thread([&] {
    lambda_line = __LINE__ + 1;
    Kokkos::deep_copy(device, host);
  }).join();
  const auto events = counted.counter().events();
  CHECK_EQ(events.size(), std::size_t(3));
  if (events.size() == 3) {
    const std::string file = __FILE__;
    CHECK_EQ(events[0].site.str(), file + ":" + std::to_string(copy_line));
    CHECK_EQ(events[1].site.str(), file + ":" + std::to_string(sync_line));
    CHECK_EQ(events[2].site.str(), file + ":" + std::to_string(lambda_line));
  }
  return failures() == 0 ? 0 : 1;
#else
  (void)argc;
  (void)argv;
  return 77;
#endif
}
