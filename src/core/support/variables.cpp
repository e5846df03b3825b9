#include "support/variables.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <unistd.h>

#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/process_info.hpp"

namespace cunumpy::Impl {
namespace {

using Kind = Variable::Kind;
constexpr int most = 2147483647;

std::vector<Variable> make_table() {
  // clang-format off
  return {
    {"CUNUMPY_REPORT", Kind::text, "a file; %r: the MPI rank",
     "a summary on stderr", "the report, in CUNUMPY_REPORT_FORMAT; under MPI without %r, the job's, written by rank 0", true},
    {"CUNUMPY_REPORT_FORMAT", Kind::choice, "text, json, hatchet, summary, sarif, junit",
     "json for *.json, sarif for *.sarif, junit for *.xml, else text", "the format of CUNUMPY_REPORT (docs/plugin.md#report-formats)", true},
    {"CUNUMPY_SOURCE_ROOT", Kind::text, "a directory", "the git top level of the working directory",
     "the sarif and junit reports and GitHub's annotations name files relative to it (docs/ci.md)"},
    {"CUNUMPY_BUDGET", Kind::text, "a TOML file", "none",
     "rules per region, checked at the end of the run", true},
    {"CUNUMPY_ON_VIOLATION", Kind::choice, "warn, exit", "warn",
     "exit: a failed budget ends the process with status 3 when it would end with 0", true},
    {"CUNUMPY_ALLOW_NO_DEVICE", Kind::integer, "0, 1", "0",
     "1: a budget of a program without a device passes, unchecked (a CPU-only CI job); not one that copied to spaces cunumpy does not know",
     false, 0, 1},
    {"CUNUMPY_MPI_DEADLINE", Kind::integer, "0 to 3600", "5",
     "seconds the ranks wait for each other to merge their reports over MPI, at Kokkos::finalize and in a budget's job_report and job_check (docs/plugin.md#mpi); 0: no merge", false, 0, 3600},
    {"CUNUMPY_TRACE", Kind::text, "a file; %r: the MPI rank", "none",
     "a Chrome trace of copies, syncs, regions and kernels (Perfetto)", true},
    {"CUNUMPY_RECORD", Kind::text, "a file; %r: the MPI rank", "none",
     "the run's Kokkos and CUDA events as they reached cunumpy, to replay elsewhere (docs/cuda.md#recording-a-run)", true},
    {"CUNUMPY_RECORD_LIMIT_MB", Kind::integer, "1 to 65536", "256",
     "the largest recording; past it the recording says it was cut, and cannot be replayed", true, 1, 65536},
    {"CUNUMPY_REPORT_ALL_REGIONS", Kind::integer, "0, 1", "0",
     "1: the text report lists the regions without transfers too", true, 0, 1},
    {"CUNUMPY_LABEL", Kind::text, "any text", "none",
     "a name for this run in the JSON report, to compare runs"},
    {"CUNUMPY_RUN_ID", Kind::text, "any text", "the launcher's job",
     "what every rank of one run shares in its report (cunumpy-report refuses a mix)"},
    {"CUNUMPY_BACKTRACE", Kind::integer, "0 to 64", "32",
     "stack frames read per event to find its line; 0: no call sites", false, 0, 64},
    {"CUNUMPY_DEVICE_SPACES", Kind::text, "names, comma-separated", "none",
     "more memory spaces to count as devices (a fake device in tests)"},
    {"CUNUMPY_DEBUG_SYNC", Kind::integer, "0, 1", "0",
     "1: the host waits after every kernel, each wait recorded at the kernel's line",
     false, 0, 1},
    {"CUNUMPY_CUPTI", Kind::integer, "0, 1", "1",
     "0: no CUDA record (CUPTI) of copies Kokkos does not report", false, 0, 1},
    {"CUNUMPY_CUPTI_LIBRARY", Kind::text, "a file", "libcupti of the CUDA toolkit",
     "the libcupti to load"},
    {"CUNUMPY_ADVISE", Kind::choice, "0, 1, contents", "1",
     "advice on the copies worth changing; contents: also hash what copies move", true},
    {"CUNUMPY_ADVISE_TOP", Kind::integer, "0 to 100", "3",
     "findings of advice shown on stderr", true, 0, 100},
    {"CUNUMPY_ADVISE_MIN_SAVING_US", Kind::integer, "0 or more", "1000",
     "findings that save less over the run are left out", true, 0, most},
    {"CUNUMPY_ADVISE_MIN_CALLS", Kind::integer, "0 or more", "10",
     "a region called this often is a loop", true, 0, most},
    {"CUNUMPY_ADVISE_SMALL_BYTES", Kind::integer, "0 or more", "4096",
     "copies of at most this many bytes are small", true, 0, most},
    {"CUNUMPY_ADVISE_MANY_COPIES", Kind::integer, "0 or more", "8",
     "small copies per call from one line that one packed copy would replace", true, 0, most},
    {"CUNUMPY_ADVISE_PAGEABLE_BYTES", Kind::integer, "0 or more", "262144",
     "copies through pageable memory of at least this many bytes", true, 0, most},
    {"CUNUMPY_ADVISE_FRESH_BYTES", Kind::integer, "0 or more", "4194304",
     "copies into newly made host buffers of at least this many bytes", true, 0, most},
    {"CUNUMPY_ADVISE_PINNED_MBPS", Kind::integer, "0 or more", "0",
     "the bandwidth of page-locked copies here; 0: the best measured in the run", true, 0, most},
  };
  // clang-format on
}

std::string lowercase(std::string_view text) {
  std::string result(text);
  for (char& c : result)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

/// The choices of a choice variable.
std::vector<std::string> choices(const Variable& entry) {
  std::vector<std::string> result;
  std::string_view rest = entry.values;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ')
      one.remove_prefix(1);
    result.emplace_back(one);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
  }
  return result;
}

} // namespace

const std::vector<Variable>& variables() {
  static const std::vector<Variable> table = make_table();
  return table;
}

const Variable& variable(std::string_view name) {
  for (const Variable& entry : variables())
    if (entry.name == name)
      return entry;
  throw std::logic_error("cunumpy: no environment variable " +
                         std::string(name) + " in the table of variables");
}

namespace {

/// One line for a text variable set to nothing, as for a bad number or
/// choice: what it takes and what is used instead.
void warn_empty(const Variable& entry) {
  const std::string_view values =
      entry.values.substr(0, entry.values.find(';'));
  warn(std::string(entry.name) + "=\"\" is empty" +
       (values == "any text" ? std::string() : ", not " + std::string(values)) +
       "; using " + std::string(entry.fallback));
}

} // namespace

std::optional<std::string> read_text(std::string_view name) {
  const Variable& entry = variable(name);
  const std::string key(entry.name);
  if (const char* value = std::getenv(key.c_str());
      value != nullptr && *value == '\0')
    warn_empty(entry);
  return environment(key.c_str());
}

int read_integer(std::string_view name) {
  const Variable& entry = variable(name);
  const int fallback =
      parse_environment_integer(entry.fallback, entry.minimum, entry.maximum)
          .value_or(0);
  return environment_integer(std::string(entry.name).c_str(), fallback,
                             entry.minimum, entry.maximum);
}

std::string read_choice(std::string_view name) {
  const Variable& entry = variable(name);
  const std::string_view fallback = entry.fallback;
  const char* value = std::getenv(std::string(entry.name).c_str());
  if (value == nullptr)
    return std::string(fallback);
  const std::string chosen = lowercase(value); // "" too: one line
  for (const std::string& choice : choices(entry))
    if (choice == chosen)
      return chosen;
  warn(std::string(entry.name) + "=\"" + excerpt(value) + "\" is not one of " +
       std::string(entry.values) + "; using " + std::string(fallback));
  return std::string(fallback);
}

namespace {

/// Read by cunumpy's Python package, not by the table's readers.
constexpr std::string_view python_variables[] = {"CUNUMPY_BACKEND"};

/// Edits from `a` to `b`: insertions, deletions, substitutions and swaps of
/// two neighbours (optimal string alignment).
std::size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(
      a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool known_variable(std::string_view name) {
  for (const Variable& entry : variables())
    if (entry.name == name)
      return true;
  for (std::string_view python : python_variables)
    if (python == name)
      return true;
  return false;
}

} // namespace

std::string_view closest_variable(std::string_view name) {
  std::string_view best;
  std::size_t best_edits = ~std::size_t(0);
  const auto consider = [&](std::string_view known) {
    const std::size_t count = edits(name, known);
    if (count < best_edits) {
      best = known;
      best_edits = count;
    }
  };
  for (const Variable& entry : variables())
    consider(entry.name);
  for (std::string_view python : python_variables)
    consider(python);
  return best;
}

void warn_unknown_variables() {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    const std::string_view name = variable.substr(0, variable.find('='));
    if (name.substr(0, 8) != "CUNUMPY_" || known_variable(name))
      continue;
    // Names are the user's: long or odd ones are shown cut and escaped.
    warn(excerpt(name, 64) +
         " is not a variable cunumpy reads, and is "
         "ignored; did you mean " +
         std::string(closest_variable(name)) +
         "? (docs/plugin.md#environment-variables lists them)");
  }
}

std::string variables_help() {
  std::string text;
  for (const Variable& entry : variables())
    text += "  " + std::string(entry.name) + "=<" + std::string(entry.values) +
            ">  " + std::string(entry.help) +
            " (default: " + std::string(entry.fallback) + ")\n";
  return text;
}

std::string variables_markdown() {
  std::string text =
      "| variable | values | default | what it does | read by |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const Variable& entry : variables())
    text += "| `" + std::string(entry.name) + "` | " +
            std::string(entry.values) + " | " + std::string(entry.fallback) +
            " | " + std::string(entry.help) + " | " +
            (entry.plugin_only ? "plugin" : "plugin, library, Python") + " |\n";
  return text;
}

namespace {

// The variables launchers set for a process' rank, the first one set wins:
// Open MPI, PMI (MPICH's hydra, Intel MPI, Slurm's pmi2), PMIx, Slurm,
// hydra with -pmi-port and MVAPICH's mpirun_rsh (PMI_ID), mpirun_rsh.
constexpr const char* rank_variables[] = {
    "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
    "SLURM_PROCID",         "PMI_ID",   "MV2_COMM_WORLD_RANK"};

} // namespace

std::optional<int> rank_from_environment() {
  for (const char* name : rank_variables) {
    if (const auto rank =
            environment_integer(name, 0, (1 << 30) - 1, "ignored"))
      return rank;
  }
  return std::nullopt;
}

std::optional<int> ranks_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                           "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS"}) {
    if (const auto ranks =
            environment_integer(name, 1, (1 << 30) - 1, "ignored"))
      return ranks;
  }
  return std::nullopt;
}

