// The in-job merge's step, on a real report (docs/performance.md, section
// "One report per job"): what a rank of the MPI tree does for each child
// (read the child's JSON, merge it into its own), and what it sends up (its
// merged report as JSON). The report is the JSON file in
// CUNUMPY_BENCH_REPORT, a rank's report of tests/programs/mpi_kokkos.cpp.

#include <benchmark/benchmark.h>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/job.hpp"
#include "report/report.hpp"

namespace {

using cunumpy::Impl::Report;

std::string sample() {
  const char* path = std::getenv("CUNUMPY_BENCH_REPORT");
  if (path == nullptr)
    throw std::runtime_error("set CUNUMPY_BENCH_REPORT to a rank's report");
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// A rank's report as rank `rank` of a job of `size`.
Report rank_report(const std::string& text, int rank, int size) {
  Report report = cunumpy::Impl::read_json_report(text);
  report.job = {};
  report.rank = rank;
  report.size = size;
  cunumpy::Impl::start_job(report);
  return report;
}

/// A job of `ranks` ranks (0 to ranks - 1), as a child of that many sends.
Report job_of(const std::string& text, int ranks, int first, int size) {
  Report job = rank_report(text, first, size);
  for (int rank = first + 1; rank < first + ranks; ++rank)
    cunumpy::Impl::merge_reports(job, rank_report(text, rank, size));
  return job;
}

// One round at a node: the child's JSON read and merged into its own.
void merge_child(benchmark::State& state) {
  const std::string text = sample();
  const int ranks = static_cast<int>(state.range(0));
  const Report mine = job_of(text, ranks, 0, 2 * ranks);
  const std::string child =
      cunumpy::Impl::format_json(job_of(text, ranks, ranks, 2 * ranks));
  for (auto _ : state) {
    Report job = mine;
    cunumpy::Impl::merge_reports(job, cunumpy::Impl::read_json_report(child));
    benchmark::DoNotOptimize(job);
  }
  state.counters["message_bytes"] = static_cast<double>(child.size());
}
BENCHMARK(merge_child)->Arg(1)->Arg(1024)->Unit(benchmark::kMicrosecond);

// What a node sends up: its merged report as JSON.
void write_job(benchmark::State& state) {
  const std::string text = sample();
  const Report job = job_of(text, static_cast<int>(state.range(0)), 0,
                            static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(cunumpy::Impl::format_json(job));
}
BENCHMARK(write_job)->Arg(1)->Arg(1024)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
