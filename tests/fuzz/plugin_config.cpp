// libFuzzer target: the plugin's configuration from the environment
// (src/plugin/config.cpp, compiled in), in-process. The input is up to
// twelve values separated by NUL bytes, set in turn as CUNUMPY_BUDGET,
// CUNUMPY_REPORT, CUNUMPY_TRACE, CUNUMPY_ON_VIOLATION, CUNUMPY_BACKTRACE,
// the four MPI rank variables, CUNUMPY_QUEUE_KIB and two MPI size
// variables; a variable past the last value is unset.
// Config::from_environment and the CUNUMPY_BACKTRACE reader must never
// crash or throw, and their results must keep their promises (a rank in
// range, absolute output paths, .json reports in JSON, a queue of 1 to 32
// KiB); anything else is a finding. Nothing is written: the configuration
// only checks paths.
//
//   scripts/fuzz                           # builds, seeds and runs it

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config.hpp"
#include "support/environment.hpp"

namespace {

constexpr const char* variables[] = {"CUNUMPY_BUDGET",
                                     "CUNUMPY_REPORT",
                                     "CUNUMPY_TRACE",
                                     "CUNUMPY_ON_VIOLATION",
                                     "CUNUMPY_BACKTRACE",
                                     "OMPI_COMM_WORLD_RANK",
                                     "PMI_RANK",
                                     "PMIX_RANK",
                                     "SLURM_PROCID",
                                     "CUNUMPY_QUEUE_KIB",
                                     "OMPI_COMM_WORLD_SIZE",
                                     "SLURM_NTASKS"};

[[noreturn]] void finding(const char* what, const std::string& value) {
  std::fprintf(stderr, "fuzz_plugin_config: %s: '%s'\n", what, value.c_str());
  std::abort();
}

bool ends_with_json(const std::string& path) {
  if (path.size() < 5)
    return false;
  std::string end = path.substr(path.size() - 5);
  for (char& c : end)
    c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return end == ".json";
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
  const auto config = cunumpy::plugin::Config::from_environment();
  if (config.rank < 0 || config.rank >= (1 << 30) ||
      (!config.rank_known && config.rank != 0))
    finding("rank out of range", std::to_string(config.rank));
  if (!config.report_path.empty() && config.report_path[0] != '/')
    finding("a relative report path", config.report_path);
  if (config.report_json != ends_with_json(config.report_path))
    finding("report_json does not follow the path", config.report_path);
  if (config.queue_kib < 1 ||
      config.queue_kib > cunumpy::plugin::Config::largest_queue_kib)
    finding("queue size out of range", std::to_string(config.queue_kib));
  if (!config.trace_path.empty() && config.trace_path[0] != '/')
    finding("a relative trace path", config.trace_path);
  const int depth =
      cunumpy::Impl::environment_integer("CUNUMPY_BACKTRACE", 32, 0, 64);
  if (depth < 0 || depth > 64)
    finding("backtrace depth out of range", std::to_string(depth));
  return 0;
}
