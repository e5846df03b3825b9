#include "recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CUNUMPY_HAVE_TSC 1
#endif

#include <cunumpy/impl/recorder.hpp>

#ifndef CUNUMPY_KOKKOS_VERSION
#error "src/CMakeLists.txt defines CUNUMPY_KOKKOS_VERSION for this file"
#endif
#include <cunumpy/space_names.hpp>

#include "environment.hpp"
#include "fast_thread_local.hpp"
#include "stack_capture.hpp"

namespace cunumpy::Impl {
namespace {

constexpr int max_frames = 64;
constexpr int default_backtrace_depth = 32;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// Where an event came from, captured on the event's thread without the
/// recorder's mutex and interned later with it.
struct CapturedSite {
  ApiScope* api = nullptr;
  int frame_count = 0;
  void* frames[max_frames];
  bool have_fallback = false;
  std::string fallback_file;
  std::string fallback_function;
  int fallback_line = 0;

  void capture(const Recorder& recorder) {
    api = ApiScope::current();
    frame_count = 0;
    have_fallback = false;
    if (api != nullptr && !api->file().empty())
      return;
    const int depth = recorder.backtrace_depth();
    if (depth > 0)
      frame_count = capture_stack(frames, std::min(depth, max_frames));
    if (auto provider = recorder.site_provider())
      have_fallback = provider(fallback_file, fallback_line, fallback_function);
  }

  /// The site id; needs the recorder's mutex.
  std::uint32_t intern(Recorder& recorder) const {
    SiteTable& sites = recorder.sites();
    if (api != nullptr && !api->file().empty()) {
      if (api->site_id == 0)
        api->site_id = sites.known(api->file(), api->line(), api->function());
      return api->site_id;
    }
    const std::uint32_t fallback =
        have_fallback
            ? sites.known(fallback_file, fallback_line, fallback_function)
            : 0;
    return sites.stack(frames, frame_count, fallback);
  }
};

struct InFlightCopy {
  bool transfer = false;
  bool scalar = false;
  bool saw_fence = false;
  bool has_recorded_child = false;
  EventKind kind = EventKind::to_host;
  std::uint64_t nbytes = 0;
  std::uint32_t src_space = 0;
  std::uint32_t dst_space = 0;
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  std::string label;          ///< set when label_id is 0
  std::uint32_t label_id = 0; ///< StringTable id, when already known
  CapturedSite site;
  double start = 0.0;
};

struct InFlightFence {
  bool recorded = false;
  bool global = false;
  std::string name;
  CapturedSite site;
  double start = 0.0;
};

struct SpaceCacheEntry {
  char name[64] = {};
  SpaceSide side = SpaceSide::host;
  std::uint32_t id = 0;
  std::uint64_t generation = ~std::uint64_t(0);
};

struct LastCopy {
  bool valid = false;
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  EventKind kind = EventKind::to_host;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;
};

std::atomic<std::uint32_t> next_thread_index{0};

struct ThreadState {
  // Elements are reused (depth counters, never shrinking) so that strings
  // and frames keep their storage: recording allocates nothing once warm.
  std::vector<InFlightCopy> copies;
  std::size_t copy_depth = 0;
  std::vector<InFlightFence> fences;
  std::size_t fence_depth = 0;
  std::uint32_t index = next_thread_index.fetch_add(1);
  std::uint64_t fence_count = 0;
  SpaceCacheEntry spaces[8];
  unsigned next_space = 0;
  LastCopy last_copy;
  // Cache of the last label and raw-copy description.
  std::string label;
  std::uint32_t label_id = 0;
  std::uint32_t what_label = 0;
  std::uint64_t what_nbytes = ~std::uint64_t(0);
  bool what_scalar = false;
  std::uint32_t what_id = 0;
  std::string fence_name;
  std::uint32_t fence_name_id = 0;
  // Activity on this thread (copies and fences begun), to merge the fences
  // one Kokkos::fence reports for each execution space into one sync.
  std::uint64_t activity = 0;
  std::uint64_t global_fence_activity = 0;
  std::uint32_t global_fence_name_id = 0;

