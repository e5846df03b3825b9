#ifndef CUNUMPY_SRC_SUPPORT_VARIABLES_HPP
#define CUNUMPY_SRC_SUPPORT_VARIABLES_HPP

// Every environment variable cunumpy reads, described once: its name, what
// it takes, its default and one line of help. The table drives how each is
// read (ranges and choices live here only), the plugin's --help, and the
// table of docs/plugin.md (a test compares them).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cunumpy::Impl {

struct Variable {
  enum class Kind { text, integer, choice };
  std::string_view name;
  Kind kind = Kind::text;
  /// What it takes, as the docs say it: "0 to 64", "warn, exit", "a file".
  /// For a choice, the choices, comma-separated.
  std::string_view values;
  std::string_view fallback; ///< when unset, as the docs say it
  std::string_view help;     ///< one line
  bool plugin_only = false;  ///< else the library and the Python module too
  int minimum = 0;           ///< integers only
  int maximum = 0;
};

/// The table, in the order of the docs.
const std::vector<Variable>& variables();
/// The entry of `name` (a name cunumpy reads; std::logic_error otherwise).
const Variable& variable(std::string_view name);

/// A text variable's value; nothing when unset or empty.
std::optional<std::string> read_text(std::string_view name);
/// An integer variable's value in its range; its default when unset, and
/// when bad after one line on stderr naming the variable, the range and
/// the value used.
int read_integer(std::string_view name);
/// A choice variable's value (lowercase); its default when unset, and when
/// none of its choices after one line on stderr.
std::string read_choice(std::string_view name);

/// One line on stderr for each CUNUMPY_* variable of the environment that
/// cunumpy does not read (a misspelling: CUNUMPY_BUGDET), naming the known
/// one closest to it. The plugin calls it once, at start-up.
void warn_unknown_variables();
/// The known variable closest to `name` (fewest edits; a swap of two
/// neighbours is one).
std::string_view closest_variable(std::string_view name);

/// "  CUNUMPY_REPORT=a file  the report ... (default: ...)", one line each:
/// the plugin's --help.
std::string variables_help();
/// The table of docs/plugin.md, in Markdown.
std::string variables_markdown();

/// The MPI rank from OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
/// SLURM_PROCID, PMI_ID or MV2_COMM_WORLD_RANK, the first one set; a bad
/// value (not digits, see Impl::parse_environment_integer) is named on
/// stderr and skipped.
std::optional<int> rank_from_environment();
/// The job's number of ranks from the variables MPI launchers set
/// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, MV2_COMM_WORLD_SIZE, SLURM_NTASKS).
std::optional<int> ranks_from_environment();

/// An id every rank of one launch shares, to tell a stale report of
/// another run from this run's.
struct RunId {
  std::string id;
  /// No other launch has this id. False where the launcher names no launch
  /// of its own (Slurm's job without a step, MVAPICH's mpirun_rsh, MPICH's
  /// hydra, a rank variable alone): a later launch may have the same id, and
  /// launches are told apart by when their processes ran.
  bool unique = true;
};
/// CUNUMPY_RUN_ID, else every id of the launch that is set (Slurm's job and
/// step, PMIx's namespace, Open MPI's job id: two mpiruns in one Slurm job
/// differ by the latter); without one, what the launch's ranks share
/// ("mpirun_rsh:<MPIRUN_ID>", "hydra:<host:port>" of the proxy's
/// --control-port, "launcher:<the rank's variable>"); else this process
/// ("local:<host>:<pid>:<start time>").
RunId run_id_from_environment();

/// Which process of which run this is, read once from the environment.
struct RunIdentity {
  int rank = 0;
  bool rank_known = false;
  int size = 0;   ///< the job's ranks; 0: unknown
  std::string id; ///< run_id_from_environment
  bool id_unique = true;
  std::string label; ///< CUNUMPY_LABEL
};
/// Reads it from the environment now: once, when a recorder is made
/// (RecorderSettings::run; the run id of a process without a launcher
/// holds the time).
RunIdentity read_run_identity();

} // namespace cunumpy::Impl

#endif
