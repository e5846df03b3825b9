// A plain MPI + Kokkos program for the plugin's MPI tests
// (tests/plugin/test_mpi_job_report.py): "setup" uploads the state to the
// device, each "step" runs a kernel and reduces a norm over the ranks
// through MPI, "output" downloads the state. Kokkos finalizes before MPI,
// as programs do: the plugin merges the ranks' reports over MPI then.
//
//   --steps N                        time steps (default 20)
//   --copy-on-rank R                 rank R also downloads the state in each
//                                    step (the budget forbids it)
//   --skip-kokkos-finalize-on-rank R rank R ends without Kokkos::finalize
//   --finalize-mpi-first             MPI_Finalize before Kokkos::finalize
//   --time-finalize                  rank 0 prints the seconds of the
//                                    slowest rank's Kokkos::finalize (the
//                                    plugin's report: bench/plugin)
//
// On a Kokkos without a device, a logical memory space named "FakeDevice"
// stands in for one (CUNUMPY_DEVICE_SPACES=FakeDevice).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>

#include <Kokkos_Core.hpp>

#if KOKKOS_VERSION < 40000
namespace mpi_kokkos {
struct FakeDeviceNamer {
  static constexpr const char* get_name() { return "FakeDevice"; }
};
using FakeDevice = Kokkos::Experimental::LogicalMemorySpace<
    Kokkos::HostSpace, Kokkos::DefaultHostExecutionSpace, FakeDeviceNamer,
    Kokkos::Experimental::LogicalSpaceSharesAccess::shared_access>;
} // namespace mpi_kokkos
namespace Kokkos::Impl {
template <>
struct MemorySpaceAccess<Kokkos::AnonymousSpace, mpi_kokkos::FakeDevice> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
template <>
struct MemorySpaceAccess<mpi_kokkos::FakeDevice, Kokkos::AnonymousSpace> {
  enum : bool { assignable = true };
  enum : bool { accessible = true };
  enum : bool { deepcopy = true };
};
} // namespace Kokkos::Impl
using DeviceSpace = mpi_kokkos::FakeDevice;
#else
using DeviceSpace = Kokkos::DefaultExecutionSpace::memory_space;
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int steps = 20, copy_rank = -1, skip_rank = -1;
  bool mpi_first = false, time_finalize = false;
  for (int i = 1; i < argc; ++i) {
    const auto value = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : -1; };
    if (std::strcmp(argv[i], "--steps") == 0)
      steps = value();
    else if (std::strcmp(argv[i], "--copy-on-rank") == 0)
      copy_rank = value();
    else if (std::strcmp(argv[i], "--skip-kokkos-finalize-on-rank") == 0)
      skip_rank = value();
    else if (std::strcmp(argv[i], "--finalize-mpi-first") == 0)
      mpi_first = true;
    else if (std::strcmp(argv[i], "--time-finalize") == 0)
      time_finalize = true;
  }
  Kokkos::initialize(argc, argv);
  double norm = 0.0;
  {
    using DeviceView = Kokkos::View<double*, DeviceSpace>;
    using Policy = Kokkos::RangePolicy<DeviceView::execution_space>;
    const int n = 1000;
    DeviceView state("state", n);
    Kokkos::View<double*, Kokkos::HostSpace> host("host", n);
    Kokkos::Profiling::pushRegion("setup");
    for (int i = 0; i < n; ++i)
      host(i) = rank + i;
    Kokkos::deep_copy(state, host);
    Kokkos::Profiling::popRegion();
    for (int step = 0; step < steps; ++step) {
      Kokkos::Profiling::pushRegion("step");
      Kokkos::parallel_for(
          "advance", Policy(0, n),
          KOKKOS_LAMBDA(int i) { state(i) = 0.5 * state(i) + 1.0; });
      double local = 0.0;
      Kokkos::parallel_reduce(
          "norm", Policy(0, n),
          KOKKOS_LAMBDA(int i, double& sum) { sum += state(i) * state(i); },
          local);
      if (rank == copy_rank)
        Kokkos::deep_copy(host, state);
      MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      Kokkos::Profiling::popRegion();
    }
    Kokkos::Profiling::pushRegion("output");
    Kokkos::deep_copy(host, state);
    Kokkos::Profiling::popRegion();
  }
  if (rank == 0)
    std::printf("mpi_kokkos: %d ranks, norm %.6g\n", size, norm);
  std::fflush(stdout);
  if (mpi_first)
    MPI_Finalize();
  const double start = MPI_Wtime();
  if (rank != skip_rank)
    Kokkos::finalize();
  if (time_finalize && !mpi_first) {
    const double seconds = MPI_Wtime() - start;
    double slowest = 0.0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("mpi_kokkos: Kokkos::finalize took %.6f s\n", slowest);
  }
  if (!mpi_first)
    MPI_Finalize();
  return 0;
}