  InFlightCopy& push_copy() {
    if (copy_depth == copies.size())
      copies.emplace_back();
    return copies[copy_depth++];
  }
  InFlightFence& push_fence() {
    if (fence_depth == fences.size())
      fences.emplace_back();
    return fences[fence_depth++];
  }
};

ThreadState& thread_state() {
  return FastThreadLocal<ThreadState>::get();
}

/// The side and interned name of a memory space, cached per thread and
/// invalidated when the set of device spaces changes.
void classify(const char* name, ThreadState& thread, SpaceSide& side,
              std::uint32_t& id) {
  const std::uint64_t generation = Impl::device_space_generation();
  for (SpaceCacheEntry& entry : thread.spaces) {
    if (entry.generation == generation && entry.name[0] == name[0] &&
        std::strncmp(entry.name, name, sizeof entry.name) == 0) {
      side = entry.side;
      id = entry.id;
      return;
    }
  }
  side = space_side(name);
  {
    Recorder& recorder = Recorder::instance();
    std::lock_guard lock(recorder.mutex());
    id = recorder.strings().intern(name);
  }
  SpaceCacheEntry& entry = thread.spaces[thread.next_space++ % 8];
  std::strncpy(entry.name, name, sizeof entry.name - 1);
  entry.side = side;
  entry.id = id;
  entry.generation = generation;
}

/// Fences a tool asked for, not the program.
bool is_tool_fence(std::string_view name) {
  return name.find("Kokkos Profile Tool Fence") != std::string_view::npos;
}

/// On a build with a device backend, a fence of a host execution space is
/// not a wait for the device. Kokkos 4 encodes the execution space type in
/// the top 8 bits of the device id.
bool is_host_execution_space_fence(std::uint32_t device_id) {
#if CUNUMPY_KOKKOS_VERSION >= 40000 && CUNUMPY_KOKKOS_DEVICE_BACKEND
  {
    const std::uint32_t type = device_id >> 24;
    // Serial, OpenMP, HPX, Threads.
    return type == 0 || type == 1 || type == 5 || type == 6;
  }
#endif
  (void)device_id;
  return false;
}

/// A wait the program did not ask for: a fence Kokkos made on its own.
bool is_implicit_fence(std::string_view name) {
  // Kokkos names the fences a user asks for without a name "... Unnamed
  // (Global|Instance) Fence"; its own fences are named after what needs them.
  if (name.find("Unnamed") != std::string_view::npos)
    return false;
  return starts_with(name, "Kokkos::") ||
         name.find("Space::impl_") != std::string_view::npos ||
         starts_with(name, "SharedAllocationRecord"); // a device allocation
}

/// A global fence (Kokkos::fence) is reported once per execution space, with
/// the reason in the low bits of the device id being 0.
bool is_global_fence(std::uint32_t device_id) {
  return (device_id & 0x00ffffffu) == 0;
}

bool copy_is_blocking(const InFlightCopy& copy) {
  if (copy.site.api != nullptr && copy.site.api->async())
    return false;
#if CUNUMPY_KOKKOS_VERSION >= 40000
  // Kokkos 4 fences a blocking copy inside begin/end_deep_copy; a copy on an
  // execution space instance has no fence.
  return copy.saw_fence || copy.scalar;
#else
  // Kokkos 3 reports no fences: a copy is blocking unless cunumpy made it
  // asynchronously.
  return true;
#endif
}

std::uint32_t raw_copy_description(Recorder& recorder, ThreadState& thread,
                                   const InFlightCopy& copy) {
  if (thread.what_id != 0 && thread.what_nbytes == copy.nbytes &&
      thread.what_scalar == copy.scalar && thread.what_label == copy.label_id)
    return thread.what_id;
  std::string what = copy.scalar ? "deep_copy(scalar <- \"" : "deep_copy(\"";
  what += recorder.strings().view(copy.label_id);
  what += "\", nbytes=" + std::to_string(copy.nbytes) + ")";
  thread.what_id = recorder.strings().intern(what);
  thread.what_label = copy.label_id;
  thread.what_nbytes = copy.nbytes;
  thread.what_scalar = copy.scalar;
  return thread.what_id;
}

std::uint32_t api_description(Recorder& recorder, ApiScope* api) {
  if (api->what_id == 0)
    api->what_id = recorder.strings().intern(api->what());
  return api->what_id;
}

int backtrace_depth_from_environment() {
  return environment_integer("CUNUMPY_BACKTRACE", default_backtrace_depth, 0,
                             max_frames);
}

} // namespace

Recorder::Recorder() : backtrace_depth_(backtrace_depth_from_environment()) {
  (void)now(); // calibrate the clock now, not during the first event
}

Recorder& Recorder::instance() {
  // Never destroyed: Kokkos may report events during static destruction.
  static Recorder* recorder = new Recorder();
  return *recorder;
}

void Recorder::attach(EventSink* sink) {
  std::lock_guard lock(mutex_);
  for (auto& [attached, references] : sinks_) {
    if (attached == sink) {
      ++references;
      return;
    }
  }
  sinks_.emplace_back(sink, 1);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::detach(EventSink* sink) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(sinks_.begin(), sinks_.end(), [&](const auto& entry) {
    return entry.first == sink;
  });
  if (it == sinks_.end())
    return;
  if (--it->second == 0)
    sinks_.erase(it);
  sink_count_.store(static_cast<int>(sinks_.size()), std::memory_order_release);
}

void Recorder::dispatch(const RawEvent& event) {
  for (auto& entry : sinks_)
    entry.first->on_event(event);
}

void Recorder::dispatch_region_push(std::uint32_t name, double time) {
  for (auto& entry : sinks_)
    entry.first->on_region_push(name, time);
}

void Recorder::dispatch_region_pop(double time) {
  for (auto& entry : sinks_)
    entry.first->on_region_pop(time);
}

void Recorder::dispatch_dual_view(const DualViewEvent& event) {
  for (auto& entry : sinks_)
    entry.first->on_dual_view(event);
}

namespace {

/// Seconds since start-up, read from the time-stamp counter where it ticks
/// at a constant rate (about 8 ns a read instead of 20 for clock_gettime:
/// every copy is timed twice), else from std::chrono::steady_clock.
class Clock {
public:
  Clock() : epoch_(std::chrono::steady_clock::now()) {
#ifdef CUNUMPY_HAVE_TSC
    if (invariant_tsc()) {
      // Calibrate against steady_clock over one millisecond.
      const auto t0 = std::chrono::steady_clock::now();
      const std::uint64_t c0 = __rdtsc();
      auto t1 = t0;
      while (t1 - t0 < std::chrono::milliseconds(1))
        t1 = std::chrono::steady_clock::now();
      const std::uint64_t c1 = __rdtsc();
      const double seconds = std::chrono::duration<double>(t1 - t0).count();
      if (c1 > c0) {
        seconds_per_tick_ = seconds / static_cast<double>(c1 - c0);
        tsc_epoch_ =
            c0 - static_cast<std::uint64_t>(
                     std::chrono::duration<double>(t0 - epoch_).count() /
                     seconds_per_tick_);
        use_tsc_ = true;
      }
    }
#endif
  }

