// Callbacks another in-process hook installed before cunumpy keep receiving
// every event after cunumpy installs its own. On a Kokkos with the fake
// device the copies are real; on any other (Kokkos 4, 5) they are the
// events Kokkos reports for them, made through Kokkos' own entry points.

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "check.hpp"
#include "tool_events.hpp"

namespace {

int copies = 0, copy_ends = 0, regions = 0, region_pops = 0;

void begin_copy(Kokkos::Tools::SpaceHandle, const char*, const void*,
                Kokkos::Tools::SpaceHandle, const char*, const void*,
                uint64_t) {
  ++copies;
}
void end_copy() {
  ++copy_ends;
}
void push(const char*) {
  ++regions;
}
void pop() {
  ++region_pops;
}

} // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
#if CUNUMPY_HAS_FAKE_DEVICE
  cunumpy::testing::register_fake_device();
#endif
  auto callbacks = Kokkos::Tools::Experimental::get_callbacks();
  callbacks.begin_deep_copy = &begin_copy;
  callbacks.end_deep_copy = &end_copy;
  callbacks.push_region = &push;
  callbacks.pop_region = &pop;
  Kokkos::Tools::Experimental::set_callbacks(callbacks);

#if CUNUMPY_HAS_FAKE_DEVICE
  using cunumpy::testing::FakeDevice;
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 10);
  Kokkos::View<double*, FakeDevice> device("device", 10);
#endif
  const int before = copies;
  auto counted = cunumpy::profiling::count_transfers(); // installs cunumpy
  Kokkos::Profiling::pushRegion("step");
#if CUNUMPY_HAS_FAKE_DEVICE
  Kokkos::deep_copy(device, host);
  (void)cunumpy::to_host(device);
#else
  tool_events::copy_to_device(80);
  tool_events::copy_to_host(80);
#endif
  Kokkos::Profiling::popRegion();
  CHECK_EQ(counted.counter().total(), std::uint64_t(2));
  CHECK_EQ(copies - before, 2);
  CHECK_EQ(copy_ends, copies);
  CHECK_EQ(regions, 1);
  CHECK_EQ(region_pops, 1);
  return failures() == 0 ? 0 : 1;
}
