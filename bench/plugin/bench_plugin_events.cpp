// Cost per event of libkp_cunumpy, called through its C entry points the way
// Kokkos calls a tool (function pointers from dlsym), from a call stack a
// few application frames deep.
//
//   build/bench/plugin/bench_plugin_events --benchmark_min_time=0.5
//   CUNUMPY_TRACE=/tmp/trace.json build/bench/plugin/bench_plugin_events
//
// A "deep copy event" is one begin/end_deep_copy pair between a device space
// and the host: what the plugin does for every Kokkos::deep_copy. The copy
// itself is not made. Results are in docs/performance.md (Plugin).

#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <impl/Kokkos_Profiling_C_Interface.h>

#include <cunumpy/transfer_counter.hpp>

#include "entry_points.hpp"
#include "plugin_path.hpp"

#ifdef CUNUMPY_BENCH_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace {

bench::EntryPoints plugin;

using bench::space;

double host_data[8];
double device_data[8];

// `frames` application frames between the benchmark loop and the event, so
// that stack capture walks what it walks in a program.
template <class Event, class... Arguments>
__attribute__((noinline)) void nested(int frames, Event& event,
                                      Arguments&... arguments) {
  if (frames > 0)
    nested(frames - 1, event, arguments...);
  else
    event(arguments...);
  benchmark::ClobberMemory();
}

constexpr int application_frames = 8;

void BM_deep_copy_event(benchmark::State& state) {
  cunumpy::profiling::set_backtrace_depth(static_cast<int>(state.range(0)));
  const auto device = space("Cuda"), host = space("Host");
  auto event = [&] {
    plugin.begin_copy(device, "state", device_data, host, "state", host_data,
                      sizeof host_data);
    plugin.end_copy();
  };
  plugin.push("bench");
  for (auto _ : state)
    nested(application_frames, event);
  plugin.pop();
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "no call sites" : "call sites");
}
BENCHMARK(BM_deep_copy_event)->ArgName("backtrace")->Arg(0)->Arg(32);

// Copies from two views in turn, as a time step copies its state and then
// its diagnostics: a label the thread copied from before, but not last.
// Per copy.
void BM_deep_copy_events_two_views(benchmark::State& state) {
  cunumpy::profiling::set_backtrace_depth(32);
  const auto device = space("Cuda"), host = space("Host");
  auto events = [&] {
    plugin.begin_copy(device, "state", device_data, host, "state", host_data,
                      sizeof host_data);
    plugin.end_copy();
    plugin.begin_copy(device, "diagnostics", device_data, host, "diagnostics",
                      host_data, sizeof host_data);
    plugin.end_copy();
  };
  plugin.push("bench");
  for (auto _ : state)
    nested(application_frames, events);
  plugin.pop();
  state.SetItemsProcessed(2 * state.iterations());
  state.SetLabel("call sites");
}
BENCHMARK(BM_deep_copy_events_two_views);

#ifdef CUNUMPY_BENCH_LIBUNWIND
// Debian's libunwind (libunwind-dev) capturing what the plugin's unwinder
// captures for BM_deep_copy_event/backtrace:32: 10 frames, from the depth
// of that capture (the application frames, and the plugin's 4 frames
// between its entry point and the capture: plugin_frames). The least that
// replacing cunumpy's unwinder would add to a copy event: the event's other
// work, and a site lookup by frames (no memo of a replayed walk), come on
// top. unw_backtrace has no stop rule: with 32 frames it walks what
// CUNUMPY_BACKTRACE's default asks (here to the end of the stack).
constexpr int plugin_frames = 4;

template <class Capture>
void libunwind_capture(benchmark::State& state, Capture capture) {
  void* frames[32];
  const int count = static_cast<int>(state.range(0));
  auto event = [&] {
    nested(plugin_frames - 1, capture, frames, count); // -1: this lambda
  };
  for (auto _ : state)
    nested(application_frames, event);
  state.SetItemsProcessed(state.iterations());
}

// unw_backtrace: libunwind's fast trace (frame descriptions cached by
// address).
void BM_libunwind_backtrace(benchmark::State& state) {
  libunwind_capture(state, [](void** frames, int count) {
    benchmark::DoNotOptimize(unw_backtrace(frames, count));
  });
}
BENCHMARK(BM_libunwind_backtrace)->ArgName("frames")->Arg(10)->Arg(32);

// unw_step over a cursor of the local address space, cached per thread.
void BM_libunwind_step(benchmark::State& state) {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  libunwind_capture(state, [](void** frames, int count) {
    unw_context_t context;
    unw_cursor_t cursor;
    unw_getcontext(&context);
    unw_init_local(&cursor, &context);
    int captured = 0;
    do {
      unw_word_t ip = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      frames[captured++] = reinterpret_cast<void*>(ip);
    } while (captured < count && unw_step(&cursor) > 0);
    benchmark::DoNotOptimize(captured);
  });
}
BENCHMARK(BM_libunwind_step)->ArgName("frames")->Arg(10);
#endif

void BM_fence_event(benchmark::State& state) {
  cunumpy::profiling::set_backtrace_depth(32);
  auto event = [&] {
    std::uint64_t handle = 0;
    plugin.begin_fence("Kokkos::Cuda::fence: Unnamed Instance Fence", 0,
                       &handle);
    plugin.end_fence(handle);
  };
  for (auto _ : state)
    nested(application_frames, event);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_fence_event);

void BM_region(benchmark::State& state) {
  for (auto _ : state) {
    plugin.push("integrate");
    plugin.pop();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_region);

void BM_kernel(benchmark::State& state) {
  for (auto _ : state) {
    std::uint64_t id = 0;
    plugin.begin_for("advance", 0, &id);
    plugin.end_for(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_kernel);

// A time step of `names` regions, each named apart, pushed and popped in
// turn (real codes name tens of phases a step): per region.
void BM_regions_named_apart(benchmark::State& state) {
  static char names[64][24];
  const int count = static_cast<int>(state.range(0));
  for (int i = 0; i < count; ++i)
    std::snprintf(names[i], sizeof names[i], "phase_%02d", i);
  int next = 0;
  for (auto _ : state) {
    plugin.push(names[next]);
    plugin.pop();
    next = next + 1 == count ? 0 : next + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_regions_named_apart)
    ->ArgName("names")
    ->Arg(1)
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64);

} // namespace

int main(int argc, char** argv) {
  // The plugin's report goes to a file, not into the benchmark's output.
  ::setenv("CUNUMPY_REPORT", "/dev/null", 0);
  plugin = bench::load_entry_points(CUNUMPY_PLUGIN_PATH, "bench_plugin_events",
                                    false);
  plugin.init(0, KOKKOSP_INTERFACE_VERSION, 0, nullptr);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  plugin.finalize();
  return 0;
}
