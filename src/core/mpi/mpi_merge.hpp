#ifndef CUNUMPY_SRC_MPI_MPI_MERGE_HPP
#define CUNUMPY_SRC_MPI_MPI_MERGE_HPP

// One report per job: in a program that runs under MPI, with MPI
// initialized, the ranks' reports are merged over MPI by cunumpy's MPI part
// (mpi_part.h), loaded only when the process has the MPI it was built for.
// The plugin merges at Kokkos::finalize, TransferBudget::job_report and
// job_check when the program calls them. The rule (docs/plugin.md#mpi):
// within
// CUNUMPY_MPI_DEADLINE every rank's report reaches rank 0, which writes the
// job's, and every rank learns the job's verdict; a rank that does not come
// in time is missing from the job's report, whose verdict then fails, and a
// rank that cannot be in it says so with its own summary.

#include <optional>
#include <string>

#include "report/report.hpp"

namespace cunumpy::Impl {

struct JobMerge {
  /// The process has MPI initialized: its ranks are a job (else the
  /// process is alone, and nothing was merged).
  bool mpi = false;
  /// The MPI part merged the ranks' reports (else each rank is alone, and
  /// `message` may say why).
  bool ran = false;
  int rank = 0;
  int size = 1;
  /// The job's verdict: true failed, false not, none not heard in time.
  std::optional<bool> failed;
  /// This rank's report is in the job's report.
  bool included = false;
  /// What went wrong, in one line ("" when nothing did).
  std::string message;
  /// On rank 0: the job's report.
  std::optional<Report> job;
};

/// Merges `report`, this rank's, with the other ranks' within `deadline`
/// seconds, when the process has MPI initialized and an MPI part built for
/// its MPI. Never throws; never waits past the deadline rule.
JobMerge merge_over_mpi(const Report& report, int deadline);

} // namespace cunumpy::Impl

#endif