  double now() const noexcept {
#ifdef CUNUMPY_HAVE_TSC
    if (use_tsc_)
      return static_cast<double>(__rdtsc() - tsc_epoch_) * seconds_per_tick_;
#endif
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         epoch_)
        .count();
  }

private:
  static bool invariant_tsc() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
      if (line.rfind("flags", 0) == 0)
        return line.find(" constant_tsc") != std::string::npos &&
               line.find(" nonstop_tsc") != std::string::npos;
    return false;
  }

  std::chrono::steady_clock::time_point epoch_;
  bool use_tsc_ = false;
  std::uint64_t tsc_epoch_ = 0;
  double seconds_per_tick_ = 0.0;
};

const Clock& clock() {
  static const Clock* instance = new Clock();
  return *instance;
}

} // namespace

double Recorder::now() const noexcept {
  return clock().now();
}

void Recorder::set_backtrace_depth(int depth) noexcept {
  backtrace_depth_.store(std::clamp(depth, 0, max_frames),
                         std::memory_order_relaxed);
}

Event to_public(const RawEvent& raw) {
  Recorder& recorder = Recorder::instance();
  Event event;
  event.kind = raw.kind;
  event.nbytes = raw.nbytes;
  event.what = recorder.strings().view(raw.what);
  event.label = recorder.strings().view(raw.label);
  event.src_space = recorder.strings().view(raw.src_space);
  event.dst_space = recorder.strings().view(raw.dst_space);
  event.site = recorder.sites().resolve(raw.site);
  event.blocking = raw.blocking;
  event.async = raw.async();
  event.implicit = raw.implicit;
  event.thread = raw.thread;
  event.timestamp = raw.start;
  event.duration = raw.duration;
  return event;
}

