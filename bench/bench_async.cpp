// Reading one scalar per iteration, blocking versus one iteration late with
// to_host_async; output snapshots into a fresh host view versus HostStaging.
//
//   build/bench/bench_async --benchmark_min_time=0.5
//
// The "device" is the device of the Kokkos build, the fake device on a
// host-only Kokkos 3 build (copies are memcpy calls through
// Kokkos::deep_copy), or the host. Results and their reading are in
// docs/performance.md, section "Async reads and staging".

#include <benchmark/benchmark.h>
#include <optional>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

namespace {

using Space = cunumpy::testing::example_device_space;
using Exec = std::conditional_t<cunumpy::has_device_backend,
                                Kokkos::DefaultExecutionSpace,
                                Kokkos::DefaultHostExecutionSpace>;
using Device = Kokkos::Device<Exec, Space>;

/// One iteration of a solver: an update of n values, then the sum of their
/// squares into a device scalar (a residual norm, say).
struct Iteration {
  Kokkos::View<double*, Device> x;
  Kokkos::View<double, Device> norm;

  explicit Iteration(int n) : x("x", n), norm("norm") {}

  void operator()() const {
    auto values = x;
    Kokkos::parallel_for(
        "bench::update", Kokkos::RangePolicy<Exec>(0, values.extent(0)),
        KOKKOS_LAMBDA(int i) { values(i) = 0.5 * values(i) + 1.0; });
    Kokkos::parallel_reduce(
        "bench::norm", Kokkos::RangePolicy<Exec>(0, values.extent(0)),
        KOKKOS_LAMBDA(int i, double& sum) { sum += values(i) * values(i); },
        norm);
  }
};

void iterations_per_second(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations());
  state.counters["n"] = static_cast<double>(state.range(0));
}

// The iteration alone, the host never waiting: the lower bound.
void BM_IterationWithoutRead(benchmark::State& state) {
  Iteration iteration(static_cast<int>(state.range(0)));
  for (auto _ : state)
    iteration();
  Kokkos::fence();
  iterations_per_second(state);
}

// The convergence test reads the norm of this iteration: the host waits for
// it before queuing the next one.
void BM_IterationBlockingRead(benchmark::State& state) {
  Iteration iteration(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    iteration();
    const double norm = cunumpy::to_host(iteration.norm)();
    benchmark::DoNotOptimize(norm);
  }
  iterations_per_second(state);
}

// The norm is read one iteration late: this iteration's read is queued, the
// previous one is looked at (waiting only if its copy has not finished).
void BM_IterationAsyncReadOneLate(benchmark::State& state) {
  Iteration iteration(static_cast<int>(state.range(0)));
  std::optional<cunumpy::PendingHost<double>> previous;
  for (auto _ : state) {
    iteration();
    auto current = cunumpy::to_host_async(iteration.norm);
    if (previous) {
      const double norm = previous->result();
      benchmark::DoNotOptimize(norm);
    }
    previous.emplace(std::move(current));
  }
  previous.reset();
  Kokkos::fence();
  iterations_per_second(state);
}

void snapshot_bytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * state.range(0) *
                          static_cast<std::int64_t>(sizeof(double)));
  state.counters["MiB"] = state.range(0) * sizeof(double) / 1048576.0;
}

// Each snapshot goes into a new host view (a new allocation, whose pages
// are touched for the first time by the copy).
void BM_SnapshotFreshHostView(benchmark::State& state) {
  Kokkos::View<double*, Device> field("field", state.range(0));
  for (auto _ : state) {
    auto host = cunumpy::to_host(field);
    benchmark::DoNotOptimize(host.data());
  }
  snapshot_bytes(state);
}

// Each snapshot goes into the staging's pinned buffer, reused.
void BM_SnapshotHostStaging(benchmark::State& state) {
  Kokkos::View<double*, Device> field("field", state.range(0));
  cunumpy::HostStaging staging;
  for (auto _ : state) {
    auto host = staging.copy(field).result();
    benchmark::DoNotOptimize(host.data());
  }
  snapshot_bytes(state);
  state.counters["allocations"] = static_cast<double>(staging.allocations());
}

BENCHMARK(BM_IterationWithoutRead)->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(BM_IterationBlockingRead)->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(BM_IterationAsyncReadOneLate)->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(BM_SnapshotFreshHostView)->Arg(1 << 17)->Arg(1 << 23);
BENCHMARK(BM_SnapshotHostStaging)->Arg(1 << 17)->Arg(1 << 23);

} // namespace
