// What CUDA's own record of the process (the CUPTI collector) must see on a
// GPU, checked in the program: raw cudaMemcpy from pageable and pinned
// memory, cuBLAS' SetVector/GetVector, a managed buffer written by a kernel
// and read on the host (its migrations counted, or the budget NOT CHECKED
// where CUDA records none), cudaDeviceSynchronize, and (on a Kokkos CUDA
// build) a Kokkos::deep_copy counted once and enriched, and the copies
// Kokkos makes in its first kernel launch and a view's allocation counted
// as Kokkos' own, not as transfers. Built with
// -DCUNUMPY_BUILD_CUDA_TESTS=ON; scripts/gpu-check runs it. Exit status 0:
// every check passed; 77: the CUDA view is not on (the reason is printed).

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <string>
#include <vector>
#ifdef CUNUMPY_TEST_CUBLAS
#include <cublas_v2.h>
#endif

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

void cuda_traffic_fill(double* values, int n, double value);

namespace {

using cunumpy::EventKind;
using cunumpy::MemoryKind;
using cunumpy::profiling::TransferCounter;

int failures = 0;

#ifdef KOKKOS_ENABLE_CUDA
/// A view of ones made and summed on the device, in a function of its own
/// (nvcc needs extended lambdas outside private member functions).
double sum_on_device(int n) {
  Kokkos::View<double*> ones("ones", n);
  Kokkos::parallel_for(
      "cuda_traffic::fill", n, KOKKOS_LAMBDA(int i) { ones(i) = 1.0; });
  double total = 0.0;
  Kokkos::parallel_reduce(
      "cuda_traffic::sum", n,
      KOKKOS_LAMBDA(int i, double& sum) { sum += ones(i); }, total);
  return total;
}
#endif

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

std::string shown(std::uint64_t value) {
  return std::to_string(value);
}

/// The one event of `kind` the counter holds, or null.
const cunumpy::Event* only(const std::vector<cunumpy::Event>& events,
                           EventKind kind) {
  const cunumpy::Event* found = nullptr;
  for (const auto& event : events)
    if (event.kind == kind) {
      if (found != nullptr)
        return nullptr;
      found = &event;
    }
  return found;
}

void check_copy(const TransferCounter& counter, EventKind kind,
                std::uint64_t nbytes, MemoryKind src, MemoryKind dst,
                const std::string& what) {
  const auto events = counter.events();
  const cunumpy::Event* event = only(events, kind);
  check(counter.count(kind) == 1 && counter.bytes(kind) == nbytes,
        what + ": one " + std::string(to_string(kind)) + " of " +
            shown(nbytes) + " bytes (got " + shown(counter.count(kind)) + ", " +
            shown(counter.bytes(kind)) + " bytes)");
  if (event == nullptr)
    return;
  check(event->source == "cuda", what + ": source cuda");
  check(event->src_memory == src && event->dst_memory == dst,
        what + ": memory " + std::string(to_string(event->src_memory)) +
            " -> " + std::string(to_string(event->dst_memory)));
  check(event->device_duration > 0.0, what + ": timed on the device");
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  cudaFree(nullptr); // a context before cunumpy starts
  constexpr int n = 1 << 20;
  constexpr std::uint64_t nbytes = n * sizeof(double);
  std::vector<double> pageable(n, 1.0);
  double* pinned = nullptr;
  double* device = nullptr;
  double* managed = nullptr;
  cudaMallocHost(&pinned, nbytes);
  cudaMalloc(&device, nbytes);

  {
    auto warm = cunumpy::profiling::count_transfers(); // starts the collector
  }
  // After the start: the first managed allocation turns on the
  // unified-memory counters.
  cudaMallocManaged(&managed, nbytes);
  const auto view = cunumpy::profiling::cuda_view();
  std::printf("%s\n", cunumpy::profiling::cuda_view_line(view).c_str());
  if (!view.on)
    return 77;

  {
    auto scope = cunumpy::profiling::count_transfers();
    cudaMemcpy(device, pageable.data(), nbytes, cudaMemcpyHostToDevice);
    const auto& counter = scope.counter();
    check_copy(counter, EventKind::to_device, nbytes, MemoryKind::pageable,
               MemoryKind::device, "cudaMemcpy from pageable memory");
    check(counter.syncs() == 1,
          "its implicit wait (syncs " + shown(counter.syncs()) + ")");
    check(counter.report().find("[cuda]") != std::string::npos,
          "the report marks it [cuda]");
  }
  {
    auto scope = cunumpy::profiling::count_transfers();
    cudaMemcpy(pinned, device, nbytes, cudaMemcpyDeviceToHost);
    check_copy(scope.counter(), EventKind::to_host, nbytes, MemoryKind::device,
               MemoryKind::pinned, "cudaMemcpy to pinned memory");
  }
  {
    auto scope = cunumpy::profiling::count_transfers();
    cudaMemcpyAsync(device, pinned, nbytes, cudaMemcpyHostToDevice, nullptr);
    cudaDeviceSynchronize();
    const auto& counter = scope.counter();
    check_copy(counter, EventKind::to_device, nbytes, MemoryKind::pinned,
               MemoryKind::device, "cudaMemcpyAsync from pinned memory");
    check(counter.async_count(EventKind::to_device) == 1, "it is async");
    check(counter.syncs() == 1, "cudaDeviceSynchronize is one sync (syncs " +
                                    shown(counter.syncs()) + ")");
  }
#ifdef CUNUMPY_TEST_CUBLAS
  {
    cublasHandle_t handle = nullptr;
    cublasCreate(&handle);
    auto scope = cunumpy::profiling::count_transfers();
    cublasSetVector(n, sizeof(double), pageable.data(), 1, device, 1);
    cublasGetVector(n, sizeof(double), device, 1, pageable.data(), 1);
    const auto& counter = scope.counter();
    check(counter.to_device() >= 1 && counter.bytes_to_device() == nbytes,
          "cublasSetVector: " + shown(nbytes) + " bytes to the device (got " +
              shown(counter.bytes_to_device()) + ")");
    check(counter.to_host() >= 1 && counter.bytes_to_host() == nbytes,
          "cublasGetVector: " + shown(nbytes) + " bytes to the host (got " +
              shown(counter.bytes_to_host()) + ")");
    cublasDestroy(handle);
  }
#endif
  {
    cunumpy::profiling::TransferBudget budget;
    budget.require(
        "write", cunumpy::profiling::Rule().allow(
                     EventKind::migration,
                     cunumpy::profiling::Limits().max_total_bytes(2 * nbytes)));
    budget.require("read", cunumpy::profiling::Rule());
    for (int i = 0; i < n; ++i)
      managed[i] = 0.0; // on the host first
    double sum = 0.0;
    Kokkos::Profiling::pushRegion("write");
    cuda_traffic_fill(managed, n, 2.0); // migrates to the device
    Kokkos::Profiling::popRegion();
    Kokkos::Profiling::pushRegion("read");
    for (int i = 0; i < n; ++i)
      sum += managed[i]; // migrates back: forbidden here
    Kokkos::Profiling::popRegion();
    check(sum == 2.0 * n, "the kernel wrote the managed buffer");
    const auto written = budget["write"].bytes_migrated();
    const auto read = budget["read"].bytes_migrated();
    const auto violations = budget.violations();
    const std::string unseen =
        cunumpy::profiling::cuda_view().migrations_unseen;
    if (!unseen.empty()) {
      // CUDA records no migration here: the budget must not pass.
      std::printf("note migrations not seen: %s\n", unseen.c_str());
      check(written == 0 && read == 0, "no migration counted");
      check(cunumpy::profiling::verdict(budget.violations()) ==
                cunumpy::profiling::Verdict::unchecked,
            "the budget is NOT CHECKED, not ok:\n" + budget.report());
    } else {
      check(written >= nbytes / 2 && written <= 2 * nbytes,
            "migrations to the device in 'write': " + shown(written) +
                " bytes");
      check(read >= nbytes / 2,
            "migrations to the host in 'read': " + shown(read) + " bytes");
      check(violations.size() == 1 && violations[0].phase == "read" &&
                violations[0].kind == EventKind::migration,
            "the budget forbids the migrations of 'read' only:\n" +
                budget.report());
    }
  }
#ifdef KOKKOS_ENABLE_CUDA
  {
    Kokkos::View<double*> on_device("on_device", n);
    auto mirror = Kokkos::create_mirror_view(on_device);
    auto scope = cunumpy::profiling::count_transfers();
    Kokkos::deep_copy(on_device, mirror);
    const auto& counter = scope.counter();
    check(counter.to_device() == 1, "Kokkos::deep_copy is one event (got " +
                                        shown(counter.to_device()) + ")");
    const auto events = counter.events();
    const cunumpy::Event* event = only(events, EventKind::to_device);
    check(event != nullptr && event->source == "kokkos" &&
              event->src_memory != MemoryKind::unknown &&
              event->device_duration > 0.0,
          "it is Kokkos', enriched with CUDA's memory kinds and device time");
  }
  {
    // This translation unit's first kernel: Kokkos copies its lock arrays'
    // pointers; the view's allocation copies its header.
    auto scope = cunumpy::profiling::count_transfers();
    cunumpy::profiling::TransferBudget budget;
    budget.require("step", cunumpy::profiling::Rule());
    Kokkos::Profiling::pushRegion("step");
    const double total = sum_on_device(n);
    Kokkos::Profiling::popRegion();
    const auto& counter = scope.counter();
    check(total == static_cast<double>(n), "the kernel ran");
    check(counter.total() == 0, "Kokkos' own copies are no transfers (got " +
                                    shown(counter.total()) + ")\n" +
                                    counter.report());
    check(counter.count(EventKind::kokkos_own) >= 1,
          "and are reported as Kokkos' own (got " +
              shown(counter.count(EventKind::kokkos_own)) + ")");
    check(cunumpy::profiling::verdict(budget.violations()) ==
              cunumpy::profiling::Verdict::ok,
          "a phase that forbids copies passes:\n" + budget.report());
  }
#endif
  cudaFree(managed);
  cudaFree(device);
  cudaFreeHost(pinned);
  const auto after = cunumpy::profiling::cuda_view();
  std::printf("CUDA records: %llu copies (%llu described, %llu unmatched, "
              "%llu too late), %llu unified-memory records, %llu bytes "
              "migrated, %llu dropped\n",
              static_cast<unsigned long long>(after.copy_records),
              static_cast<unsigned long long>(after.described),
              static_cast<unsigned long long>(after.unmatched),
              static_cast<unsigned long long>(after.too_late),
              static_cast<unsigned long long>(after.migration_records),
              static_cast<unsigned long long>(after.migrated_bytes),
              static_cast<unsigned long long>(after.dropped_records));
  std::printf("%d check(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}