std::uint64_t thread_fence_count() noexcept {
  return thread_state().fence_count;
}

std::uint32_t thread_index() noexcept {
  return thread_state().index;
}

namespace feed {

void begin_deep_copy(const char* dst_space, const char* dst_label,
                     const void* dst_ptr, const char* src_space,
                     const char* src_label, const void* src_ptr,
                     std::uint64_t size) noexcept {
  try {
    ThreadState& thread = thread_state();
    ++thread.activity;
    InFlightCopy& copy = thread.push_copy();
    copy.transfer = false;
    copy.saw_fence = false;
    copy.has_recorded_child = false;
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    SpaceSide dst_side, src_side;
    classify(dst_space, thread, dst_side, copy.dst_space);
    classify(src_space, thread, src_side, copy.src_space);
    if (dst_side == SpaceSide::host && src_side == SpaceSide::host)
      return; // host to host: not a transfer
    copy.transfer = true;
    copy.kind = dst_side == SpaceSide::host   ? EventKind::to_host
                : src_side == SpaceSide::host ? EventKind::to_device
                                              : EventKind::device_copy;
    copy.scalar = copy.kind == EventKind::to_host && dst_label != nullptr &&
                  std::strcmp(dst_label, "Scalar") == 0;
    copy.nbytes = size;
    copy.dst_ptr = dst_ptr;
    copy.src_ptr = src_ptr;
    // Loops copy the same views: reuse the last label's id when it matches.
    const char* label = src_label != nullptr ? src_label : "";
    if (thread.label_id != 0 && std::strcmp(thread.label.c_str(), label) == 0) {
      copy.label_id = thread.label_id;
    } else {
      copy.label_id = 0;
      copy.label.assign(label);
    }
    copy.site.capture(recorder);
    copy.start = recorder.now();
  } catch (...) {
  }
}

void end_deep_copy() noexcept {
  try {
    ThreadState& thread = thread_state();
    if (thread.copy_depth == 0)
      return;
    InFlightCopy& copy = thread.copies[--thread.copy_depth];
    // A copy made of inner deep copies is recorded through them only.
    if (!copy.transfer || copy.has_recorded_child)
      return;
    Recorder& recorder = Recorder::instance();
    RawEvent event;
    event.kind = copy.kind;
    event.blocking = copy_is_blocking(copy);
    event.thread = thread.index;
    event.nbytes = copy.nbytes;
    event.src_space = copy.src_space;
    event.dst_space = copy.dst_space;
    event.start = copy.start;
    event.duration = recorder.now() - copy.start;
    {
      std::lock_guard lock(recorder.mutex());
      event.site = copy.site.intern(recorder);
      if (copy.label_id == 0) {
        thread.label = copy.label;
        thread.label_id = recorder.strings().intern(copy.label);
        copy.label_id = thread.label_id;
      }
      event.label = copy.label_id;
      event.what = copy.site.api != nullptr
                       ? api_description(recorder, copy.site.api)
                       : raw_copy_description(recorder, thread, copy);
      recorder.dispatch(event);
      if (copy.scalar) {
        // Reading a device value into a host scalar makes the host wait.
        RawEvent sync = event;
        sync.kind = EventKind::sync;
        sync.nbytes = 0;
        sync.blocking = true;
        sync.implicit = true;
        recorder.dispatch(sync);
      }
    }
    for (std::size_t i = 0; i < thread.copy_depth; ++i)
      thread.copies[i].has_recorded_child = true;
    thread.last_copy = {true,      copy.dst_ptr, copy.src_ptr,
                        copy.kind, copy.nbytes,  event.site};
  } catch (...) {
  }
}

void begin_fence(const char* name, std::uint32_t device_id) noexcept {
  try {
    ThreadState& thread = thread_state();
    ++thread.activity;
    InFlightFence& fence = thread.push_fence();
    fence.recorded = false;
    fence.global = is_global_fence(device_id);
    if (thread.copy_depth > 0) {
      // A copy's own fence: it makes the copy blocking, not a sync apart.
      thread.copies[thread.copy_depth - 1].saw_fence = true;
      return;
    }
    Recorder& recorder = Recorder::instance();
    const std::string_view fence_name = name != nullptr ? name : "";
    if (!recorder.has_sinks() || is_tool_fence(fence_name) ||
        is_host_execution_space_fence(device_id))
      return;
    // The waits of a blocking cunumpy call around its copies (Kokkos fences
    // after a device allocation and before freeing a host temporary) belong
    // to the call, which waits anyway: not a sync apart. SyncScopes record
    // their wait; a wait inside an asynchronous call is recorded, implicit.
    const ApiScope* api = ApiScope::current();
    if (api != nullptr && !api->single_sync && !api->async())
      return;
    ++thread.fence_count; // recorded: SyncScope need not record it again
    fence.recorded = true;
    fence.name.assign(fence_name);
    fence.site.capture(recorder);
    fence.start = recorder.now();
  } catch (...) {
  }
}

void end_fence() noexcept {
  try {
    ThreadState& thread = thread_state();
    if (thread.fence_depth == 0)
      return;
    InFlightFence& fence = thread.fences[--thread.fence_depth];
    if (!fence.recorded)
      return;
    Recorder& recorder = Recorder::instance();
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    event.implicit = is_implicit_fence(fence.name) ||
                     (fence.site.api != nullptr && fence.site.api->async());
    event.thread = thread.index;
    event.start = fence.start;
    event.duration = recorder.now() - fence.start;
    std::lock_guard lock(recorder.mutex());
    event.site = fence.site.intern(recorder);
    if (thread.fence_name_id == 0 || thread.fence_name != fence.name) {
      thread.fence_name = fence.name;
      thread.fence_name_id = recorder.strings().intern(fence.name);
    }
    event.label = thread.fence_name_id;
    event.what = fence.site.api != nullptr
                     ? api_description(recorder, fence.site.api)
                     : thread.fence_name_id;
    if (ApiScope* api = fence.site.api; api != nullptr && api->single_sync) {
      if (api->sync_recorded)
        return;
      api->sync_recorded = true;
    }
#if CUNUMPY_KOKKOS_VERSION >= 40000
    if (fence.global) {
      // The next execution space's part of the same Kokkos::fence: nothing
      // else happened on this thread since the previous part ended.
      const bool same_fence =
          thread.global_fence_name_id == event.label &&
          thread.global_fence_activity + 1 == thread.activity;
      thread.global_fence_name_id = event.label;
      thread.global_fence_activity = thread.activity;
      if (same_fence)
        return;
    }
#endif
    recorder.dispatch(event);
  } catch (...) {
  }
}

void push_region(const char* name) noexcept {
  try {
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    const double time = recorder.now();
    std::lock_guard lock(recorder.mutex());
    recorder.dispatch_region_push(
        recorder.strings().intern(name != nullptr ? name : ""), time);
  } catch (...) {
  }
}

void pop_region() noexcept {
  try {
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    const double time = recorder.now();
    std::lock_guard lock(recorder.mutex());
    recorder.dispatch_region_pop(time);
  } catch (...) {
  }
}

namespace {

void dual_view_event(const char* label, const void* ptr, bool sync,
                     bool device) {
  Recorder& recorder = Recorder::instance();
  if (!recorder.has_sinks())
    return;
  ThreadState& thread = thread_state();
  DualViewEvent event;
  event.pointer = ptr;
  event.sync = sync;
  event.device = device;
  event.time = recorder.now();
  // Kokkos reports a sync after the deep copy it made, with the address of
  // the allocation (the view's data, or its header 128 bytes before).
  const LastCopy& last = thread.last_copy;
  if (sync && last.valid) {
    const auto data = reinterpret_cast<std::uintptr_t>(last.dst_ptr);
    const auto reported = reinterpret_cast<std::uintptr_t>(ptr);
    if (data >= reported && data - reported <= 256) {
      event.copied = true;
      event.source = last.src_ptr;
      event.copy_kind = last.kind;
      event.nbytes = last.nbytes;
      event.site = last.site;
    }
  }
  thread.last_copy.valid = false;
  CapturedSite site;
  if (!event.copied)
    site.capture(recorder);
  std::lock_guard lock(recorder.mutex());
  event.label = recorder.strings().intern(label != nullptr ? label : "");
  if (!event.copied)
    event.site = site.intern(recorder);
  recorder.dispatch_dual_view(event);
}

} // namespace

void dual_view_sync(const char* label, const void* ptr,
                    bool to_device) noexcept {
  try {
    dual_view_event(label, ptr, true, to_device);
  } catch (...) {
  }
}

void dual_view_modify(const char* label, const void* ptr,
                      bool on_device) noexcept {
  try {
    dual_view_event(label, ptr, false, on_device);
  } catch (...) {
  }
}

} // namespace feed

