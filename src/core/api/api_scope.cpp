// The recorder side of cunumpy's own calls: ApiScope (the caller's line and
// the call's description for the events inside), SyncScope (a wait counted
// once) and markers.

#include <atomic>
#include <optional>
#include <stdexcept>

#include <cunumpy/impl/api_scope.hpp>

#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
#include "recorder/thread_state.hpp"
#include "support/fast_thread_local.hpp"

namespace cunumpy::Impl {

std::string shape_string(const ArrayShape& shape) {
  std::string text = "(";
  for (int i = 0; i < shape.rank; ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(shape.extents[i]);
  }
  if (shape.rank == 1)
    text += ",";
  text += ")";
  return text;
}

std::string describe_call(std::string_view api, const ArrayShape* shape) {
  std::string text(api);
  if (shape == nullptr)
    return text + "()";
  text += "(shape=";
  text += shape_string(*shape);
  text += ", dtype=";
  text += shape->dtype;
  text += ")";
  return text;
}

namespace {
std::atomic<HookInstaller> hook_installer{nullptr};
} // namespace

void set_hook_installer(HookInstaller installer) noexcept {
  hook_installer.store(installer, std::memory_order_release);
}

Recorder& library_recorder() noexcept {
  // The library's start: its entry points (the functions and objects a
  // program calls without a context) are handed the recorder here, and
  // hand it on.
  return Recorder::instance();
}

RecorderLock lock_recorder() {
  return lock_recorder(library_recorder());
}

Recorder& ensure_hooks() {
  Recorder& recorder = library_recorder();
  if (const HookInstaller install =
          hook_installer.load(std::memory_order_acquire)) {
    install(recorder);
    return recorder;
  }
  if (!recorder.fed_by_plugin())
    throw std::runtime_error(
        "cunumpy: nothing feeds the recorder: link the program with "
        "cunumpy::cunumpy (libcunumpy, which installs cunumpy's Kokkos Tools "
        "callbacks) or load the plugin libkp_cunumpy through "
        "KOKKOS_TOOLS_LIBS");
  return recorder;
}

void set_site_provider(SiteProvider provider) noexcept {
  library_recorder().set_site_provider(provider);
}

SiteProvider site_provider() noexcept {
  return library_recorder().site_provider();
}

void set_debug_sync(bool on) noexcept {
  std::optional<recording::Inside> inside;
  if (recording::active()) {
    recording::Line("debug_sync").boolean("on", on).write();
    inside.emplace();
  }
  library_recorder().debug_sync(on);
}

namespace {

/// The start of a scope, in the recording: true when it is there.
bool record_scope(const char* event, const ApiScope& scope, const char* flag,
                  bool value) {
  if (!recording::active())
    return false;
  recording::Line(event)
      .text("description", scope.description())
      .text("file", scope.file())
      .number("line", static_cast<std::uint64_t>(scope.line()))
      .text("function", scope.function())
      .boolean(flag, value)
      .write();
  return true;
}

} // namespace

ApiScope::ApiScope(std::string_view api, SourceLocation where,
                   const ArrayShape* shape, bool async)
    : description_(describe_call(api, shape)), async_(async) {
  if (where.known()) {
    file_ = where.file;
    line_ = where.line;
    function_ = where.function != nullptr ? where.function : "";
  }
  enter();
  recorded_ = record_scope("api_enter", *this, "async", async_);
}

ApiScope::ApiScope(std::string_view description, std::string_view file,
                   int line, std::string_view function, bool async)
    : description_(description), file_(file), line_(line), function_(function),
      async_(async) {
  enter();
  recorded_ = record_scope("api_enter", *this, "async", async_);
}

ApiScope::ApiScope(std::string_view description, std::string_view file,
                   int line, std::string_view function, bool async, Unrecorded)
    : description_(description), file_(file), line_(line), function_(function),
      async_(async) {
  enter();
}

void ApiScope::enter() {
  outer_ = hot_thread_locals.api_scope;
  if (outer_ != nullptr) {
    // The user's line is the outermost call's; the description is ours.
    if (!outer_->file_.empty()) {
      file_ = outer_->file_;
      line_ = outer_->line_;
      function_ = outer_->function_;
    }
    async_ = async_ || outer_->async_;
  }
  hot_thread_locals.api_scope = this;
}

ApiScope::~ApiScope() {
  if (recorded_)
    recording::Line("api_exit").write();
  hot_thread_locals.api_scope = outer_;
}

ApiScope* ApiScope::current() noexcept {
  return hot_thread_locals.api_scope;
}

void record_marker(EventKind kind, std::string_view description,
                   SourceLocation where) {
  Recorder& recorder = library_recorder();
  // A kernel that converted device arrays, or ran on the host in place of
  // a device's: the front end that says so has a device backend.
  recorder.note_device_space();
  const std::string_view file = where.file != nullptr ? where.file : "";
  const std::string_view function =
      where.function != nullptr ? where.function : "";
  std::optional<recording::Inside> inside;
  if (recording::active()) {
    recording::Line("marker")
        .text("kind", to_string(kind))
        .text("description", description)
        .text("file", file)
        .number("line", static_cast<std::uint64_t>(where.line))
        .text("function", function)
        .write();
    inside.emplace();
  }
  if (!recorder.has_sinks())
    return;
  ApiScope scope(description, file, where.line, function, false,
                 ApiScope::Unrecorded{});
  CapturedSite site;
  site.capture(recorder);
  RawEvent event;
  event.kind = kind;
  event.blocking = false;
  ThreadState& thread = thread_state(recorder);
  event.thread = thread.index;
  event.start = recorder.now();
  const Place place = recorder.place(thread);
  event.node = place.node;
  event.region_thread = place.thread;
  event.call = place.call;
  const RecorderLock lock = recorder.lock();
  event.site = site.intern(recorder, thread.sites, lock);
  event.description = recorder.strings(lock).intern(description);
  recorder.deliver(event, lock);
}

SyncScope::SyncScope(std::string_view api, SourceLocation where, bool implicit)
    : SyncScope(describe_call(api, nullptr), where.known() ? where.file : "",
                where.known() ? where.line : 0,
                where.known() && where.function != nullptr ? where.function
                                                           : "",
                implicit) {}

SyncScope::SyncScope(std::string_view description, std::string_view file,
                     int line, std::string_view function, bool implicit)
    : api_(description, file, line, function, false, ApiScope::Unrecorded{}),
      fences_before_(thread_fence_count(library_recorder())),
      start_(library_recorder().now()), implicit_(implicit) {
  api_.single_sync = true;
  api_.implicit_sync = implicit;
  recorded_ = record_scope("sync_enter", api_, "implicit", implicit);
}

SyncScope::~SyncScope() {
  std::optional<recording::Inside> inside;
  if (recorded_) {
    recording::Line("sync_exit").write();
    inside.emplace();
  }
  try {
    if (thread_fence_count(library_recorder()) != fences_before_)
      return; // Kokkos reported the fence; it is recorded already
    Recorder& recorder = library_recorder();
    if (!recorder.has_sinks())
      return;
    CapturedSite site;
    site.capture(recorder);
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    event.implicit = implicit_;
    ThreadState& thread = thread_state(recorder);
    event.thread = thread.index;
    event.start = start_;
    event.duration = recorder.now() - start_;
    const Place place = recorder.place(thread);
    event.node = place.node;
    event.region_thread = place.thread;
    event.call = place.call;
    const RecorderLock lock = recorder.lock();
    allocation_point();
    event.site = site.intern(recorder, thread.sites, lock);
    if (api_.description_id == 0)
      api_.description_id = recorder.strings(lock).intern(api_.description());
    event.description = api_.description_id;
    event.label = event.description;
    recorder.deliver(event, lock);
  } catch (...) {
    library_recorder().losses().count(LossReason::record_failed);
  }
}

std::uint64_t thread_fence_count(const Recorder& recorder) noexcept {
  const ThreadState* const thread = thread_state().find(recorder);
  return thread != nullptr ? thread->fence_count : 0;
}

std::uint32_t thread_index() noexcept {
  return thread_state().index;
}

} // namespace cunumpy::Impl