RunId run_id_from_environment() {
  if (const auto id = read_text("CUNUMPY_RUN_ID"))
    return {*id, true};
  // Every launch's own id that is set: Slurm's job alone is shared by the
  // launches (srun steps, mpiruns) of one batch job.
  RunId run{{}, false};
  const auto add = [&run](const std::string& part) {
    run.id += (run.id.empty() ? "" : " ") + part;
  };
  if (const auto job = environment("SLURM_JOB_ID")) {
    const auto step = environment("SLURM_STEP_ID");
    add("slurm:" + *job + (step ? "." + *step : std::string()));
    run.unique = step.has_value();
  }
  for (const auto& [name, prefix] :
       {std::pair{"PMIX_NAMESPACE", "pmix:"},
        std::pair{"OMPI_MCA_ess_base_jobid", "ompi:"}})
    if (const auto launch = environment(name)) {
      add(prefix + *launch);
      run.unique = true;
    }
  if (run.unique)
    return run;
  // What all ranks of a launch share, which a later launch may share too:
  // MVAPICH's mpirun_rsh gives its pid, MPICH's hydra (Intel MPI's, and
  // MVAPICH's mpiexec) only its control port, on its proxies' command line.
  // cunumpy-report tells such launches apart by when their processes ran.
  const char* rank_variable = nullptr; // the one the rank is read from
  for (const char* name : rank_variables) {
    const auto value = environment(name);
    if (rank_variable == nullptr && value &&
        parse_environment_integer(*value, 0, (1 << 30) - 1))
      rank_variable = name;
  }
  if (const auto mpirun = environment("MPIRUN_ID"))
    add("mpirun_rsh:" + *mpirun);
  else if (const auto port =
               rank_variable ? hydra_control_port() : std::nullopt)
    add("hydra:" + *port);
  else if (rank_variable != nullptr)
    add("launcher:" + std::string(rank_variable));
  if (!run.id.empty())
    return run;
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return {"local:" + std::string(host) + ":" + std::to_string(::getpid()) +
              ":" + std::to_string(static_cast<long long>(std::time(nullptr))),
          true};
}

RunIdentity read_run_identity() {
  RunIdentity identity;
  if (const auto rank = rank_from_environment()) {
    identity.rank = *rank;
    identity.rank_known = true;
  }
  identity.size =
      ranks_from_environment().value_or(identity.rank_known ? 0 : 1);
  RunId run = run_id_from_environment();
  identity.id = std::move(run.id);
  identity.id_unique = run.unique;
  if (const auto label = read_text("CUNUMPY_LABEL"))
    identity.label = *label;
  return identity;
}

} // namespace cunumpy::Impl