// ApiScope, SyncScope and markers: the recorder side of cunumpy's own calls.

namespace {
thread_local ApiScope* current_api_scope CUNUMPY_FAST_TLS = nullptr;
} // namespace

ApiScope::ApiScope(std::string_view api, SourceLocation where,
                   const ArrayShape* shape, bool async)
    : async_(async) {
  what_.assign(api);
  if (shape != nullptr) {
    what_ += "(shape=";
    what_ += shape_string(*shape);
    what_ += ", dtype=";
    what_ += shape->dtype;
    what_ += ")";
  } else {
    what_ += "()";
  }
  if (where.known()) {
    file_ = where.file;
    line_ = where.line;
    function_ = where.function != nullptr ? where.function : "";
  }
  enter();
}

ApiScope::ApiScope(std::string_view what, std::string_view file, int line,
                   std::string_view function, bool async)
    : what_(what), file_(file), line_(line), function_(function),
      async_(async) {
  enter();
}

void ApiScope::enter() {
  outer_ = current_api_scope;
  if (outer_ != nullptr) {
    // The user's line is the outermost call's; the description is ours.
    if (!outer_->file_.empty()) {
      file_ = outer_->file_;
      line_ = outer_->line_;
      function_ = outer_->function_;
    }
    async_ = async_ || outer_->async_;
  }
  current_api_scope = this;
}

