// A Kokkos program that knows nothing of cunumpy, for the plugin's advice
// tests on every Kokkos: its copies are made through Kokkos' own tools
// entry points with the space names of a CUDA build, each blocking (the
// fence Kokkos 4 makes inside a blocking deep_copy) and taking a known time
// on the host.
//
//   advice_events [--pattern P] [--steps N] [--wait-us US]
//
//   round-trip  (default) every step, in region "step", copies the state to
//               the device and back; and every iteration of region
//               "iterate" reads a device scalar, blocking
//   corrected   the same work with the copies at the loop's boundaries and
//               the reads not blocking (deep_copy(exec, ...))
//   redundant   every step uploads the same host data into the same device
//               buffer (real host memory, hashed with CUNUMPY_ADVISE=contents)
//
// --wait-us is the time of each copy of the state (default 500: the round
// trip saves about 19 ms, 10 times what the reads take, so that a
// preemption on a loaded machine does not change which saves more).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

namespace {

void busy_wait(double seconds) {
  const auto end =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

/// The post-copy fence Kokkos 4 makes inside a blocking deep_copy.
void post_copy_fence() {
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence("Kokkos::deep_copy: copy between contiguous "
                            "views, post deep copy fence",
                            (2u << 24) | 1u, &handle);
  Kokkos::Tools::endFence(handle);
}

} // namespace

/// A deep copy of `nbytes` into `dst` from `src`, `seconds` long, blocking
/// or not (deep_copy(exec, ...)); its call site is the macro's line.
#define COPY(dst_space, dst, src_space, src, nbytes, seconds, blocking)        \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(                                              \
        Kokkos::Tools::make_space_handle(dst_space), "dst", dst,               \
        Kokkos::Tools::make_space_handle(src_space), "state", src, (nbytes));  \
    busy_wait(seconds);                                                        \
    if (blocking)                                                              \
      post_copy_fence();                                                       \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::string pattern = "round-trip";
  int steps = 20;
  double wait = 500e-6;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--pattern" && i + 1 < argc)
      pattern = argv[++i];
    else if (arg == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (arg == "--wait-us" && i + 1 < argc)
      wait = std::atof(argv[++i]) * 1e-6;
  }
  // Host memory of the sizes copied (CUNUMPY_ADVISE=contents reads it);
  // the device's is never read.
  constexpr std::uint64_t state_bytes = 800000;
  std::vector<char> state(state_bytes);
  char* const host = state.data();
  static char device[8], scalar[8], device_scalar[8];
  // The lines the tests look for end in "// up", "// down", "// read" and
  // "// upload".
  if (pattern == "round-trip") {
    for (int step = 0; step < steps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      COPY("Cuda", device, "Host", host, state_bytes, wait, true); // up
      COPY("Host", host, "Cuda", device, state_bytes, wait, true); // down
      Kokkos::Profiling::popRegion();
    }
    for (int iteration = 0; iteration < steps; ++iteration) {
      Kokkos::Profiling::pushRegion("iterate");
      COPY("Host", scalar, "Cuda", device_scalar, 8, 100e-6, true); // read
      Kokkos::Profiling::popRegion();
    }
  } else if (pattern == "corrected") {
    COPY("Cuda", device, "Host", host, state_bytes, wait, true);
    for (int step = 0; step < steps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      busy_wait(wait);
      Kokkos::Profiling::popRegion();
    }
    COPY("Host", host, "Cuda", device, state_bytes, wait, true);
    for (int iteration = 0; iteration < steps; ++iteration) {
      Kokkos::Profiling::pushRegion("iterate");
      COPY("Host", scalar, "Cuda", device_scalar, 8, 0.0, false);
      busy_wait(100e-6);
      Kokkos::Profiling::popRegion();
    }
  } else if (pattern == "redundant") {
    std::vector<double> data(1 << 15, 1.0); // 256 KiB the host never changes
    for (int step = 0; step < steps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      const std::uint64_t nbytes = data.size() * sizeof(double);
      COPY("Cuda", device, "Host", data.data(), nbytes, wait, true); // upload
      Kokkos::Profiling::popRegion();
    }
  } else {
    std::fprintf(stderr, "advice_events: unknown pattern '%s'\n",
                 pattern.c_str());
    return 2;
  }
  std::printf("advice_events: %s, %d steps\n", pattern.c_str(), steps);
  return 0;
}
