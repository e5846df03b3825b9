// Built with -O0: Kokkos' templates are real frames between the recorder and
// the caller (DualView::sync_device -> sync_impl -> deep_copy), and raw
// copies must still be attributed to the caller's line. Built with -O2 -g
// and -O3 -g too: the templates are inlined, and the thread's lambda, whose
// last statement is the copy, jumps to Kokkos::deep_copy (a tail call), so
// that no frame of the lambda is on the stack; its line still names it.

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
  // Two threads' lambdas ending in the same copy: optimized, both jump to
  // one Kokkos::deep_copy, and which made a copy cannot be told. Each copy
  // names its own line, or none and says why; never the other's.
  Kokkos::View<int*, Kokkos::HostSpace> host_ints("host_ints", 10);
  Kokkos::View<int*, FakeDevice> device_ints("device_ints", 10);
  int first_line = 0;
  int second_line = 0;
  std::thread([&] {
    first_line = __LINE__ + 1;
    Kokkos::deep_copy(device_ints, host_ints);
  }).join();
  std::thread([&] {
    second_line = __LINE__ + 1;
    Kokkos::deep_copy(device_ints, host_ints);
  }).join();
  const auto events = counted.counter().events();
  CHECK_EQ(events.size(), std::size_t(5));
  if (events.size() == 5) {
    const std::string file = __FILE__;
    const auto at = [&](int line) { return file + ":" + std::to_string(line); };
    CHECK_EQ(events[0].site.str(), at(copy_line));
    CHECK_EQ(events[1].site.str(), at(sync_line));
    CHECK_EQ(events[2].site.str(), at(lambda_line));
    for (int i : {3, 4}) {
      const cunumpy::CallSite& site = events[i].site;
      const bool own = site.str() == at(i == 3 ? first_line : second_line);
      const bool none_and_why =
          !site.known() && site.problem.find("tail call") != std::string::npos;
      CHECK_EQ(own || none_and_why, true);
      if (!own && !none_and_why)
        std::cerr << "copy " << i << ": " << site.str() << " (" << site.problem
                  << ")\n";
    }
  }
  return failures() == 0 ? 0 : 1;
#else
  (void)argc;
  (void)argv;
  return 77;
#endif
}
