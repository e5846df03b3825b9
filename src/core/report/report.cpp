// The report model's shared parts: what the recorder and a budget know,
// the notes, the verdict, the table of formats.

#include "report/report.hpp"

#include <algorithm>
#include <unistd.h>

#include <cunumpy/space_names.hpp>
#include <cunumpy/transfer_budget.hpp>

#include "cuda/cuda_view.hpp"
#include "recorder/recorder.hpp"
#include "recorder/spaces.hpp"
#include "report/format.hpp"
#include "support/excerpt.hpp"
#include "support/process_info.hpp"
#include "support/variables.hpp"

namespace cunumpy::Impl {

/// Copies first, then by bytes, then by count.
std::vector<profiling::SiteSummary>
top_sites(std::vector<profiling::SiteSummary> sites, std::size_t limit) {
  std::stable_sort(
      sites.begin(), sites.end(), [](const auto& a, const auto& b) {
        const bool a_copy = is_copy(a.kind), b_copy = is_copy(b.kind);
        if (a_copy != b_copy)
          return a_copy;
        if (a.nbytes != b.nbytes)
          return a.nbytes > b.nbytes;
        return a.count > b.count;
      });
  if (sites.size() > limit)
    sites.resize(limit);
  return sites;
}

double bandwidth(const profiling::KindTotals& totals) {
  return totals.seconds > 0.0
             ? static_cast<double>(totals.nbytes) / totals.seconds
             : 0.0;
}

std::string side_text(bool device) {
  return device ? "device" : "host";
}

std::string recording_name(profiling::AdviceRecording recording) {
  switch (recording) {
  case profiling::AdviceRecording::off:
    return "off";
  case profiling::AdviceRecording::contents:
    return "contents";
  case profiling::AdviceRecording::on:
    break;
  }
  return "on";
}

std::vector<std::string> never_entered(const Report& report) {
  std::vector<std::string> names;
  for (const auto& violation : report.budget.violations)
    if (violation.limit == profiling::Limit::never_entered)
      names.push_back(violation.phase);
  return names;
}

namespace {

/// Copies between a host space and a space of unknown name were taken as
/// host-to-host (not counted): a device space no one named?
std::string unknown_spaces_note(const Report& report) {
  const UnknownSpaces& unknown = report.unknown_spaces;
  if (unknown.copies == 0 || unknown.names.empty())
    return {};
  std::string listed; // the value CUNUMPY_DEVICE_SPACES would need
  for (const auto* names : {&unknown.names, &report.device_spaces})
    for (const std::string& name : *names)
      listed += (listed.empty() ? "" : ",") + name;
  return std::to_string(unknown.copies) +
         (unknown.copies == 1 ? " copy" : " copies") +
         " not counted: cunumpy does not know the memory space(s) " +
         Impl::quoted_list(unknown.names) +
         " and took them for host spaces; if one is a device, set "
         "CUNUMPY_DEVICE_SPACES=" +
         listed;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

} // namespace

std::vector<std::string> report_notes(const Report& report, bool summary) {
  std::vector<std::string> notes;
  // With a budget, its verdict says why events may be missing.
  if (!report.has_budget || !report.budget_error.empty())
    for (const std::string& loss : report.budget.losses)
      notes.push_back("INCOMPLETE: " + loss);
  // A budget that could not be checked for them names the spaces itself.
  const bool budget_names_them =
      !report.budget.device.unknown_spaces.empty() &&
      std::any_of(report.budget.violations.begin(),
                  report.budget.violations.end(), [](const auto& violation) {
                    return violation.limit == profiling::Limit::no_device;
                  });
  if (std::string note = unknown_spaces_note(report);
      !note.empty() && !budget_names_them)
    notes.push_back(std::move(note));
  // What changes nothing the user sees or does stays in the report file.
  if (!summary && !report.unwatched.empty())
    notes.push_back(report.unwatched);
  if (!report.region_tree_cut.empty())
    notes.push_back(
        "the tree of regions is cut at " +
        std::to_string(Impl::RegionTree::max_depth) +
        " levels: regions pushed below '" +
        Impl::excerpt(report.region_tree_cut, 256) +
        "' count in it (a loop missing a pop nests each step in the last)");
  // A site without a line says why once, in the report file.
  if (!summary)
    for (const std::string& problem : report.site_problems)
      notes.push_back("call sites of " + problem);
  if (!report.unbalanced_pops.empty())
    notes.push_back(
        "regions were popped where none was open, by " +
        report.unbalanced_pops +
        ": a library that pops more regions than it pushes closes its "
        "callers' regions early (a budget fails as incomplete where the "
        "events made after them could change its verdict)");
  if (!summary && !report.open_regions.empty())
    notes.push_back("regions still open at the end of the run (a pop is "
                    "missing): " +
                    joined(report.open_regions));
  return notes;
}

std::string_view Report::verdict() const {
  if (job.merged) {
    if (!job.broken.empty())
      return "broken";
    if (!job.incomplete.empty() || !missing_ranks(*this).empty() ||
        job_size(*this) == 0)
      return "incomplete";
    if (!job.unchecked.empty())
      return "unchecked";
    if (job.without_budget.size() == job.ranks.size())
      return "none";
    if (!job.without_budget.empty())
      return "unchecked";
    return "ok";
  }
  if (!has_budget)
    return "none";
  if (!budget_error.empty())
    return "incomplete";
  return profiling::to_string(profiling::verdict(budget.violations));
}

bool no_transfers(const Report& counter) {
  return host_device_transfers(counter.budget.total) == 0 &&
         counter.counter_complete;
}

std::vector<OpenRegionText> open_region_texts(const RecorderLock& lock) {
  struct Open {
    std::string path;
    std::uint32_t thread;
    bool main;
  };
  std::vector<Open> open;
  // The regions of running threads; those a thread left open when it
  // ended are closed in the trace only.
  for (const Recorder::StillOpen& still : lock.recorder().open_regions(lock))
    if (!still.ended)
      open.push_back({lock.path(still.region.node), still.thread, still.main});
  std::vector<OpenRegionText> texts;
  for (std::size_t i = 0; i < open.size(); ++i) {
    const Open& region = open[i];
    // Pushes below the tree's cut are its last level again: said once.
    std::size_t same = 1;
    while (i + 1 < open.size() && open[i + 1].path == region.path &&
           open[i + 1].thread == region.thread) {
      ++same;
      ++i;
    }
    texts.push_back({region.path,
                     region.main ? std::string("main thread")
                                 : "thread " + std::to_string(region.thread),
                     same});
  }
  return texts;
}

namespace {

std::string program_name() {
#if defined(__GLIBC__)
  if (program_invocation_name != nullptr)
    return program_invocation_name;
#endif
  return "<program>";
}

} // namespace

void describe_run(Report& report, double start, const RecorderLock& lock) {
  Recorder& recorder = lock.recorder();
  report.program = program_name();
  report.kokkos_interface = recorder.kokkos().interface;
  report.pid = static_cast<long>(::getpid());
  report.started = process_start_time();
  report.ended = wall_clock_now();
  // Which process of which run: one reader for every report.
  const RunIdentity& run = recorder.settings().run;
  report.rank = run.rank;
  report.rank_known = run.rank_known;
  report.size = run.size;
  report.run_id = run.id;
  report.run_id_unique = run.id_unique;
  report.label = run.label;
  report.elapsed = recorder.now() - start;
  report.backtrace_depth = recorder.backtrace_depth();
  for (const OpenRegionText& open : open_region_texts(lock))
    report.open_regions.push_back(
        "'" + open.path + "' (" + open.where +
        (open.times > 1 ? ", " + std::to_string(open.times) + " times"
                        : std::string()) +
        ")");
  if (const std::uint32_t cut = lock.regions().cut())
    report.region_tree_cut = lock.path(cut);
  for (const auto& [module, times] : recorder.unbalanced_pops(lock))
    report.unbalanced_pops +=
        (report.unbalanced_pops.empty() ? "" : ", ") +
        (module == 0 ? std::string("modules cunumpy could not name")
                     : printable(lock.strings().view(module))) +
        (times == 1 ? std::string(" once")
                    : " " + std::to_string(times) + " times");
  report.cuda_view = cuda::CudaView::of(recorder).status();
  report.device_spaces = recorder.spaces().devices();
  SpaceRegistry::Unknown unknown = recorder.spaces().unknown();
  report.unknown_spaces = {std::move(unknown.names), unknown.copies};
}

void describe_budget(Report& report, const profiling::TransferBudget& budget,
                     Recorder& recorder) {
  report.budget = budget.snapshot();
  if (report.advice_recording != profiling::AdviceRecording::off)
    report.advice = budget.advice(report.advice_options);
  // Symbolized by now: the snapshot resolved the sites it names.
  report.site_problems = lock_recorder(recorder).sites().problems();
}

const std::vector<ReportFormat>& report_formats() {
  // A new format: a file with its function, and its line here.
  static const std::vector<ReportFormat> formats = {
      {"text", format_text},   {"summary", format_summary},
      {"json", format_json},   {"hatchet", format_hatchet},
      {"sarif", format_sarif}, {"junit", format_junit},
  };
  return formats;
}

const ReportFormat* find_report_format(std::string_view name) {
  for (const ReportFormat& format : report_formats())
    if (format.name == name)
      return &format;
  return nullptr;
}

std::string report_format_names() {
  return quoted_list(profiling::report_formats());
}

} // namespace cunumpy::Impl

namespace cunumpy::profiling {

std::vector<std::string> report_formats() {
  std::vector<std::string> names;
  for (const Impl::ReportFormat& format : Impl::report_formats())
    names.emplace_back(format.name);
  return names;
}

} // namespace cunumpy::profiling
