// The main of every benchmark in bench/: Kokkos is initialized once and the
// fake device is registered as a device space.

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <cunumpy/testing/fake_device.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
