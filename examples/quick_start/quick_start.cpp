// One copy to the device, a time loop that stays there, one copy back:
// cunumpy counts each copy with the line that made it.
#include <cstdio>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

using Device = cunumpy::testing::example_device_space; // fake on a CPU

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::setup_example_device();
  Kokkos::View<double*, Kokkos::HostSpace> initial("state", 100000);

  auto counted = cunumpy::profiling::count_transfers();
  auto state = cunumpy::to_device<Device>(initial); // one copy up
  for (int step = 0; step < 100; ++step)
    Kokkos::parallel_for(
        "advance", Kokkos::RangePolicy<Device::execution_space>(0, 100000),
        KOKKOS_LAMBDA(int i) { state(i) += 0.1 * (1.0 - state(i)); });
  auto result = cunumpy::to_host(state); // one copy down
  std::printf("%s", counted.counter().report().c_str());
}
