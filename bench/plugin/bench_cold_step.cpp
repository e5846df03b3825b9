// The events of one time step of examples/legacy_app, sent to a Kokkos
// Tools library through its C entry points, timed alone right after the
// caches were flushed: what a tool costs per step when the step's kernel
// went through more memory than the caches hold, as real kernels do. The
// time loop (plugin_overhead.py) measures the same cost inside a step of a
// few hundred microseconds, where run-to-run noise is about 1 us; here it
// is measured apart from the kernel, so two builds of a tool can be told
// apart by a few tens of nanoseconds. Driven by cold_step.py, which runs
// the tools in turn, one process each.
//
//   bench_cold_step [--tool PATH] [--steps N] [--evict-bytes B]
//
// Without --tool, the events go to functions that do nothing: the floor.
// Prints the mean, the median and the quartiles of the nanoseconds per
// step's events. The mean is what a step costs on average: a tool that
// batches its work (the plugin's flush, when a thread's 32 KiB of records fill)
// pays it in one step of many, which the median leaves out.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <impl/Kokkos_Profiling_C_Interface.h>

#include "entry_points.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

bench::EntryPoints tool;
Kokkos_Profiling_SpaceHandle device_space{}, host_space{};
double device_data[450000 / 100];
double probe_value;

/// One deep_copy of a single value to the host as Kokkos 3.4 reports it:
/// the copy, and the fence inside it.
__attribute__((noinline)) void probe(int p) {
  tool.begin_copy(host_space, "probe_value", &probe_value, device_space,
                  "state", device_data + p, sizeof(double));
  std::uint64_t fence = 0;
  tool.begin_fence("Kokkos::deep_copy: copy between two spaces", 0, &fence);
  tool.end_fence(fence);
  tool.end_copy();
}

/// legacy_app's step with --probes 3: a region, a kernel, three reads.
__attribute__((noinline)) void step_events() {
  tool.push("integrate");
  std::uint64_t kernel = 0;
  tool.begin_for("legacy::advance", 0, &kernel);
  tool.end_for(kernel);
  for (int p = 0; p < 3; ++p)
    probe(p);
  tool.pop();
}

/// A few application frames above the events, as a solver's time loop has.
__attribute__((noinline)) void nested(int frames) {
  if (frames > 0)
    nested(frames - 1);
  else
    step_events();
  asm volatile("" ::: "memory");
}

/// A time stamp: the TSC where there is one (the system clock's resolution
/// is tens of nanoseconds on some virtual machines), else steady_clock.
std::uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return std::uint64_t(
      std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Reads and writes every line of `buffer`, as a kernel does.
__attribute__((noinline)) void evict(std::vector<double>& buffer) {
  for (double& x : buffer)
    x = x * 0.5 + 1.0;
  asm volatile("" ::: "memory");
}

} // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  long steps = 3000;
  std::size_t evict_bytes = std::size_t(8) << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tool" && i + 1 < argc)
      path = argv[++i];
    else if (arg == "--steps" && i + 1 < argc)
      steps = std::atol(argv[++i]);
    else if (arg == "--evict-bytes" && i + 1 < argc)
      evict_bytes = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr,
                   "bench_cold_step: unknown argument %s; usage: "
                   "bench_cold_step [--tool PATH] [--steps N] "
                   "[--evict-bytes B]\n",
                   argv[i]);
      return 2;
    }
  }
  if (steps < 10) {
    std::fprintf(stderr, "bench_cold_step: --steps must be at least 10\n");
    return 2;
  }
  std::strncpy(device_space.name, "Cuda", sizeof device_space.name - 1);
  std::strncpy(host_space.name, "Host", sizeof host_space.name - 1);
  tool = bench::load_entry_points(path, "bench_cold_step", true);
  if (tool.init != nullptr)
    tool.init(0, KOKKOSP_INTERFACE_VERSION, 0, nullptr);

  std::vector<double> buffer(std::max<std::size_t>(evict_bytes / 8, 1), 1.0);
  std::vector<double> nanoseconds;
  nanoseconds.reserve(static_cast<std::size_t>(steps));
  const auto clock_start = std::chrono::steady_clock::now();
  const std::uint64_t ticks_start = ticks();
  for (long s = 0; s < steps + 50; ++s) {
    if (evict_bytes > 0)
      evict(buffer);
    const std::uint64_t start = ticks();
    nested(8);
    const std::uint64_t end = ticks();
    if (s >= 50) // the first steps fill the tool's caches
      nanoseconds.push_back(double(end - start));
  }
  // Ticks to nanoseconds, from the whole run.
  const double ns_per_tick = std::chrono::duration<double, std::nano>(
                                 std::chrono::steady_clock::now() - clock_start)
                                 .count() /
                             double(ticks() - ticks_start);
  for (double& t : nanoseconds)
    t *= ns_per_tick;
  if (tool.finalize != nullptr)
    tool.finalize();
  std::sort(nanoseconds.begin(), nanoseconds.end());
  const auto at = [&](double q) {
    return nanoseconds[static_cast<std::size_t>(q * (nanoseconds.size() - 1))];
  };
  double mean = 0.0;
  for (double t : nanoseconds)
    mean += t;
  mean /= double(nanoseconds.size());
  std::printf("bench_cold_step: %zu steps, mean %.1f ns, median %.1f ns, "
              "quartiles %.1f %.1f ns\n",
              nanoseconds.size(), mean, at(0.5), at(0.25), at(0.75));
  return 0;
}
