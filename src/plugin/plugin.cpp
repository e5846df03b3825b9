#include "plugin.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <errno.h> // program_invocation_name (glibc)
#include <mutex>
#include <unistd.h>

#include <cunumpy/spaces.hpp>

#include "support/environment.hpp"
#include "recorder/recorder.hpp"
#include "report.hpp"

namespace cunumpy::plugin {
namespace {

/// Kernels open on this thread, for their trace slices. Entries are reused
/// so that names keep their storage.
struct KernelStack {
  struct Frame {
    std::string name;
    double start = 0.0;
  };
  std::vector<Frame> frames;
  std::size_t depth = 0;
};

KernelStack& kernel_stack() {
  thread_local KernelStack stack;
  return stack;
}

std::string program_name() {
#if defined(__GLIBC__)
  if (program_invocation_name != nullptr)
    return program_invocation_name;
#endif
  return "<program>";
}

bool write_file(const std::string& path, const std::string& text,
                std::string& error) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    error = std::strerror(errno);
    return false;
  }
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int saved = errno;
  if (std::fclose(file) != 0 || !written) {
    error = std::strerror(written ? errno : saved);
    return false;
  }
  return true;
}

} // namespace

Plugin::Plugin(int load_sequence, std::uint64_t interface_version,
               std::uint32_t device_count,
               Kokkos_Profiling_KokkosPDeviceInfo* devices, const void* self) {
  Impl::Recorder& recorder = Impl::Recorder::instance();
  // Kokkos feeds the recorder through this library: cunumpy's in-process
  // hooks, if the application uses cunumpy too, must not feed it again.
  recorder.set_fed_by_plugin(true);
  start_ = recorder.now();
  config_ = Config::from_environment();
  (void)registered_device_spaces(); // reads CUNUMPY_DEVICE_SPACES now

  const std::string next_path = next_tool_path(self);
  if (!next_path.empty()) {
    next_ = load_next_tool(next_path, self);
    if (next_.init != nullptr)
      next_.init(load_sequence, interface_version, device_count, devices);
  }

  budget_.emplace(true);
  budget_->state()->keep_events(0);     // reports read the aggregates only
  budget_->state()->count_total(false); // and the total at the end
  if (!config_.budget_path.empty()) {
    try {
      budget_->require_file(config_.budget_path);
    } catch (const std::exception& error) {
      budget_error_ = error.what();
      const std::string prefix = "cunumpy::TransferBudget: ";
      if (budget_error_.compare(0, prefix.size(), prefix) == 0)
        budget_error_.erase(0, prefix.size());
      Impl::warn("CUNUMPY_BUDGET: " + budget_error_ +
                 "; running without a budget");
    }
  }
  if (!config_.trace_path.empty()) {
    trace_ = std::make_unique<Trace>(config_.trace_path, config_.rank);
    recorder.attach(trace_.get());
  }
  recorder.attach(&dual_views_);
}

Plugin::~Plugin() {
  Impl::Recorder& recorder = Impl::Recorder::instance();
  recorder.detach(&dual_views_);
  if (trace_)
    recorder.detach(trace_.get());
}

void Plugin::begin_kernel(const char* name) {
  KernelStack& stack = kernel_stack();
  if (stack.depth == stack.frames.size())
    stack.frames.emplace_back();
  KernelStack::Frame& frame = stack.frames[stack.depth++];
  frame.name.assign(name != nullptr ? name : "");
  frame.start = Impl::Recorder::instance().now();
}

void Plugin::end_kernel() {
  KernelStack& stack = kernel_stack();
  if (stack.depth == 0)
    return;
  const KernelStack::Frame& frame = stack.frames[--stack.depth];
  Impl::Recorder& recorder = Impl::Recorder::instance();
  const double end = recorder.now();
  std::lock_guard lock(recorder.mutex());
  trace_->add_kernel(recorder.strings().intern(frame.name),
                     Impl::thread_index(), frame.start, end);
}

void Plugin::declare_metadata(const char* key, const char* value) {
  std::lock_guard lock(Impl::Recorder::instance().mutex());
  metadata_.emplace_back(key != nullptr ? key : "",
                         value != nullptr ? value : "");
}

bool Plugin::finish() {
  Impl::Recorder& recorder = Impl::Recorder::instance();
  Report report;
  std::string trace_error;
  {
    auto lock = Impl::lock_recorder(); // with every queued event
    if (finished_)
      return failed_;
    finished_ = true;
    const double end = recorder.now();
    report.program = program_name();
    report.rank = config_.rank;
    report.rank_known = config_.rank_known;
    report.pid = static_cast<long>(::getpid());
    report.elapsed = end - start_;
    report.backtrace_depth = recorder.backtrace_depth();
    report.budget_path = config_.budget_path;
    report.budget_error = budget_error_;
    report.metadata = metadata_;
    collect(report, *budget_->state(), dual_views_);
    if (trace_) {
      report.trace_path = trace_->path();
      trace_error = trace_->write(end, report.program);
      report.trace_dropped = trace_->dropped();
    }
  }
  report.device_spaces = registered_device_spaces();
  report.unknown_spaces = Impl::unknown_space_copies();
  failed_ = report.failed();

  if (!trace_error.empty())
    Impl::warn("CUNUMPY_TRACE: cannot write '" + report.trace_path + "' (" +
               trace_error + ")");
  bool written = false;
  if (!config_.report_path.empty()) {
    std::string error;
    written = write_file(
        config_.report_path,
        config_.report_json ? format_json(report) : format_text(report), error);
    if (!written)
      Impl::warn("CUNUMPY_REPORT: cannot write '" + config_.report_path +
                 "' (" + error + "); the summary goes to stderr instead");
  }
  // The report file is quiet when all is well; stderr gets the summary
  // when there is no file or a rule is broken, for the CI log. (A budget
  // file that could not be used was said at start-up.)
  std::string text;
  if (!written || !report.violations.empty())
    text = format_summary(report, written ? config_.report_path : "");
  else // what a quiet report file would hide
    for (const std::string& note : report_notes(report))
      text += "cunumpy: note: " + note + " (report in " + config_.report_path +
              ")\n";
  if (failed_ && config_.exit_on_violation)
    text += "cunumpy: CUNUMPY_ON_VIOLATION=exit: the process ends with "
            "status " +
            std::to_string(violation_exit_status) + "\n";
  if (!text.empty()) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
  return failed_;
}

} // namespace cunumpy::plugin
