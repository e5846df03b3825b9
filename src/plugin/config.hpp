#ifndef CUNUMPY_PLUGIN_CONFIG_HPP
#define CUNUMPY_PLUGIN_CONFIG_HPP

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <sys/types.h>

#include <cunumpy/advice.hpp>

#include "support/variables.hpp"

namespace cunumpy::plugin {

/// What a file the plugin will write was like at start-up, to refuse at the
/// end a file someone else wrote meanwhile (a next tool's finalize, the
/// program).
struct FileState {
  std::string path;
  bool existed = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::timespec modified{};

  static FileState of(const std::string& path);
  /// Why the file must not be written now ("" when it may): it was made or
  /// changed since start-up, or it is a library loaded since (a next tool's:
  /// writing it would truncate code the process runs).
  std::string changed() const;
};

/// The plugin's settings, from the environment. A bad value prints one line
/// on stderr and leaves the default.
struct Config {
  /// CUNUMPY_REPORT with %r replaced by the rank; empty: a short summary on
  /// stderr.
  std::string report_path;
  /// CUNUMPY_REPORT has %r: each rank writes its own (else, under MPI,
  /// rank 0 writes the job's).
  bool report_per_rank = false;
  /// CUNUMPY_MPI_DEADLINE: seconds the ranks wait for each other to merge
  /// their reports over MPI; 0: no merge.
  int mpi_deadline = 5;
  /// CUNUMPY_REPORT_FORMAT, else json for a *.json path, sarif for *.sarif,
  /// junit for *.xml, else text.
  std::string report_format = "text";
  std::string budget_path;        ///< CUNUMPY_BUDGET
  bool exit_on_violation = false; ///< CUNUMPY_ON_VIOLATION=exit
  std::string trace_path;         ///< CUNUMPY_TRACE with %r replaced
  /// CUNUMPY_RECORD with %r replaced: where the run's input is recorded.
  std::string record_path;
  std::uint64_t record_limit = 0; ///< CUNUMPY_RECORD_LIMIT_MB, in bytes
  FileState report_file;          ///< the report's file at start-up
  FileState trace_file;
  bool all_regions = false; ///< CUNUMPY_REPORT_ALL_REGIONS=1
  /// CUNUMPY_ADVISE: 0, 1 or contents; the thresholds from the
  /// CUNUMPY_ADVISE_* variables; how many findings the summary shows.
  profiling::AdviceRecording advice = profiling::AdviceRecording::on;
  profiling::AdviceOptions advice_options;
  int advice_top = 3;
  /// This process' rank (Impl::RunIdentity), for the paths' "%r"; the
  /// report takes the whole identity from the same reader (describe_run).
  int rank = 0;

  /// The settings of the environment, for the process `run` (the
  /// recorder's, RecorderSettings::run).
  static Config from_environment(const Impl::RunIdentity& run);
};

/// The exit status of a process whose budget was broken under
/// CUNUMPY_ON_VIOLATION=exit.
inline constexpr int violation_exit_status = 3;

/// `pattern` with every "%r" replaced by `rank`.
std::string expand_rank(const std::string& pattern, int rank);

/// Why a file cannot be created or overwritten at `path`, or "" when it can:
/// a directory, a FIFO or device, a loaded library or the running program,
/// no permission.
std::string cannot_write(const std::string& path);

} // namespace cunumpy::plugin

#endif
