#include "config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <link.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <utility>

#include "report/report.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/variables.hpp"

namespace cunumpy::plugin {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return text;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The format a report file's name asks for: json for *.json, sarif for
/// *.sarif, junit for *.xml (JUnit's XML), else text.
std::string format_of_name(const std::string& path) {
  const std::string name = lowercase(path);
  if (ends_with(name, ".json"))
    return "json";
  if (ends_with(name, ".sarif"))
    return "sarif";
  if (ends_with(name, ".xml"))
    return "junit";
  return "text";
}

/// `path` from the working directory of now: the files are written at the
/// end, and a program may change directory on the way (to its run
/// directory, say).
std::string absolute(const std::string& path) {
  std::error_code error;
  const std::filesystem::path result = std::filesystem::absolute(path, error);
  return error ? path : result.lexically_normal().string();
}

/// Whether two paths name one file, existing or not (`out.json` and
/// `./out.json`, a symbolic or a hard link to it). Absolute first:
/// weakly_canonical leaves a relative path relative when none of it exists
/// yet.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error) && !error)
    return true; // one device and inode
  const auto normal = [](const std::string& path) {
    std::error_code ignored;
    const std::filesystem::path canonical =
        std::filesystem::weakly_canonical(absolute(path), ignored);
    return ignored ? std::filesystem::path(absolute(path)) : canonical;
  };
  return normal(a) == normal(b);
}

/// Whether the file `name` is the file of `target` (its device and inode).
bool is_file(const char* name, const struct stat& target) {
  struct stat info {};
  return ::stat(name, &info) == 0 && info.st_dev == target.st_dev &&
         info.st_ino == target.st_ino;
}

/// The file of a loaded library or of the program that `path` is, if any:
/// writing it would truncate code the process runs (SIGBUS). One file is
/// one device and inode, whatever the links to it: one stat a library, no
/// walk of paths (each a system call, slow on the parallel file systems of
/// clusters).
std::string loaded_module(const std::string& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0)
    return {}; // no file: none to truncate
  struct Search {
    const struct stat* target;
    std::string found;
  } search{&target, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' ||
            !is_file(info->dlpi_name, *search->target))
          return 0;
        search->found = info->dlpi_name;
        return 1;
      },
      &search);
  if (!search.found.empty())
    return "it is the library " + search.found + ", loaded in this process";
  if (is_file("/proc/self/exe", target))
    return "it is the running program";
  return {};
}

/// Why the plugin must not write `path`: it is `other` (a file the plugin
/// reads or writes already, named `variable`); empty when it is not.
std::string used_by(const std::string& path, const std::string& other,
                    const std::string& variable) {
  if (other.empty() || !same_file(path, other))
    return {};
  return "it is also " + variable;
}

/// CUNUMPY_ADVISE and the thresholds of advice (docs/plugin.md).
void read_advice(Config& config) {
  const std::string advise = Impl::read_choice("CUNUMPY_ADVISE");
  config.advice = advise == "0"          ? profiling::AdviceRecording::off
                  : advise == "contents" ? profiling::AdviceRecording::contents
                                         : profiling::AdviceRecording::on;
  profiling::AdviceOptions& options = config.advice_options;
  options.min_saving_seconds =
      Impl::read_integer("CUNUMPY_ADVISE_MIN_SAVING_US") * 1e-6;
  options.min_calls = Impl::read_integer("CUNUMPY_ADVISE_MIN_CALLS");
  options.small_bytes = Impl::read_integer("CUNUMPY_ADVISE_SMALL_BYTES");
  options.many_copies = Impl::read_integer("CUNUMPY_ADVISE_MANY_COPIES");
  options.pageable_min_bytes =
      Impl::read_integer("CUNUMPY_ADVISE_PAGEABLE_BYTES");
  options.fresh_min_bytes = Impl::read_integer("CUNUMPY_ADVISE_FRESH_BYTES");
  options.pinned_bandwidth =
      Impl::read_integer("CUNUMPY_ADVISE_PINNED_MBPS") * 1e6;
  config.advice_top = Impl::read_integer("CUNUMPY_ADVISE_TOP");
}

} // namespace

std::string expand_rank(const std::string& pattern, int rank) {
  std::string result;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r') {
      result += std::to_string(rank);
      ++i;
    } else {
      result += pattern[i];
    }
  }
  return result;
}

FileState FileState::of(const std::string& path) {
  FileState state;
  state.path = path;
  struct stat info {};
  if (!path.empty() && ::stat(path.c_str(), &info) == 0) {
    state.existed = true;
    state.device = info.st_dev;
    state.inode = info.st_ino;
    state.size = info.st_size;
    state.modified = info.st_mtim;
  }
  return state;
}

