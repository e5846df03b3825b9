#ifndef CUNUMPY_PLUGIN_MPI_MERGE_HPP
#define CUNUMPY_PLUGIN_MPI_MERGE_HPP

// One report per job: at the end of a program that runs under MPI, with
// MPI still initialized, the ranks' reports are merged over MPI by the
// plugin's MPI part (mpi/mpi_part.h), loaded only when the process has the
// MPI it was built for. The rule (docs/plugin.md#mpi): within
// CUNUMPY_MPI_DEADLINE every rank's report reaches rank 0, which writes the
// job's, and every rank learns the job's verdict; a rank that does not come
// in time is missing from the job's report, whose verdict then fails, and a
// rank that cannot be in it says so with its own summary.

#include <optional>
#include <string>

#include "report/report.hpp"

namespace cunumpy::plugin {

struct JobMerge {
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
  std::optional<Impl::Report> job;
};

/// Merges `report`, this rank's, with the other ranks' within `deadline`
/// seconds, when the process has MPI initialized and an MPI part built for
/// its MPI. Never throws; never waits past the deadline rule.
JobMerge merge_over_mpi(const Impl::Report& report, int deadline);

} // namespace cunumpy::plugin

#endif