ApiScope::~ApiScope() {
  current_api_scope = outer_;
}

ApiScope* ApiScope::current() noexcept {
  return current_api_scope;
}

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

void record_marker(EventKind kind, std::string_view what,
                   SourceLocation where) {
  Recorder& recorder = Recorder::instance();
  if (!recorder.has_sinks())
    return;
  ApiScope scope(what, where.file != nullptr ? where.file : "", where.line,
                 where.function != nullptr ? where.function : "");
  CapturedSite site;
  site.capture(recorder);
  RawEvent event;
  event.kind = kind;
  event.blocking = false;
  event.thread = thread_state().index;
  event.start = recorder.now();
  std::lock_guard lock(recorder.mutex());
  event.site = site.intern(recorder);
  event.what = recorder.strings().intern(what);
  recorder.dispatch(event);
}

SyncScope::SyncScope(std::string_view what, SourceLocation where, bool implicit)
    : api_(what, where), fences_before_(thread_fence_count()),
      start_(Recorder::instance().now()), implicit_(implicit) {
  api_.single_sync = true;
}

SyncScope::~SyncScope() {
  try {
    if (thread_fence_count() != fences_before_)
      return; // Kokkos reported the fence; it is recorded already
    Recorder& recorder = Recorder::instance();
    if (!recorder.has_sinks())
      return;
    CapturedSite site;
    site.capture(recorder);
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    event.implicit = implicit_;
    event.thread = thread_state().index;
    event.start = start_;
    event.duration = recorder.now() - start_;
    std::lock_guard lock(recorder.mutex());
    event.site = site.intern(recorder);
    event.what = api_description(recorder, &api_);
    event.label = event.what;
    recorder.dispatch(event);
  } catch (...) {
  }
}

} // namespace cunumpy::Impl
