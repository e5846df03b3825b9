// N 8-byte host-to-device Kokkos::deep_copy calls, with cunumpy's hooks
// installed and nothing counting (mode 0) or counted by count_transfers
// without stack capture (mode 1): a fixed amount of work to count
// instructions with, where Google Benchmark's adaptive iteration counts
// would not do (bench/instructions_per_copy.sh).
//
//   copy_loop <copies> <mode>

#include <cstdio>
#include <cstdlib>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: copy_loop <copies> <mode 0|1>\n");
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  cunumpy::testing::register_fake_device();
  using Device = cunumpy::testing::example_device_space;
  const long copies = std::atol(argv[1]);
  const bool counted = std::atoi(argv[2]) == 1;
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 1);
  Kokkos::View<double*, Device> device("device", 1);
  cunumpy::Impl::ensure_hooks();
  if (counted) {
    cunumpy::profiling::set_backtrace_depth(0);
    auto scope = cunumpy::profiling::count_transfers();
    for (long i = 0; i < copies; ++i)
      Kokkos::deep_copy(device, host);
  } else {
    for (long i = 0; i < copies; ++i)
      Kokkos::deep_copy(device, host);
  }
  return 0;
}
