// An MPI + Kokkos program that checks a TransferBudget of the library over
// MPI, for tests/plugin/test_mpi_job_check.py: "setup" uploads the state, each
// "step" (no copy allowed) runs a kernel and reduces a norm over the ranks,
// "output" downloads the state. Each rank writes its own report(json) to
// rank-<rank>.json; then every rank calls job_report("json"), which rank 0
// writes to job.json, and job_check(). Each rank writes one line to
// verdict-<rank>.txt: "rank R: job_report N bytes; job_check passed" or
// "... failed: <first line of the message>".
//
//   --copy-on-rank R     rank R also downloads the state in each step
//   --skip-job-on-rank R rank R calls neither job_report nor job_check
//   --late-on-rank R S   rank R calls job_report S seconds late, then
//                        copies in one more step before job_check

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mpi.h>
#include <string>
#include <thread>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

using cunumpy::EventKind;
using cunumpy::profiling::Rule;
using cunumpy::profiling::TransferBudget;
using DeviceView =
    Kokkos::View<double*, cunumpy::testing::example_device_space>;
using Policy = Kokkos::RangePolicy<DeviceView::execution_space>;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int copy_rank = -1, skip_rank = -1, late_rank = -1;
  double late_seconds = 0.0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--copy-on-rank") == 0)
      copy_rank = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--skip-job-on-rank") == 0)
      skip_rank = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--late-on-rank") == 0 && i + 2 < argc) {
      late_rank = std::atoi(argv[++i]);
      late_seconds = std::atof(argv[++i]);
    }
  }
  Kokkos::initialize(argc, argv);
  {
    cunumpy::testing::register_fake_device();
    TransferBudget budget;
    budget.require("setup", Rule().allow(EventKind::to_device));
    budget.require("step", Rule().calls(10));
    budget.require("output", Rule().allow(EventKind::to_host));
    const int n = 1000;
    DeviceView state("state", n);
    Kokkos::View<double*, Kokkos::HostSpace> host("host", n);
    {
      auto setup = budget.phase("setup");
      for (int i = 0; i < n; ++i)
        host(i) = rank + i;
      Kokkos::deep_copy(state, host);
    }
    double norm = 0.0;
    for (int step = 0; step < 10; ++step) {
      auto phase = budget.phase("step");
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
    }
    {
      auto output = budget.phase("output");
      Kokkos::deep_copy(host, state);
    }
    std::ofstream("rank-" + std::to_string(rank) + ".json")
        << budget.report("json");
    if (rank != skip_rank) {
      if (rank == late_rank)
        std::this_thread::sleep_for(
            std::chrono::duration<double>(late_seconds));
      const std::string job = budget.job_report("json");
      if (rank == 0)
        std::ofstream("job.json") << job;
      if (rank == late_rank) {
        auto phase = budget.phase("step");
        Kokkos::deep_copy(host, state);
      }
      std::string verdict = "passed";
      try {
        budget.job_check();
      } catch (const cunumpy::TransferError& error) {
        const std::string message = error.what();
        verdict = "failed: " + message.substr(0, message.find('\n'));
      }
      std::ofstream("verdict-" + std::to_string(rank) + ".txt")
          << "rank " << rank << ": job_report " << job.size()
          << " bytes; job_check " << verdict << "\n";
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
