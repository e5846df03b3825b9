// Cost of cunumpy's recorder, measured against Kokkos in the same run.
//
//   build/bench/bench_recorder --benchmark_min_time=0.5
//
// On a host-only Kokkos 3 build the device is the fake device, whose copies
// are memcpy calls going through Kokkos::deep_copy and its Tools callbacks.
// Results and their reading are in docs/performance.md.

#include <benchmark/benchmark.h>
#include <cstring>
#include <malloc.h>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

using Device = cunumpy::testing::example_device_space;
namespace KT = Kokkos::Tools::Experimental;

/// The Kokkos Tools callbacks with and without cunumpy's hooks.
struct Callbacks {
  KT::EventSet none;
  KT::EventSet cunumpy;
};

Callbacks& callbacks() {
  static Callbacks saved = [] {
    Callbacks c;
    c.none = KT::get_callbacks();
    cunumpy::Impl::ensure_hooks();
    c.cunumpy = KT::get_callbacks();
    return c;
  }();
  return saved;
}

/// While alive, Kokkos runs with no callbacks at all.
struct WithoutCallbacks {
  WithoutCallbacks() { KT::set_callbacks(callbacks().none); }
  ~WithoutCallbacks() { KT::set_callbacks(callbacks().cunumpy); }
};

template <class Copy> void copy_loop(benchmark::State& state, Copy copy) {
  for (auto _ : state)
    copy();
  state.SetItemsProcessed(state.iterations());
}

// An 8-byte host-to-device Kokkos::deep_copy: the recorder's per-event cost.
struct EightBytes {
  Kokkos::View<double*, Kokkos::HostSpace> host{"host", 1};
  Kokkos::View<double*, Device> device{"device", 1};
  void operator()() const { Kokkos::deep_copy(device, host); }
};

void copy_8_bytes_no_callbacks(benchmark::State& state) {
  EightBytes copy;
  WithoutCallbacks bare;
  copy_loop(state, copy);
}

void empty_begin_copy(Kokkos::Tools::SpaceHandle, const char*, const void*,
                      Kokkos::Tools::SpaceHandle, const char*, const void*,
                      uint64_t) {}
void empty_end_copy() {}

// Kokkos' own cost of having a deep-copy callback (labels, space handles).
void copy_8_bytes_empty_callbacks(benchmark::State& state) {
  EightBytes copy;
  WithoutCallbacks bare;
  auto empty = callbacks().none;
  empty.begin_deep_copy = &empty_begin_copy;
  empty.end_deep_copy = &empty_end_copy;
  KT::set_callbacks(empty);
  copy_loop(state, copy);
}

void copy_8_bytes_hooks_nothing_counting(benchmark::State& state) {
  EightBytes copy;
  callbacks();
  copy_loop(state, copy);
}

void copy_8_bytes_counted(benchmark::State& state) {
  EightBytes copy;
  const int depth = static_cast<int>(state.range(0));
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(depth);
  auto counted = cunumpy::profiling::count_transfers();
  copy_loop(state, copy);
  counted.stop();
  cunumpy::profiling::set_backtrace_depth(saved);
  state.counters["counted"] =
      static_cast<double>(counted.counter().to_device());
  state.SetLabel("backtrace depth " + std::to_string(depth));
}

void copy_8_bytes_budget_three_nested_phases(benchmark::State& state) {
  EightBytes copy;
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  cunumpy::profiling::TransferBudget budget;
  {
    auto outer = budget.phase("outer");
    auto middle = budget.phase("middle");
    auto inner = budget.phase("inner");
    copy_loop(state, copy);
  }
  cunumpy::profiling::set_backtrace_depth(saved);
  state.counters["counted"] = static_cast<double>(budget["inner"].to_device());
}

