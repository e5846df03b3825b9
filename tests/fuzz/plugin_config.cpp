// libFuzzer target: the plugin's configuration from the environment
// (src/plugin/config.cpp, compiled in), in-process. The input is up to
// thirteen values separated by NUL bytes, set in turn as CUNUMPY_BUDGET,
// CUNUMPY_REPORT, CUNUMPY_TRACE, CUNUMPY_ON_VIOLATION, CUNUMPY_BACKTRACE,
// the four MPI rank variables, two MPI size variables, CUNUMPY_RUN_ID and
// CUNUMPY_ADVISE_TOP; a variable past the last value is unset.
// Config::from_environment and the CUNUMPY_BACKTRACE reader must never
// crash or throw, and their results must keep their promises (a rank in
// range, absolute output paths, .json reports in JSON, a job size not
// negative, at most 100 findings shown); anything else is a finding.
// Nothing is written: the configuration only checks paths.
//
//   scripts/fuzz                           # builds, seeds and runs it

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config.hpp"
#include "report/report.hpp"
#include "support/environment.hpp"

namespace {

constexpr const char* variables[] = {
    "CUNUMPY_BUDGET",    "CUNUMPY_REPORT",
    "CUNUMPY_TRACE",     "CUNUMPY_ON_VIOLATION",
    "CUNUMPY_BACKTRACE", "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",          "PMIX_RANK",
    "SLURM_PROCID",      "OMPI_COMM_WORLD_SIZE",
    "SLURM_NTASKS",      "CUNUMPY_RUN_ID",
    "CUNUMPY_ADVISE_TOP"};

[[noreturn]] void finding(const char* what, const std::string& value) {
  std::fprintf(stderr, "fuzz_plugin_config: %s: '%s'\n", what, value.c_str());
  std::abort();
}

/// The format of a report whose name ends in `.json`, `.sarif` or `.xml`.
std::string format_of_name(const std::string& path) {
  const auto ends = [&](const std::string& suffix) {
    if (path.size() < suffix.size())
      return false;
    std::string end = path.substr(path.size() - suffix.size());
    for (char& c : end)
      c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return end == suffix;
  };
  return ends(".json")    ? "json"
         : ends(".sarif") ? "sarif"
         : ends(".xml")   ? "junit"
                          : "text";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  bool more = size > 0;
  for (const char* name : variables) {
    if (!more) {
      ::unsetenv(name);
      continue;
    }
    const std::size_t end = input.find('\0');
    const std::string value(input.substr(0, end));
    ::setenv(name, value.c_str(), 1);
    more = end != std::string_view::npos;
    if (more)
      input.remove_prefix(end + 1);
  }
  // Read again for each input (a recorder reads it once, when made).
  const cunumpy::Impl::RunIdentity run = cunumpy::Impl::read_run_identity();
  const auto config = cunumpy::plugin::Config::from_environment(run);
  if (config.rank < 0 || config.rank >= (1 << 30) ||
      (!run.rank_known && config.rank != 0))
    finding("rank out of range", std::to_string(config.rank));
  if (!config.report_path.empty() && config.report_path[0] != '/')
    finding("a relative report path", config.report_path);
  if (cunumpy::Impl::find_report_format(config.report_format) == nullptr)
    finding("an unknown report format", config.report_format);
  if (std::getenv("CUNUMPY_REPORT_FORMAT") == nullptr &&
      config.report_format != format_of_name(config.report_path))
    finding("the report format does not follow the path", config.report_path);
  if (run.size < 0)
    finding("job size out of range", std::to_string(run.size));
  if (config.advice_top < 0 || config.advice_top > 100)
    finding("advice_top out of range", std::to_string(config.advice_top));
  if (!config.trace_path.empty() && config.trace_path[0] != '/')
    finding("a relative trace path", config.trace_path);
  const int depth =
      cunumpy::Impl::environment_integer("CUNUMPY_BACKTRACE", 32, 0, 64);
  if (depth < 0 || depth > 64)
    finding("backtrace depth out of range", std::to_string(depth));
  return 0;
}