std::string FileState::changed() const {
  const FileState now = of(path);
  if (!now.existed)
    return {};
  // Checked at start-up too, but libraries loaded since (the next tool in
  // the chain, a library the program opened) were not there yet.
  if (std::string module = loaded_module(path); !module.empty())
    return module;
  if (!existed)
    return "someone else wrote it during the run, another Kokkos tool or the "
           "program itself; cunumpy does not overwrite it";
  if (now.device != device || now.inode != inode || now.size != size ||
      now.modified.tv_sec != modified.tv_sec ||
      now.modified.tv_nsec != modified.tv_nsec)
    return "someone else changed it during the run, another Kokkos tool or "
           "the program itself; cunumpy does not overwrite it";
  return {};
}

std::string cannot_write(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      return "it is a directory";
    if (!S_ISREG(info.st_mode))
      return S_ISFIFO(info.st_mode)
                 ? "it is a FIFO, which would block the program at its end"
                 : "it is not a regular file";
    if (std::string module = loaded_module(path); !module.empty())
      return module;
    return ::access(path.c_str(), W_OK) == 0 ? std::string()
                                             : std::strerror(errno);
  }
  const auto slash = path.rfind('/');
  const std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  if (::stat(directory.c_str(), &info) != 0)
    return "directory '" + Impl::excerpt(directory, 256) +
           "': " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return "'" + Impl::excerpt(directory, 256) + "' is not a directory";
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    return "directory '" + Impl::excerpt(directory, 256) +
           "': " + std::strerror(errno);
  return {};
}

Config Config::from_environment(const Impl::RunIdentity& run) {
  Config config;
  config.rank = run.rank;
  if (const auto budget = Impl::read_text("CUNUMPY_BUDGET"))
    config.budget_path = *budget;
  config.mpi_deadline = Impl::read_integer("CUNUMPY_MPI_DEADLINE");
  if (const auto report = Impl::read_text("CUNUMPY_REPORT")) {
    config.report_per_rank = report->find("%r") != std::string::npos;
    config.report_path = expand_rank(*report, config.rank);
    config.report_format = Impl::read_choice("CUNUMPY_REPORT_FORMAT");
    if (Impl::find_report_format(config.report_format) == nullptr)
      config.report_format = format_of_name(config.report_path);
    std::string problem = cannot_write(config.report_path);
    // Written at the end, the report would replace the rules it checks.
    if (problem.empty())
      problem = used_by(config.report_path, config.budget_path,
                        "CUNUMPY_BUDGET, the rule file");
    if (!problem.empty()) {
      Impl::warn("CUNUMPY_REPORT: cannot write '" +
                 Impl::excerpt(config.report_path, 256) + "' (" + problem +
                 "); the summary goes to stderr instead");
      config.report_path.clear();
      config.report_format = "text";
    } else {
      config.report_path = absolute(config.report_path);
      config.report_file = FileState::of(config.report_path);
    }
  }
  config.exit_on_violation =
      Impl::read_choice("CUNUMPY_ON_VIOLATION") == "exit";
  if (const auto trace = Impl::read_text("CUNUMPY_TRACE")) {
    config.trace_path = expand_rank(*trace, config.rank);
    std::string problem = cannot_write(config.trace_path);
    if (problem.empty())
      problem = used_by(config.trace_path, config.budget_path,
                        "CUNUMPY_BUDGET, the rule file");
    if (problem.empty())
      problem = used_by(config.trace_path, config.report_path,
                        "CUNUMPY_REPORT, the report");
    if (!problem.empty()) {
      Impl::warn("CUNUMPY_TRACE: cannot write '" +
                 Impl::excerpt(config.trace_path, 256) + "' (" + problem +
                 "); no trace is recorded");
      config.trace_path.clear();
    } else {
      config.trace_path = absolute(config.trace_path);
      config.trace_file = FileState::of(config.trace_path);
    }
  }
  if (const auto record = Impl::read_text("CUNUMPY_RECORD")) {
    config.record_path = expand_rank(*record, config.rank);
    std::string problem = cannot_write(config.record_path);
    if (problem.empty())
      problem = used_by(config.record_path, config.budget_path,
                        "CUNUMPY_BUDGET, the rule file");
    if (problem.empty())
      problem = used_by(config.record_path, config.report_path,
                        "CUNUMPY_REPORT, the report");
    if (problem.empty())
      problem = used_by(config.record_path, config.trace_path,
                        "CUNUMPY_TRACE, the trace");
    if (!problem.empty()) {
      Impl::warn("CUNUMPY_RECORD: cannot write '" +
                 Impl::excerpt(config.record_path, 256) + "' (" + problem +
                 "); the run is not recorded");
      config.record_path.clear();
    } else {
      config.record_path = absolute(config.record_path);
    }
    config.record_limit =
        std::uint64_t(Impl::read_integer("CUNUMPY_RECORD_LIMIT_MB")) << 20;
  }
  config.all_regions = Impl::read_integer("CUNUMPY_REPORT_ALL_REGIONS") == 1;
  read_advice(config);
  return config;
}

} // namespace cunumpy::plugin