// What advice costs per copy, in one run: a counter that records nothing for
// advice (AdviceRecording::off), the default (on: what the rules need from
// each copy) and the contents of the host side hashed (contents: XXH3 of
// the source of a copy to the device, of the destination before and after
// a copy to the host). Arguments: the recording (0 off, 1 on, 2 contents),
// the bytes, the direction (0 to the device, 1 to the host). No stack
// capture, to show advice's cost alone.
void copy_counted_advice(benchmark::State& state) {
  using cunumpy::profiling::AdviceRecording;
  const auto recording = static_cast<AdviceRecording>(state.range(0));
  const auto nbytes = static_cast<std::size_t>(state.range(1));
  const bool to_host = state.range(2) != 0;
  Kokkos::View<char*, Kokkos::HostSpace> host("host", nbytes);
  Kokkos::View<char*, Device> device("device", nbytes);
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  cunumpy::profiling::TransferCounter counter(
      cunumpy::profiling::TransferCounter::default_max_events, recording);
  {
    auto counted = cunumpy::profiling::count_transfers(counter);
    if (to_host)
      copy_loop(state, [&] { Kokkos::deep_copy(host, device); });
    else
      copy_loop(state, [&] { Kokkos::deep_copy(device, host); });
  }
  cunumpy::profiling::set_backtrace_depth(saved);
  state.SetBytesProcessed(state.iterations() *
                          static_cast<std::int64_t>(nbytes));
  state.counters["counted"] =
      static_cast<double>(to_host ? counter.to_host() : counter.to_device());
  const char* names[] = {"advice off", "advice on", "contents"};
  state.SetLabel(std::string(names[state.range(0)]) + ", " +
                 std::to_string(nbytes) + " bytes " +
                 (to_host ? "to the host" : "to the device"));
}

// The same in a TransferBudget with three nested phases (as the plugin
// counts): 8 bytes to the device.
void copy_8_bytes_budget_advice(benchmark::State& state) {
  using cunumpy::profiling::AdviceRecording;
  const auto recording = static_cast<AdviceRecording>(state.range(0));
  EightBytes copy;
  const int saved = cunumpy::profiling::backtrace_depth();
  cunumpy::profiling::set_backtrace_depth(0);
  cunumpy::profiling::TransferBudget budget(cunumpy::profiling::BudgetOptions{
      true, cunumpy::profiling::TransferCounter::default_max_events,
      recording});
  {
    auto outer = budget.phase("outer");
    auto middle = budget.phase("middle");
    auto inner = budget.phase("inner");
    copy_loop(state, copy);
  }
  cunumpy::profiling::set_backtrace_depth(saved);
  state.counters["counted"] = static_cast<double>(budget["inner"].to_device());
  const char* names[] = {"advice off", "advice on", "contents"};
  state.SetLabel(names[state.range(0)]);
}

// 64 MiB conversions against the raw Kokkos code that does the same: a new
// view, then deep_copy.
constexpr std::size_t big = 64u << 20;
using BigHost = Kokkos::View<double*, Kokkos::HostSpace>;
using BigDevice = Kokkos::View<double*, Device>;

void raw_deep_copy_64mib_to_device(benchmark::State& state) {
  BigHost host("host", big / sizeof(double));
  for (auto _ : state) {
    BigDevice device(Kokkos::view_alloc(Kokkos::WithoutInitializing, "d"),
                     host.extent(0));
    Kokkos::deep_copy(device, host);
    benchmark::DoNotOptimize(device.data());
  }
  state.SetBytesProcessed(state.iterations() * big);
}

void cunumpy_to_device_64mib(benchmark::State& state) {
  BigHost host("host", big / sizeof(double));
  auto counted = cunumpy::profiling::count_transfers();
  for (auto _ : state) {
    auto device = cunumpy::to_device<Device>(host);
    benchmark::DoNotOptimize(device.data());
  }
  state.SetBytesProcessed(state.iterations() * big);
}

