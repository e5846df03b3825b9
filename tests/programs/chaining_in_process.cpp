// Callbacks another in-process hook installed before cunumpy keep receiving
// every event after cunumpy installs its own, in one order: a begin or a
// push reaches the other hook first and cunumpy then, an end or a pop
// cunumpy first (the nesting of kokkos-tools' chains), so at the other
// hook's end of a copy cunumpy has counted it already. On a Kokkos with the
// fake device the copies are real; on any other (Kokkos 4, 5) they are the
// events Kokkos reports for them, made through Kokkos' own entry points.

#include <cstdint>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

#include "check.hpp"
#include "tool_events.hpp"

namespace {

int copies = 0, copy_ends = 0, regions = 0, region_pops = 0;
/// The counter cunumpy counts in, and what it had counted at each begin
/// and end of a copy the other hook saw.
const cunumpy::profiling::TransferCounter* counter = nullptr;
std::vector<std::uint64_t> counted_at_begin, counted_at_end;

void begin_copy(Kokkos::Tools::SpaceHandle, const char*, const void*,
                Kokkos::Tools::SpaceHandle, const char*, const void*,
                uint64_t) {
  ++copies;
  if (counter != nullptr)
    counted_at_begin.push_back(counter->total());
}
void end_copy() {
  ++copy_ends;
  if (counter != nullptr)
    counted_at_end.push_back(counter->total());
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
  counter = &counted.counter();
  Kokkos::Profiling::pushRegion("step");
#if CUNUMPY_HAS_FAKE_DEVICE
  Kokkos::deep_copy(device, host);
  (void)cunumpy::to_host(device);
#else
  tool_events::copy_to_device(80);
  tool_events::copy_to_host(80);
#endif
  Kokkos::Profiling::popRegion();
  counter = nullptr;
  CHECK_EQ(counted.counter().total(), std::uint64_t(2));
  // The order: each copy counted between the other hook's begin and end.
  CHECK_EQ(counted_at_begin.size(), std::size_t(2));
  CHECK_EQ(counted_at_end.size(), std::size_t(2));
  if (counted_at_begin.size() == 2 && counted_at_end.size() == 2) {
    CHECK_EQ(counted_at_begin[0], std::uint64_t(0));
    CHECK_EQ(counted_at_end[0], std::uint64_t(1));
    CHECK_EQ(counted_at_begin[1], std::uint64_t(1));
    CHECK_EQ(counted_at_end[1], std::uint64_t(2));
  }
  CHECK_EQ(copies - before, 2);
  CHECK_EQ(copy_ends, copies);
  CHECK_EQ(regions, 1);
  CHECK_EQ(region_pops, 1);
  return failures() == 0 ? 0 : 1;
}
