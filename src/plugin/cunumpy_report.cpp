// cunumpy-report: merges the JSON reports of a job's ranks (the plugin's,
// with CUNUMPY_REPORT=reports/report-%r.json, or merged jobs' reports) into
// one report of the job, read one file at a time, and writes it in any
// format of the plugin; --check fails unless every rank of the job kept
// its budget. The merge is the plugin's own (src/core/report/job.cpp).

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <cunumpy/version.hpp>

#include "report/format.hpp"
#include "report/job.hpp"
#include "report/report.hpp"
#include "support/excerpt.hpp"

namespace {

using cunumpy::Impl::Report;
using cunumpy::Impl::ReportError;

constexpr const char* usage =
    "usage: cunumpy-report [-h] [--version] [--json PATH] [--check] [--format FORMAT] "
    "[-o PATH] reports [reports ...]\n";

constexpr const char* help_text = R"(
Merge the JSON reports of the ranks of a job (libkp_cunumpy's, written with
CUNUMPY_REPORT=<dir>/report-%r.json, or merged jobs' reports) into one
report of the job: one table per phase and per region that copied, with the
minimum, mean and maximum over the ranks and the rank of the maximum; the
ranks that broke the budget; the broken rules and the findings of advice
merged over the ranks.

positional arguments:
  reports          JSON reports, or directories holding them (*.json)

options:
  -h, --help       show this help and exit
  --version        show cunumpy's version and exit
  --json PATH      also write the merged job as a JSON report (which merges
                   again)
  --check          exit with status 1 unless every rank of the job wrote one
                   report (version 3), checked its budget, kept it and saw
                   every event
  --format FORMAT  table (default), hatchet (the region tree in Hatchet's
                   literal JSON), json, summary, sarif (SARIF 2.1.0, for
                   code scanning), junit (JUnit XML test results)
  -o, --output PATH
                   write the table or tree there, not to stdout

exit status:
  0  merged (with --check: every rank of the job wrote one report, checked
     its budget, kept it and saw every event)
  1  with --check: a rank broke its budget, could not check it (no device
     space, a bad budget file), ran without one (CUNUMPY_BUDGET not passed
     to it: mpirun -x CUNUMPY_BUDGET), may have missed events, or ranks of
     the job have no report
  2  the input cannot be read or trusted: a missing file, a directory
     without reports, a file that is not a plugin JSON report or is damaged,
     reports of different runs, two reports of one rank, or, with --check,
     a report of version 2 (no run id nor job size); one line on stderr
     names the file, what is wrong and what to do

The reports are read one at a time and only the merged numbers are kept:
memory does not grow with the number of ranks.
)";

/// A report of the plugin is tens of KiB; its region tree stops at 65,536
/// regions of 64 levels. A file far beyond is not one.
constexpr off_t max_report_bytes = off_t(1) << 30;

std::string shown(const std::string& text) {
  return cunumpy::Impl::printable(text);
}

/// a < b with the digits of each compared as numbers: report-9 before
/// report-10, so that the ranks come in order.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9';
    const bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9')
        ++ei;
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9')
        ++ej;
      std::size_t zi = i, zj = j; // leading zeros
      while (zi + 1 < ei && a[zi] == '0')
        ++zi;
      while (zj + 1 < ej && b[zj] == '0')
        ++zj;
      if (ei - zi != ej - zj)
        return ei - zi < ej - zj;
      const int order = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (order != 0)
        return order < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) <
             static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> report_paths(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  for (const std::string& argument : args) {
    struct stat info {};
    if (::stat(argument.c_str(), &info) != 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        throw ReportError(shown(argument) + ": no such file or directory");
      paths.push_back(argument); // read_file says why
      continue;
    }
    if (!S_ISDIR(info.st_mode)) {
      paths.push_back(argument);
      continue;
    }
    DIR* directory = ::opendir(argument.c_str());
    if (directory == nullptr)
      throw ReportError(shown(argument) + ": cannot list this directory (" +
                        std::strerror(errno) + ")");
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(directory)) {
      const std::string name = entry->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
        names.push_back(name);
    }
    ::closedir(directory);
    if (names.empty())
      throw ReportError(
          shown(argument) +
          ": no report (*.json) in this directory; did the "
          "program run with CUNUMPY_REPORT=<dir>/report-%r.json?");
    std::sort(names.begin(), names.end(), natural_less);
    const std::string prefix =
        argument.back() == '/' ? argument : argument + "/";
    for (const std::string& name : names)
      paths.push_back(prefix + name);
  }
  return paths;
}