void raw_deep_copy_64mib_to_host(benchmark::State& state) {
  BigDevice device("device", big / sizeof(double));
  for (auto _ : state) {
    BigHost host(Kokkos::view_alloc(Kokkos::WithoutInitializing, "h"),
                 device.extent(0));
    Kokkos::deep_copy(host, device);
    benchmark::DoNotOptimize(host.data());
  }
  state.SetBytesProcessed(state.iterations() * big);
}

void cunumpy_to_host_64mib(benchmark::State& state) {
  BigDevice device("device", big / sizeof(double));
  auto counted = cunumpy::profiling::count_transfers();
  for (auto _ : state) {
    auto host = cunumpy::to_host(device);
    benchmark::DoNotOptimize(host.data());
  }
  state.SetBytesProcessed(state.iterations() * big);
}

void memcpy_64mib_into_new_buffer(benchmark::State& state) {
  std::vector<char> source(big, 1);
  for (auto _ : state) {
    char* destination = static_cast<char*>(std::malloc(big));
    std::memcpy(destination, source.data(), big);
    benchmark::DoNotOptimize(destination);
    std::free(destination);
  }
  state.SetBytesProcessed(state.iterations() * big);
}

// Same-space to_host: returns the view itself.
void same_space_to_host(benchmark::State& state) {
  Kokkos::View<double*, Kokkos::HostSpace> host("host", 100);
  for (auto _ : state) {
    auto same = cunumpy::to_host(host);
    benchmark::DoNotOptimize(same.data());
  }
}

// Memory of a counter after 10^7 events from 100 call sites (heap growth
// measured with mallinfo2, raw events capped at the default 4096).
void counter_memory_1e7_events_100_sites(benchmark::State& state) {
  std::vector<std::string> files;
  for (int site = 0; site < 100; ++site)
    files.push_back("site_" + std::to_string(site) + ".cpp");
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    cunumpy::profiling::TransferCounter counter;
    {
      auto counted = cunumpy::profiling::count_transfers(counter);
      for (int event = 0; event < 10'000'000; ++event) {
        const int site = event % 100;
        cunumpy::Impl::record_marker(
            cunumpy::EventKind::fallback, "kernel()",
            {files[site].c_str(), site + 1, "benchmark"});
      }
    }
    const std::size_t after = mallinfo2().uordblks;
    state.counters["counter_MiB"] = (after - before) / (1024.0 * 1024.0);
    state.counters["events"] = static_cast<double>(counter.fallback());
    state.counters["sites"] = static_cast<double>(counter.sites().size());
  }
}

} // namespace

BENCHMARK(copy_8_bytes_no_callbacks);
BENCHMARK(copy_8_bytes_empty_callbacks);
BENCHMARK(copy_8_bytes_hooks_nothing_counting);
BENCHMARK(copy_8_bytes_counted)->Arg(0)->Arg(32);
BENCHMARK(copy_8_bytes_budget_three_nested_phases);
// Advice off, on and with contents; run them with
// --benchmark_enable_random_interleaving=true so that their repetitions
// alternate and one run gives their ratios under the same load.
BENCHMARK(copy_counted_advice)
    ->ArgNames({"advice", "bytes", "to_host"})
    ->ArgsProduct({{0, 1, 2}, {8, 65536, 1 << 20}, {0, 1}});
BENCHMARK(copy_8_bytes_budget_advice)->ArgName("advice")->DenseRange(0, 2);
BENCHMARK(raw_deep_copy_64mib_to_device)->Unit(benchmark::kMillisecond);
BENCHMARK(cunumpy_to_device_64mib)->Unit(benchmark::kMillisecond);
BENCHMARK(raw_deep_copy_64mib_to_host)->Unit(benchmark::kMillisecond);
BENCHMARK(cunumpy_to_host_64mib)->Unit(benchmark::kMillisecond);
BENCHMARK(memcpy_64mib_into_new_buffer)->Unit(benchmark::kMillisecond);
BENCHMARK(same_space_to_host);
BENCHMARK(counter_memory_1e7_events_100_sites)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
