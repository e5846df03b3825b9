#include "plugin.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <errno.h> // program_invocation_name (glibc)
#include <mutex>
#include <optional>
#include <string_view>
#include <unistd.h>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/space_names.hpp>

#include "consumers/rule_file_input.hpp"
#include "cuda/collector.hpp"
#include "kokkos_table.hpp"
#include "mpi/mpi_merge.hpp"
#include "output_file.hpp"
#include "python_lines.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
#include "recorder/spaces.hpp"
#include "recorder/thread_state.hpp"
#include "report/format.hpp"
#include "report/report.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/variables.hpp"
#include "tools/callbacks.hpp"

namespace cunumpy::plugin {
namespace {

bool write_file(const std::string& path, const std::string& text,
                std::string& error) {
  std::FILE* file = open_replacing(path);
  if (file == nullptr) {
    error = std::strerror(errno);
    return false;
  }
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int saved = errno;
  if (!close_replacing(file) || !written) {
    error = std::strerror(written ? errno : saved);
    return false;
  }
  return true;
}

/// The file of the library `function` is in, for messages.
std::string library_of(const void* function) {
  Dl_info info{};
  if (function != nullptr && ::dladdr(function, &info) != 0 &&
      info.dli_fname != nullptr)
    return info.dli_fname;
  return "another library";
}

/// Watches the table of callbacks of the Kokkos that called `caller` for
/// tools that replace cunumpy's entries (see tools/callbacks.hpp); returns
/// why it cannot, or "".
std::string watch_callbacks(Impl::Recorder& recorder, const void* caller,
                            const bool* finalized) {
  namespace tools = Impl::tools;
  std::string library;
  const auto access = find_kokkos(caller, library, finalized);
  kokkosp::EventSet live{};
  if (access.get == nullptr || !access.get(live))
    return "cunumpy cannot read the table of callbacks of the Kokkos that "
           "loaded it (" +
           library +
           " does not export Kokkos' tools functions: a Kokkos linked in "
           "statically?): another tool replacing callbacks in the process "
           "would go unnoticed, except for copies whose begin it took";
  const kokkosp::EventSet entries = entry_points();
  if (live.begin_deep_copy == entries.begin_deep_copy ||
      live.push_region == entries.push_region) {
    tools::watch(access, entries, true);
    return {};
  }
  std::vector<std::string> missing;
  bool any = false;
  for (unsigned i = 0; i < tools::slot_count; ++i) {
    const auto slot = static_cast<tools::Slot>(i);
    const bool set = tools::slot_entry(live, slot) != nullptr;
    any = any || set;
    if (!set && tools::counts_slot(slot))
      missing.emplace_back(tools::slot_name(slot));
  }
  if (!any)
    return "the table of callbacks of the Kokkos that loaded cunumpy (" +
           library +
           ") is empty: Kokkos' tools were paused when cunumpy started";
  // Another tool was loaded first and calls this one: its entries are the
  // ones to watch, and what it does not pass on never reaches cunumpy.
  tools::watch(access, live, false);
  if (!missing.empty()) {
    const std::string text =
        "Kokkos calls cunumpy through the tool " +
        library_of(reinterpret_cast<const void*>(live.init)) +
        ", loaded before it, which does not pass on " +
        Impl::quoted_list(missing, 24) +
        ": cunumpy sees none of those events; put libkp_cunumpy first in "
        "the tools list";
    Impl::warn(text);
    const Impl::RecorderLock lock = recorder.lock();
    recorder.open_incident(text, lock);
  }
  return {};
}

} // namespace

Plugin::Plugin(Impl::Recorder& recorder, int load_sequence,
               std::uint64_t interface_version, std::uint32_t device_count,
               kokkosp::DeviceInfo* devices, const void* self,
               const void* caller)
    : recorder_(recorder) {
  Impl::tools::connect(recorder);
  // Kokkos feeds the recorder through this library: cunumpy's in-process
  // hooks, if the application uses cunumpy too, must not feed it again.
  recorder.set_fed_by_plugin(true);
  // The thread that initialized Kokkos: its regions place the events of
  // threads that opened none of their own.
  recorder.set_main_thread();
  start_ = recorder.now();
  config_ = Config::from_environment(recorder.settings().run);
  Impl::warn_unknown_variables();
  // What the rest of the start does (the CUDA view's start, what CUDA says
  // then) is recorded inside this call.
  std::optional<Impl::recording::Nested> nested;
  if (!config_.record_path.empty()) {
    start_recording();
    record_init(load_sequence, interface_version, device_count, devices);
    nested.emplace();
  }
  // What Kokkos' events mean depends on its interface (kokkos_rules.hpp).
  recorder.set_kokkos_interface(interface_version);
  interface_version_ = interface_version;
  (void)registered_device_spaces(); // reads CUNUMPY_DEVICE_SPACES now
  // A Python program's events show its Python line beside the native site.
  if (recorder.backtrace_depth() > 0)
    install_python_lines();

  next_ = load_next_tool(entries_after_self(tool_lists(), self), self);
  Impl::tools::set_next(next_.callbacks);
  if (next_.callbacks.init != nullptr)
    next_.callbacks.init(load_sequence + 1, interface_version, device_count,
                         devices);

  budget_.emplace(profiling::BudgetOptions{true, 0, config_.advice});
  if (!config_.budget_path.empty()) {
    try {
      budget_->require_file(config_.budget_path);
    } catch (const std::exception& error) {
      budget_error_ = error.what();
      const std::string prefix = "cunumpy::TransferBudget: ";
      if (budget_error_.compare(0, prefix.size(), prefix) == 0)
        budget_error_.erase(0, prefix.size());
      Impl::warn("CUNUMPY_BUDGET: " + budget_error_ +
                 "; no rule is checked, and the budget fails");
    }
  }
  if (!config_.trace_path.empty()) {
    trace_ =
        std::make_unique<Trace>(recorder, config_.trace_path, config_.rank);
    recorder.attach(trace_.get());
  }
  recorder.attach(&dual_views_);
  unwatched_ = watch_callbacks(recorder, caller, &kokkos_finalized_);
  if (!kokkosp::known_interface(interface_version)) {
    const std::string text =
        "Kokkos passed the Kokkos Tools interface version " +
        std::to_string(interface_version) +
        ", which this cunumpy does not know (it knows those of Kokkos 3.4 to "
        "5.x, 20210225 to 20240906): what its events mean may have changed; "
        "use a cunumpy that knows this Kokkos";
    Impl::warn(text);
    const Impl::RecorderLock lock = recorder.lock();
    recorder.open_incident(text, lock);
  }
  Impl::cuda::start_collector(recorder);
}

void record_init(int load_sequence, std::uint64_t interface_version,
                 std::uint32_t device_count,
                 const kokkosp::DeviceInfo* devices) {
  if (!Impl::recording::active())
    return;
  std::string ids = "[";
  for (std::uint32_t i = 0; devices != nullptr && i < device_count; ++i)
    ids += (i > 0 ? "," : "") + std::to_string(devices[i].deviceID);
  Impl::recording::Line("init")
      .number("load_sequence", static_cast<std::uint64_t>(load_sequence))
      .number("interface", interface_version)
      .json("devices", ids + "]")
      .write();
}

void Plugin::start_recording() {
  Impl::recording::Header header;
  // The settings that change counts and verdicts, as they were set; a
  // replay sets them (and unsets the others).
  for (const char* name :
       {"CUNUMPY_DEVICE_SPACES", "CUNUMPY_ALLOW_NO_DEVICE",
        "CUNUMPY_DEBUG_SYNC", "CUNUMPY_CUPTI", "CUNUMPY_ON_VIOLATION"})
    if (const char* value = std::getenv(name))
      header.settings.emplace_back(name, value);
  if (!config_.budget_path.empty()) {
    header.budget_name = config_.budget_path;
    try {
      header.budget = Impl::read_rule_file(config_.budget_path);
    } catch (...) {
      // The budget says why; the recording has no rules to replay.
    }
  }
  std::string error;
  if (!Impl::recording::start(recorder_, config_.record_path,
                              config_.record_limit, header, error))
    Impl::warn("CUNUMPY_RECORD: cannot write '" +
               Impl::excerpt(config_.record_path, 256) + "' (" + error +
               "); the run is not recorded");
}

Plugin::~Plugin() {
  recorder_.detach(&dual_views_);
  if (trace_)
    recorder_.detach(trace_.get());
}

void Plugin::declare_metadata(const char* key, const char* value) {
  // Kokkos 4 names its default execution space: whether the program has a
  // device at all, before any copy says so.
  if (key != nullptr && value != nullptr &&
      std::strcmp(key, "Default Device") == 0)
    recorder_.set_default_device(value);
  std::lock_guard lock(metadata_mutex_);
  metadata_.emplace_back(key != nullptr ? key : "",
                         value != nullptr ? value : "");
}

void Plugin::start_session(std::uint64_t interface_version) {
  ++sessions_;
  ++sessions_seen_;
  if (interface_version == interface_version_)
    return;
  const std::string text =
      "two Kokkos with different tools interfaces in one process (" +
      std::to_string(interface_version_) + " and " +
      std::to_string(interface_version) +
      "): cunumpy reads the events of both as the first's";
  Impl::warn(text);
  const Impl::RecorderLock lock = recorder_.lock();
  recorder_.open_incident(text, lock);
}

bool Plugin::end_session() {
  if (sessions_ > 1) {
    --sessions_;
    return false;
  }
  sessions_ = 0;
  kokkos_finalized_ = true;
  return true;
}

namespace {
std::atomic<bool> unseen_finalize{false};
} // namespace

void Plugin::on_unseen_finalize() {
  unseen_finalize.store(true);
}

bool Plugin::reconsider() {
  // Kokkos 3 restarts no tool when it is initialized again: the session
  // ran without cunumpy. Its finalize ran the hook left at the first one;
  // a session still running at the exit is one too.
  const bool unseen =
      unseen_finalize.load() || kokkos_state() == KokkosState::running;
  if (!unseen || recorder_.lock_held_by_this_thread())
    return failed_.load();
  {
    const Impl::RecorderLock lock = recorder_.lock();
    recorder_.open_incident(
        "Kokkos was initialized again after it finalized, and Kokkos "
        "restarts no tool for a second session: what that session did did "
        "not reach cunumpy",
        lock);
  }
  // The report written at the first finalize is cunumpy's own.
  config_.report_file = FileState::of(config_.report_path);
  config_.trace_file = FileState::of(config_.trace_path);
  try {
    return write_report();
  } catch (const std::exception& error) {
    return report_lost(error.what());
  }
}

void Plugin::finalize_next() {
  if (next_finalized_)
    return;
  next_finalized_ = true;
  if (next_.callbacks.finalize != nullptr)
    next_.callbacks.finalize();
  // A finalized tool gets no more events.
  Impl::tools::set_next(kokkosp::EventSet{});
}

bool Plugin::finish() {
  if (recorder_.lock_held_by_this_thread())
    return finish_without_report();
  if (finished_.exchange(true))
    return failed_.load();
  // quick_exit (from a signal handler, say) between a copy's begin and its
  // end: the copy counts, as at exit(), where the thread's end counts it.
  Impl::record::end_copies_in_flight(recorder_);
  // Kokkos 3 may be initialized again, and then calls no tool: a hook in
  // its next finalize tells (reconsider). Kokkos 4 refuses a second
  // initialize, and the hook never runs.
  if (kokkos_finalized_) {
    push_kokkos_finalize_hook(&Plugin::on_unseen_finalize);
  } else if (kokkos_state() == KokkosState::stopped) {
    // At the exit, and Kokkos finalized without calling cunumpy's finalize:
    // its tools were off (paused, or their callbacks cleared) then.
    const Impl::RecorderLock lock = recorder_.lock();
    recorder_.open_incident(
        "Kokkos finalized without telling cunumpy: its tools were turned off "
        "(paused, or their callbacks cleared) and not turned back on, so what "
        "the program did meanwhile did not reach cunumpy",
        lock);
  }
  bool failed = false;
  try {
    failed = write_report();
  } catch (const std::exception& error) {
    failed = report_lost(error.what());
  } catch (...) {
    failed = report_lost("an unknown exception");
  }
  // Every input that made the report is in the recording: its end.
  Impl::recording::finish();
  return failed;
}

bool Plugin::finish_without_report() noexcept {
  if (reported_unreadable_.exchange(true))
    return failed_.load();
  finished_ = true;
  const bool budget = !config_.budget_path.empty();
  if (budget)
    failed_ = true;
  std::fprintf(stderr,
               "cunumpy: no report: the process ended from a signal handler "
               "that interrupted cunumpy while it recorded an event, so what "
               "it recorded cannot be read%s\n",
               budget ? "; the budget cannot be known to pass, so it fails"
                      : "");
  return failed_;
}

bool Plugin::report_lost(const char* why) noexcept {
  // The verdict may be unknown, or known and not said: with a rule file
  // the run cannot be known to have kept it, so it fails.
  const bool budget = !config_.budget_path.empty();
  if (budget)
    failed_ = true;
  try {
    Impl::warn(
        std::string("internal error at the end of the run (") + why +
        "): the report may be missing or incomplete" +
        (budget ? "; the budget cannot be known to pass, so it fails" : ""));
  } catch (...) {
  }
  return failed_;
}

void Plugin::note_open_regions() {
  if (open_regions_noted_)
    return;
  open_regions_noted_ = true;
  std::vector<Impl::OpenRegionText> open;
  {
    const Impl::RecorderLock lock = recorder_.lock();
    open = Impl::open_region_texts(lock);
  }
  if (open.empty())
    return;
  const profiling::BudgetSnapshot snapshot = budget_->snapshot();
  std::vector<std::string> incidents;
  for (const Impl::OpenRegionText& region : open) {
    const std::string below = region.path + "/";
    for (const profiling::RegionNode& node : snapshot.regions)
      if (node.is_phase && (node.path == region.path ||
                            node.path.compare(0, below.size(), below) == 0)) {
        incidents.push_back(
            "region '" + region.path + "' (" + region.where +
            ") was never popped: the events after its missing pop may count "
            "in phase '" +
            node.name + "' instead of the phase around it");
        break;
      }
  }
  const Impl::RecorderLock lock = recorder_.lock();
  for (std::string& text : incidents)
    recorder_.open_incident(std::move(text), lock);
}

bool Plugin::write_report() {
  note_open_regions();
  Impl::Report report;
  std::string trace_error;
  {
    const Impl::RecorderLock lock =
        Impl::lock_recorder(recorder_); // every event
    Impl::describe_run(report, start_, lock);
    report.kokkos_interface = interface_version_;
    report.kokkos_sessions = sessions_seen_;
    report.has_budget = !config_.budget_path.empty();
    report.budget_path = config_.budget_path;
    report.budget_error = budget_error_;
    {
      std::lock_guard metadata_lock(metadata_mutex_);
      report.metadata = metadata_;
    }
    // Every Kokkos the process initialized declares its version.
    for (const auto& [key, value] : report.metadata)
      if (key == "Kokkos Version" &&
          std::find(report.kokkos_versions.begin(),
                    report.kokkos_versions.end(),
                    value) == report.kokkos_versions.end())
        report.kokkos_versions.push_back(value);
    report.unwatched = unwatched_;
    // The sites the trace and the DualView log name are resolved by now;
    // the budget's below.
    report.all_regions = config_.all_regions;
    report.dual_view_syncs = dual_views_.syncs(lock);
    report.unsynced_modifies = dual_views_.unsynced_modifies(lock);
    if (trace_) {
      report.trace_path = trace_->path();
      const std::string changed = config_.trace_file.changed();
      trace_error = changed.empty() ? trace_->write(start_ + report.elapsed,
                                                    report.program, lock)
                                    : changed;
      report.trace_dropped = trace_->dropped();
    }
  }
  report.advice_recording = config_.advice;
  report.advice_options = config_.advice_options;
  report.advice_top = static_cast<std::size_t>(config_.advice_top);
  Impl::describe_budget(report, *budget_, recorder_);
  failed_ = report.failed();

  if (!trace_error.empty())
    Impl::warn("CUNUMPY_TRACE: cannot write '" + report.trace_path + "' (" +
               trace_error + ")");
  // Under MPI, one report of the job (mpi/mpi_merge.hpp): rank 0 writes it
  // (without %r in CUNUMPY_REPORT), every rank takes the job's verdict.
  const Impl::JobMerge merge =
      Impl::merge_over_mpi(report, config_.mpi_deadline);
  const Impl::Report* shown = &report;
  bool quiet = false; // a rank whose report is in the job's says nothing
  bool has_file = !config_.report_path.empty();
  if (merge.ran) {
    failed_ =
        merge.failed ? *merge.failed : failed_.load() || report.has_budget;
    if (!merge.message.empty())
      Impl::warn("rank " + std::to_string(merge.rank) + ": " + merge.message);
    if (merge.job) {
      if (!config_.report_per_rank)
        shown = &*merge.job;
    } else {
      quiet = merge.included;
      if (!config_.report_per_rank)
        has_file = false; // rank 0's
      if (!merge.included)
        Impl::warn("rank " + std::to_string(merge.rank) +
                   ": this rank's report is not in the job's report; its "
                   "summary follows");
    }
  } else if (!merge.message.empty() && config_.rank == 0 &&
             config_.mpi_deadline > 0) {
    Impl::warn(merge.message + "; each rank writes its own report");
  }

  bool written = false;
  if (has_file) {
    std::string error = config_.report_file.changed();
    std::string text;
    if (error.empty()) {
      try {
        text = Impl::find_report_format(config_.report_format)->write(*shown);
      } catch (const std::exception& failure) {
        error = std::string("it could not be made: ") + failure.what();
      }
    }
    written = error.empty() && write_file(config_.report_path, text, error);
    if (!written)
      Impl::warn("CUNUMPY_REPORT: cannot write '" + config_.report_path +
                 "' (" + error + "); the summary goes to stderr instead");
  }
  // On rank 0 with a report per rank: the job's summary on stderr.
  if (merge.job && shown != &*merge.job) {
    shown = &*merge.job;
    written = written && !merge.job->failed();
  }
  if (quiet)
    return failed_;
  // The report file is quiet when all is well; stderr gets the summary
  // when there is no file or the budget failed, for the CI log. (A budget
  // file that could not be used was said at start-up.)
  std::string text;
  if (!written || !shown->budget.violations.empty()) {
    text = Impl::format_summary(*shown) +
           (written ? "cunumpy: full report in " + config_.report_path + "\n"
            : config_.report_per_rank && merge.job
                ? "cunumpy: full reports: each rank's, in CUNUMPY_REPORT; "
                  "cunumpy-report merges them\n"
            : merge.ran && !merge.job && !config_.report_path.empty()
                ? "cunumpy: this rank's full report: set CUNUMPY_REPORT with "
                  "%r, each rank its own file\n"
                : "cunumpy: full report: set CUNUMPY_REPORT=<file>.txt or "
                  ".json\n");
  } else { // what a quiet report file would hide
    for (const std::string& note : Impl::report_notes(*shown, true))
      text += "cunumpy: note: " + Impl::printable(note) + " (report in " +
              config_.report_path + ")\n";
  }
  // Under GitHub Actions, the errors also as annotations on their lines.
  if (const char* actions = std::getenv("GITHUB_ACTIONS");
      actions != nullptr && std::string_view(actions) == "true" &&
      shown->failed()) {
    try {
      text += Impl::github_annotations(
          *shown, written ? config_.report_path
                          : "on stderr above (CUNUMPY_REPORT=<file>.sarif "
                            "writes every one)");
    } catch (const std::exception& failure) {
      text += std::string("cunumpy: no GitHub annotations: ") + failure.what() +
              "\n";
    }
  }
  if (!text.empty()) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
  return failed_;
}

} // namespace cunumpy::plugin