/// The text of the report file `path` into `text`, refused when it is no
/// regular file, larger than any report, or empty.
void read_file(const std::string& path, std::string& text) {
  const char* again = "; write the reports again: rerun the program with "
                      "CUNUMPY_REPORT=<file>.json";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw ReportError(shown(path) +
                      ": cannot read a JSON report: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw ReportError(shown(path) + ": not a regular file; give the report "
                                    "files or their directory");
  }
  if (info.st_size > max_report_bytes) {
    ::close(fd);
    throw ReportError(shown(path) +
                      ": larger than 1 GiB, far more than a report of the "
                      "plugin (its region tree stops at 65,536 regions of 64 "
                      "levels): is it a report?");
  }
  text.resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = ::read(fd, &text[done], text.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw ReportError(shown(path) +
                        ": cannot read a JSON report: " + std::strerror(error));
    }
    if (got == 0)
      break;
    done += static_cast<std::size_t>(got);
  }
  ::close(fd);
  text.resize(done);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ReportError(shown(path) +
                      ": empty; the rank may have been killed before it "
                      "wrote its report" +
                      again);
}

/// `paths` for a one-line message: the first `most`, then how many more.
std::string listed_files(const std::vector<std::string>& paths,
                         std::size_t most = 20) {
  std::string text;
  for (std::size_t i = 0; i < paths.size() && i < most; ++i)
    text += (i == 0 ? "" : ", ") + shown(paths[i]);
  if (paths.size() > most)
    text += " and " + std::to_string(paths.size() - most) + " more";
  return text;
}

/// Which ranks of which run the files are: one run, one report per rank,
/// one job size; of a run id that is not unique, one launch.
class Job {
public:
  explicit Job(bool check) : check_(check) {}

  /// Adds the report read from `path`; throws a ReportError when it cannot
  /// be merged with those before it.
  void add(const std::string& path, Report report) {
    if (check_ && report.run_id.empty())
      throw ReportError(
          shown(path) +
          ": a report of version 2 (an older plugin) has no run id nor job "
          "size, so --check cannot tell whether it belongs with the others "
          "or whether ranks are missing; rerun the program with this "
          "cunumpy's plugin, or merge without --check");
    add_run(path, report);
    if (merged_) {
      const int both = merged_->job.ranks.common(report.job.ranks);
      if (both >= 0)
        throw ReportError(shown(path) + ": rank " + std::to_string(both) +
                          " already has a report, " + shown(path_of(both)) +
                          "; merge the reports of one run, each rank with "
                          "its own file (%r in CUNUMPY_REPORT)");
      if (report.size > 0 && size_ > 0 && report.size != size_)
        throw ReportError(
            shown(path) + ": its job has " + std::to_string(report.size) +
            " rank(s) ('run.size') but that of " + shown(size_path_) + " " +
            std::to_string(size_) + "; merge the reports of one run at a time");
    }
    if (report.size > 0 && size_ == 0) {
      size_ = report.size;
      size_path_ = path;
    }
    files_.emplace(
        report.job.ranks.lowest(),
        std::make_pair(report.job.ranks.ranges().back().second, path));
    if (!merged_)
      merged_ = std::move(report);
    else
      cunumpy::Impl::merge_reports(*merged_, std::move(report));
  }

