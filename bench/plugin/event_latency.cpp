// The latency of each event the plugin takes, one by one: a time loop's
// regions, kernels, copies and fences called through the plugin's C entry
// points (as Kokkos calls them), each timed alone. Prints the percentiles
// of the time per call; the slowest calls are what a bulk-synchronous job
// waits for on every rank.
//
//   event_latency PLUGIN [--events N] [--threads T] [--samples FILE]
//
// --samples writes each call's time (nanoseconds, 32-bit, in the order of
// the calls, thread by thread) to FILE, for event_latency.py --repeat.
//
// The plugin reads its settings from the environment (CUNUMPY_BACKTRACE,
// CUNUMPY_ADVISE, CUNUMPY_TRACE, CUNUMPY_BUDGET, ...); event_latency.py runs
// it under each. The copies are not made: only their events.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "entry_points.hpp"

namespace {

bench::EntryPoints plugin;

using bench::space;

using Clock = std::chrono::steady_clock;

/// Times one call into `samples`.
template <class Call>
inline void timed(std::vector<std::uint32_t>& samples, Call&& call) {
  const auto start = Clock::now();
  call();
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count();
  samples.push_back(
      static_cast<std::uint32_t>(std::min<std::int64_t>(ns, UINT32_MAX)));
}

// A few application frames between the loop and the events, as in a
// program, so that call sites are walked as far as they are there.
template <class Step>
__attribute__((noinline)) void nested(int frames, Step& step) {
  if (frames > 0)
    nested(frames - 1, step);
  else
    step();
  asm volatile("" ::: "memory");
}

/// `events` events of time steps, recorded by one thread.
std::vector<std::uint32_t> run(std::size_t events, int thread) {
  std::vector<std::uint32_t> samples;
  samples.reserve(events + 16);
  const auto device = space("Cuda"), host = space("Host");
  std::vector<double> device_data(8 * 1024), host_data(8 * 1024);
  char labels[4][32];
  for (int i = 0; i < 4; ++i)
    std::snprintf(labels[i], sizeof labels[i], "field_%d_%d", thread, i);
  std::uint64_t step = 0;
  auto one_step = [&] {
    // 16 events a step: two nested regions, two kernels, three copies (a
    // 64-byte diagnostic read and two 64 KiB fields), one fence.
    timed(samples, [&] { plugin.push("time_step"); });
    timed(samples, [&] { plugin.push("advance"); });
    for (int k = 0; k < 2; ++k) {
      std::uint64_t id = 0;
      timed(samples, [&] { plugin.begin_for("advance_kernel", 0, &id); });
      timed(samples, [&] { plugin.end_for(id); });
    }
    timed(samples, [&] { plugin.pop(); });
    timed(samples, [&] {
      plugin.begin_copy(host, "dt", host_data.data(), device, "dt",
                        device_data.data(), 64);
    });
    timed(samples, [&] { plugin.end_copy(); });
    const char* label = labels[step % 4];
    for (int c = 0; c < 2; ++c) {
      timed(samples, [&] {
        plugin.begin_copy(host, label, host_data.data() + c * 4096, device,
                          label, device_data.data() + c * 4096, 32 * 1024);
      });
      timed(samples, [&] { plugin.end_copy(); });
    }
    std::uint64_t fence = 0;
    timed(samples, [&] {
      plugin.begin_fence("Kokkos::Cuda::fence: Unnamed Instance Fence", 0,
                         &fence);
    });
    timed(samples, [&] { plugin.end_fence(fence); });
    timed(samples, [&] { plugin.pop(); });
    ++step;
  };
  while (samples.size() < events)
    nested(6, one_step);
  return samples;
}

double percentile(const std::vector<std::uint32_t>& sorted, double p) {
  const auto index = static_cast<std::size_t>(
      p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: event_latency PLUGIN [--events N] [--threads T] "
                 "[--samples FILE]\n");
    return 2;
  }
  std::size_t events = 1000000;
  int threads = 1;
  const char* samples_path = nullptr;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--events") == 0)
      events = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--samples") == 0)
      samples_path = argv[i + 1];
    else {
      std::fprintf(stderr, "event_latency: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  plugin = bench::load_entry_points(argv[1], "event_latency", false);
  plugin.init(0, KOKKOSP_INTERFACE_VERSION, 0, nullptr);
  std::vector<std::vector<std::uint32_t>> results(threads);
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back([&, t] { results[t] = run(events / threads, t); });
  results[0] = run(events / threads, 0);
  for (auto& worker : workers)
    worker.join();
  const auto finalize_start = Clock::now();
  plugin.finalize();
  const double finalize_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - finalize_start)
          .count();
  std::vector<std::uint32_t> all;
  for (const auto& samples : results)
    all.insert(all.end(), samples.begin(), samples.end());
  if (samples_path != nullptr) {
    std::FILE* out = std::fopen(samples_path, "wb");
    if (out == nullptr ||
        std::fwrite(all.data(), sizeof all[0], all.size(), out) != all.size() ||
        std::fclose(out) != 0) {
      std::fprintf(stderr, "event_latency: cannot write %s\n", samples_path);
      return 1;
    }
  }
  std::sort(all.begin(), all.end());
  std::printf("events %zu threads %d p50 %.0f ns p99 %.0f ns p99.9 %.0f ns "
              "p99.99 %.0f ns max %.0f ns finalize %.1f ms\n",
              all.size(), threads, percentile(all, 50), percentile(all, 99),
              percentile(all, 99.9), percentile(all, 99.99),
              static_cast<double>(all.back()), finalize_ms);
  return 0;
}
