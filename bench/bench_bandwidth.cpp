// Host <-> device bandwidth at 1, 16 and 256 MiB: raw Kokkos::deep_copy from
// and into pageable (HostSpace) and pinned host memory, against cunumpy's
// to_device, to_host and HostStaging.
//
//   build/bench/bench_bandwidth --benchmark_min_time=0.2
//
// The device is the device of the Kokkos build (CudaSpace on CUDA), or the
// fake device on a host-only Kokkos 3 build, where every copy is a memcpy
// through Kokkos::deep_copy and "pinned" memory is HostSpace. Times are
// wall-clock; bytes_per_second is the bandwidth. A cunumpy benchmark runs
// the raw Kokkos code that does the same thing in the same iterations,
// alternately with cunumpy's call: `raw_bytes_per_second` is its bandwidth
// and `cunumpy/raw` cunumpy's bandwidth divided by it (1 is no cost).

#include <benchmark/benchmark.h>
#include <chrono>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

using Space = cunumpy::testing::example_device_space;
using Pinned = cunumpy::pinned_memory_space;
using DeviceView = Kokkos::View<double*, Space>;
using PageableView = Kokkos::View<double*, Kokkos::HostSpace>;
using PinnedView = Kokkos::View<double*, Pinned>;

constexpr bool has_device = !cunumpy::is_host_memory_space_v<Space>;

std::size_t elements(const benchmark::State& state) {
  return static_cast<std::size_t>(state.range(0)) / sizeof(double);
}

/// Skips the benchmark where no copy would happen (a host-only Kokkos 4
/// build: no device, no fake device); true when it was skipped.
bool skipped_without_device(benchmark::State& state) {
  if (!has_device)
    state.SkipWithError("this Kokkos build has no device distinct from the "
                        "host (and no fake device): nothing is copied");
  return !has_device;
}

template <class Source, class Destination>
void label_copy(benchmark::State& state) {
  state.SetLabel(std::string(Source::name()) + " -> " + Destination::name());
}

void bandwidth(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.counters["MiB"] = state.range(0) / 1048576.0;
}

/// A pinned copy of `host` made by cunumpy::pin_memory (HostSpace on a build
/// without a device backend).
template <class HostView> PinnedView pinned_copy(const HostView& host) {
  if constexpr (has_device)
    return cunumpy::pin_memory<Space>(host);
  else
    return host;
}

/// Times `cunumpy_copy` (manual time) and `raw_copy` alternately, each run
/// once per iteration, the order swapped every iteration; both are counted
/// by the recorder (without stack capture, which only raw copies would pay).
template <class CunumpyCopy, class RawCopy>
void against_raw(benchmark::State& state, CunumpyCopy cunumpy_copy,
                 RawCopy raw_copy) {
  using Clock = std::chrono::steady_clock;
  const int saved_depth = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  cunumpy_copy(); // first touch of the allocators and of the device
  raw_copy();
  auto counted = cunumpy::profiling::count_transfers();
  double cunumpy_seconds = 0.0;
  double raw_seconds = 0.0;
  bool cunumpy_first = true;
  for (auto _ : state) {
    const auto start = Clock::now();
    if (cunumpy_first)
      cunumpy_copy();
    else
      raw_copy();
    const auto middle = Clock::now();
    if (cunumpy_first)
      raw_copy();
    else
      cunumpy_copy();
    const auto end = Clock::now();
    const double first = std::chrono::duration<double>(middle - start).count();
    const double second = std::chrono::duration<double>(end - middle).count();
    const double cunumpy_time = cunumpy_first ? first : second;
    cunumpy_seconds += cunumpy_time;
    raw_seconds += cunumpy_first ? second : first;
    state.SetIterationTime(cunumpy_time);
    cunumpy_first = !cunumpy_first;
  }
  counted.stop();
  cunumpy::profiling::set_backtrace_depth(saved_depth);
  bandwidth(state);
  const double bytes = static_cast<double>(state.iterations()) *
                       static_cast<double>(state.range(0));
  state.counters["raw_bytes_per_second"] = benchmark::Counter(
      raw_seconds > 0 ? bytes / raw_seconds : 0, benchmark::Counter::kDefaults,
      benchmark::Counter::OneK::kIs1024);
  state.counters["cunumpy/raw"] =
      cunumpy_seconds > 0 ? raw_seconds / cunumpy_seconds : 0;
  // Per iteration: 2 (cunumpy's copy and the raw one) when the recorder saw
  // both.
  state.counters["transfers"] =
      benchmark::Counter(static_cast<double>(counted.counter().total()),
                         benchmark::Counter::kAvgIterations);
}