  /// Notes the run `report` is of (run() notes the run of every report,
  /// those after a refused one included, so that finish() names every
  /// stale one).
  void add_run(const std::string& path, const Report& report) {
    Run& run = runs_[report.run_id];
    run.paths.push_back(path);
    if (report.ended > 0.0)
      run.last_ended = std::max(run.last_ended, report.ended);
    if (!report.run_id_unique)
      run.lifetimes.push_back({report.started, report.ended, path});
  }

  /// Throws a ReportError when the reports are of several runs, or of
  /// several launches of a run id that is not unique, naming every stale
  /// report at once.
  void finish() const {
    if (runs_.size() > 1) {
      // The run that wrote last is this one; the others are stale. Without
      // times (version 2) none can be told apart.
      const auto latest = std::max_element(
          runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
            return a.second.last_ended < b.second.last_ended;
          });
      const bool timed = latest->second.last_ended > 0.0;
      std::string first, listed;
      for (const auto& [id, run] : runs_) {
        const std::string name =
            id.empty()
                ? std::string("no run id (version 2)")
                : "run '" + cunumpy::Impl::excerpt(shown(id), 40) + "'";
        if (!timed)
          listed += "; " + name + ": " + listed_files(run.paths);
        else if (id == latest->first)
          first = name + " wrote last: " + listed_files(run.paths, 2);
        else
          listed += "; stale, " + name + ": " + listed_files(run.paths);
      }
      throw ReportError("the reports are of " + std::to_string(runs_.size()) +
                        " different runs (" +
                        (timed ? first + listed : listed.substr(2)) +
                        "); merge one run's reports at a time: remove the "
                        "stale ones, or give each run its own directory");
    }
    // The ranks of one launch run at one time: a report made before
    // another rank's process started is of an earlier launch.
    for (const auto& [id, run] : runs_) {
      if (run.lifetimes.empty())
        continue;
      const Lifetime& late = *std::max_element(
          run.lifetimes.begin(), run.lifetimes.end(),
          [](const Lifetime& a, const Lifetime& b) {
            return std::tie(a.started, a.path) < std::tie(b.started, b.path);
          });
      std::vector<std::string> stale;
      for (const Lifetime& lifetime : run.lifetimes)
        if (lifetime.ended < late.started)
          stale.push_back(lifetime.path);
      std::sort(stale.begin(), stale.end());
      if (!stale.empty())
        throw ReportError(
            "the reports are of different launches of run '" +
            cunumpy::Impl::excerpt(shown(id), 40) +
            "' (its launcher names no launch of its own): " +
            std::to_string(stale.size()) +
            " stale report(s), written before the process of " +
            shown(late.path) + " started: " + listed_files(stale) +
            "; merge one run's reports at a time: remove the stale ones, or "
            "give each run its own directory");
    }
  }

  Report& merged() { return *merged_; }

private:
  std::string path_of(int rank) const {
    auto it = files_.upper_bound(rank);
    if (it == files_.begin())
      return "?";
    --it;
    return it->second.second;
  }

  struct Lifetime {
    double started, ended;
    std::string path;
  };
  struct Run {
    std::vector<std::string> paths;
    double last_ended = 0.0; ///< when its last report was written
    std::vector<Lifetime> lifetimes; ///< of a run id that is not unique
  };
  bool check_;
  std::map<std::string, Run> runs_;
  /// The first rank of each file -> its last, and the file.
  std::map<int, std::pair<int, std::string>> files_;
  int size_ = 0;
  std::string size_path_;
  std::optional<Report> merged_;
};

void write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    throw ReportError(shown(path) + ": cannot write it (" +
                      std::strerror(errno) + ")");
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written)
    throw ReportError(shown(path) + ": cannot write it (" +
                      std::strerror(errno) + ")");
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "cunumpy-report: %s (see cunumpy-report --help)\n",
               message.c_str());
  std::exit(2);
}

