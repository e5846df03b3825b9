#ifndef CUNUMPY_PLUGIN_CONFIG_HPP
#define CUNUMPY_PLUGIN_CONFIG_HPP

#include <optional>
#include <string>

namespace cunumpy::plugin {

/// The plugin's settings, from the environment. A bad value prints one line
/// on stderr and leaves the default.
struct Config {
  /// CUNUMPY_REPORT with %r replaced by the rank; empty: a short summary on
  /// stderr.
  std::string report_path;
  bool report_json = false;       ///< the report path ends in .json
  std::string budget_path;        ///< CUNUMPY_BUDGET
  bool exit_on_violation = false; ///< CUNUMPY_ON_VIOLATION=exit
  std::string trace_path;         ///< CUNUMPY_TRACE with %r replaced
  int rank = 0;
  bool rank_known = false;

  static Config from_environment();
};

/// The exit status of a process whose budget was broken under
/// CUNUMPY_ON_VIOLATION=exit.
inline constexpr int violation_exit_status = 3;

/// The MPI rank from OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or
/// SLURM_PROCID, the first one set; a bad value (not digits, see
/// Impl::parse_environment_integer) is named on stderr and skipped.
std::optional<int> rank_from_environment();

/// `pattern` with every "%r" replaced by `rank`.
std::string expand_rank(const std::string& pattern, int rank);

/// Why a file cannot be created or overwritten at `path`, or "" when it can.
std::string cannot_write(const std::string& path);

} // namespace cunumpy::plugin

#endif
