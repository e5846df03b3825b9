// cunumpy's in-process hooks keep a tool loaded through KOKKOS_TOOLS_LIBS /
// KOKKOS_PROFILE_LIBRARY (here tests/tools/kp_test_tool) and forward every
// event to it: both count the same copies, fences, regions and DualView
// events. On a Kokkos with the fake device the copies are real; on any
// other (Kokkos 4, 5) they are the events Kokkos reports for them, made
// through Kokkos' own entry points.

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <Kokkos_Core.hpp>
#include <Kokkos_DualView.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "check.hpp"
#include "tool_events.hpp"

int main(int argc, char** argv) {
  const char* output = std::getenv("KP_TEST_TOOL_OUTPUT");
  if (output == nullptr) {
    std::cerr << "set KP_TEST_TOOL_OUTPUT and load kp_test_tool\n";
    return 2;
  }
  std::uint64_t counted_copies = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
#if CUNUMPY_HAS_FAKE_DEVICE
    using cunumpy::testing::FakeDevice;
    cunumpy::testing::register_fake_device();
#endif
    auto counted = cunumpy::profiling::count_transfers();
#if CUNUMPY_HAS_FAKE_DEVICE
    Kokkos::View<double*, Kokkos::HostSpace> host("host", 10);
    Kokkos::View<double*, FakeDevice> device("device", 10);
#endif
    Kokkos::Profiling::pushRegion("step");
    for (int i = 0; i < 5; ++i) {
#if CUNUMPY_HAS_FAKE_DEVICE
      Kokkos::deep_copy(device, host);
      Kokkos::deep_copy(host, device);
#else
      tool_events::copy_to_device(80);
      tool_events::copy_to_host(80);
#endif
    }
    Kokkos::Profiling::popRegion();
#if CUNUMPY_HAS_FAKE_DEVICE
    Kokkos::DualView<double*, FakeDevice> dual("dual", 4);
    dual.modify_host();
    dual.sync_device();
#else
    tool_events::copy_to_device(32); // the copy of the sync
    tool_events::dual_view_events(); // modify_host, sync_device
#endif
    counted_copies = counted.counter().total();
    CHECK_EQ(counted_copies, std::uint64_t(11));
  }
  // The tool wrote its counts at finalize.
  std::map<std::string, std::uint64_t> tool;
  std::ifstream in(output);
  std::string name;
  std::uint64_t value;
  while (in >> name >> value)
    tool[name] = value;
  CHECK_EQ(tool["init"], std::uint64_t(1));
  CHECK_EQ(tool["finalize"], std::uint64_t(1));
  // The tool also sees host-to-host copies (view initialization...), so it
  // sees at least the transfers cunumpy counted.
  CHECK_EQ(tool["deep_copy"] >= counted_copies, true);
  CHECK_EQ(tool["deep_copy"], tool["end_deep_copy"]);
  CHECK_EQ(tool["push_region"], std::uint64_t(1));
  CHECK_EQ(tool["pop_region"], std::uint64_t(1));
  CHECK_EQ(tool["dual_view_modify"], std::uint64_t(1));
  CHECK_EQ(tool["dual_view_sync"], std::uint64_t(1));
  return failures() == 0 ? 0 : 1;
}