struct Arguments {
  std::vector<std::string> reports;
  std::string json;
  bool check = false;
  std::string format = "table";
  std::string output;
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments arguments;
  bool options = true;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    const auto value = [&](const std::string& name) -> std::string {
      const std::size_t equals = argument.find('=');
      if (argument.rfind("--", 0) == 0 && equals != std::string::npos)
        return argument.substr(equals + 1);
      if (i + 1 >= argc)
        usage_error("argument " + name + ": expected one argument");
      return argv[++i];
    };
    const auto is = [&](const char* name) {
      return argument == name ||
             argument.rfind(std::string(name) + "=", 0) == 0;
    };
    if (!options || argument.empty() || argument[0] != '-' || argument == "-") {
      arguments.reports.push_back(argument);
    } else if (argument == "--") {
      options = false;
    } else if (argument == "-h" || argument == "--help") {
      std::fputs(usage, stdout);
      std::fputs(help_text, stdout);
      std::exit(0);
    } else if (argument == "--version") {
      std::puts("cunumpy-report " CUNUMPY_VERSION_STRING);
      std::exit(0);
    } else if (argument == "--check") {
      arguments.check = true;
    } else if (is("--json")) {
      arguments.json = value("--json");
    } else if (is("--format")) {
      arguments.format = value("--format");
      if (arguments.format != "table" &&
          cunumpy::Impl::find_report_format(arguments.format) == nullptr)
        usage_error("argument --format: invalid choice: '" + arguments.format +
                    "' (choose from 'table', 'hatchet', 'json', 'summary', "
                    "'sarif', 'junit')");
    } else if (argument == "-o" || is("--output")) {
      arguments.output = value("-o/--output");
    } else {
      usage_error("unrecognized arguments: " + argument);
    }
  }
  if (arguments.reports.empty())
    usage_error("the following arguments are required: reports");
  return arguments;
}

int run(const Arguments& arguments) {
  Job job(arguments.check);
  std::string text;
  std::optional<ReportError> refused; // the first report that cannot merge
  for (const std::string& path : report_paths(arguments.reports)) {
    read_file(path, text);
    Report report;
    try {
      report = cunumpy::Impl::read_json_report(text);
    } catch (const ReportError& error) {
      throw ReportError(shown(path) + ": " + error.what());
    }
    if (refused)
      job.add_run(path, report); // only which run it is of
    else
      try {
        job.add(path, std::move(report));
      } catch (const ReportError& error) {
        refused = error; // of another run, more likely: finish() says so
      }
  }
  job.finish();
  if (refused)
    throw *refused;
  Report& merged = job.merged();
  if (!arguments.json.empty())
    write_output(arguments.json, cunumpy::Impl::format_json(merged));
  const std::vector<std::string> problems = cunumpy::Impl::job_problems(merged);
  std::string check;
  for (const std::string& problem : problems)
    check += (check.empty() ? "" : "; ") + problem;
  const std::string& format = arguments.format;
  if (format == "table" || format == "text") {
    std::string table = cunumpy::Impl::format_text(merged);
    if (arguments.check)
      table +=
          "\ncheck: " + (problems.empty() ? "passed" : "FAILED: " + check) +
          "\n";
    write_output(arguments.output, table);
  } else {
    write_output(arguments.output,
                 cunumpy::Impl::find_report_format(format)->write(merged));
    if (arguments.check && !problems.empty())
      std::fprintf(stderr, "cunumpy-report: check FAILED: %s\n", check.c_str());
  }
  return arguments.check && !problems.empty() ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
  const Arguments arguments = parse_arguments(argc, argv);
  try {
    return run(arguments);
  } catch (const ReportError& error) {
    std::fprintf(stderr, "cunumpy-report: %s\n", error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr,
                 "cunumpy-report: internal error (%s); this is a bug of "
                 "cunumpy-report, please report it with the reports\n",
                 cunumpy::Impl::excerpt(error.what(), 100).c_str());
  }
  return 2;
}