// Raw Kokkos::deep_copy between allocated views: the bandwidth of the copy
// alone, from pageable or pinned host memory.
template <class HostView> void deep_copy_to_device(benchmark::State& state) {
  if (skipped_without_device(state))
    return;
  HostView host("host", elements(state));
  DeviceView device("device", elements(state));
  Kokkos::deep_copy(device, host);
  for (auto _ : state)
    Kokkos::deep_copy(device, host);
  bandwidth(state);
  label_copy<typename HostView::memory_space, Space>(state);
}

template <class HostView> void deep_copy_to_host(benchmark::State& state) {
  if (skipped_without_device(state))
    return;
  DeviceView device("device", elements(state));
  HostView host("host", elements(state));
  Kokkos::deep_copy(host, device);
  for (auto _ : state)
    Kokkos::deep_copy(host, device);
  bandwidth(state);
  label_copy<Space, typename HostView::memory_space>(state);
}

/// The source of a copy to the device: a pageable host view, or a copy of
/// one pinned by cunumpy::pin_memory. (No view is default-constructed: the
/// Kokkos 4.6.99 snapshot crashes on copying or destroying one.)
template <bool pinned> auto host_source(const benchmark::State& state) {
  PageableView pageable("host", elements(state));
  if constexpr (pinned)
    return pinned_copy(pageable);
  else
    return pageable;
}

// cunumpy::to_device of a pageable or pinned host view: a new device view
// per copy. Raw: a new device view without initialization, then deep_copy.
template <bool from_pinned> void cunumpy_to_device(benchmark::State& state) {
  if (skipped_without_device(state))
    return;
  const auto host = host_source<from_pinned>(state);
  against_raw(
      state,
      [&] {
        auto device = cunumpy::to_device<Space>(host);
        benchmark::DoNotOptimize(device.data());
      },
      [&] {
        DeviceView device(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "device"),
            host.extent(0));
        Kokkos::deep_copy(device, host);
        benchmark::DoNotOptimize(device.data());
      });
  label_copy<typename decltype(host)::memory_space, Space>(state);
}

// cunumpy::to_host: a new pageable host view per copy (whose pages the copy
// touches first). Raw: a new host view without initialization, then
// deep_copy.
void cunumpy_to_host(benchmark::State& state) {
  if (skipped_without_device(state))
    return;
  DeviceView device("device", elements(state));
  against_raw(
      state,
      [&] {
        auto host = cunumpy::to_host(device);
        benchmark::DoNotOptimize(host.data());
      },
      [&] {
        PageableView host(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "host"),
            device.extent(0));
        Kokkos::deep_copy(host, device);
        benchmark::DoNotOptimize(host.data());
      });
  label_copy<Space, Kokkos::HostSpace>(state);
}

// cunumpy::HostStaging: an asynchronous copy into a reused pinned buffer,
// waited for at once. Raw: deep_copy into an allocated pinned view.
void host_staging_to_host(benchmark::State& state) {
  if (skipped_without_device(state))
    return;
  DeviceView device("device", elements(state));
  PinnedView pinned("pinned", elements(state));
  cunumpy::HostStaging staging;
  against_raw(
      state,
      [&] {
        auto host = staging.copy(device).result();
        benchmark::DoNotOptimize(host.data());
      },
      [&] {
        Kokkos::deep_copy(pinned, device);
        benchmark::DoNotOptimize(pinned.data());
      });
  label_copy<Space, Pinned>(state);
  state.counters["allocations"] = static_cast<double>(staging.allocations());
}

void sizes(benchmark::internal::Benchmark* benchmark) {
  benchmark->Arg(1 << 20)->Arg(16 << 20)->Arg(256 << 20);
  benchmark->ArgName("bytes")->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(deep_copy_to_device<PageableView>)
    ->Name("to_device/deep_copy/pageable")
    ->Apply(sizes)
    ->UseRealTime();
BENCHMARK(deep_copy_to_device<PinnedView>)
    ->Name("to_device/deep_copy/pinned")
    ->Apply(sizes)
    ->UseRealTime();
BENCHMARK(cunumpy_to_device<false>)
    ->Name("to_device/cunumpy/pageable")
    ->Apply(sizes)
    ->UseManualTime();
BENCHMARK(cunumpy_to_device<true>)
    ->Name("to_device/cunumpy/pinned")
    ->Apply(sizes)
    ->UseManualTime();
BENCHMARK(deep_copy_to_host<PageableView>)
    ->Name("to_host/deep_copy/pageable")
    ->Apply(sizes)
    ->UseRealTime();
BENCHMARK(deep_copy_to_host<PinnedView>)
    ->Name("to_host/deep_copy/pinned")
    ->Apply(sizes)
    ->UseRealTime();
BENCHMARK(cunumpy_to_host)
    ->Name("to_host/cunumpy/pageable")
    ->Apply(sizes)
    ->UseManualTime();
BENCHMARK(host_staging_to_host)
    ->Name("to_host/HostStaging/pinned")
    ->Apply(sizes)
    ->UseManualTime();
