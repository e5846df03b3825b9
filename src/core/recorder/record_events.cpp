// The recorder side of Kokkos Tools events: in-flight copies and fences on
// each thread become RawEvents, placed where they began; regions open and
// close on their thread; DualView events and kernels become records of
// their own. Each is given to the sinks at once, under the mutex that also
// interns what it names. What cannot be recorded is counted as lost.

#include "recorder/record_events.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>

#include "call_sites/modules.hpp"
#include "call_sites/stack_capture.hpp"
#include "recorder/contents.hpp"
#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
#include "recorder/spaces.hpp"
#include "recorder/thread_state.hpp"

namespace cunumpy::Impl {
namespace {

std::uint32_t api_description(Recorder& recorder, ApiScope* api,
                              const RecorderLock& lock) {
  if (api->description_id == 0)
    api->description_id = recorder.strings(lock).intern(api->description());
  return api->description_id;
}

/// The description of a copy Kokkos made on its own.
std::uint32_t raw_copy_description(Recorder& recorder, ThreadState& thread,
                                   const InFlightCopy& copy,
                                   const RecorderLock& lock) {
  std::uint32_t id = 0;
  if (thread.descriptions.find(copy, id))
    return id;
  std::string text = copy.scalar ? "deep_copy(scalar <- \"" : "deep_copy(\"";
  text += recorder.strings(lock).view(copy.label_id);
  text += "\", nbytes=" + std::to_string(copy.nbytes) + ")";
  id = recorder.strings(lock).intern(text);
  thread.descriptions.store(copy, id);
  return id;
}

/// The ids of a copy's event, from the thread's caches; false when one
/// must be interned.
bool cached_copy_ids(ThreadState& thread, const InFlightCopy& copy,
                     RawEvent& event) {
  if (!copy.label_known || !copy.site.cached(thread.sites, event.site))
    return false;
  event.label = copy.label_id;
  if (copy.site.api != nullptr) {
    event.description = copy.site.api->description_id;
    return event.description != 0;
  }
  return thread.descriptions.find(copy, event.description);
}

void lost_record(Recorder& recorder) noexcept {
  recorder.losses().count(LossReason::record_failed);
}

/// A source of late events saw copies inside `copy` (CUDA's record: CUDA
/// copied): its event (and a scalar read's wait) waits for the source's
/// record of them instead of being delivered. False when no source was
/// added under that id (the event is delivered as usual).
__attribute__((noinline, cold)) bool hold_in_source(Recorder& recorder,
                                                    const InFlightCopy& copy,
                                                    const RawEvent& event) {
  EventSource* source = recorder.sources().added(copy.held_by);
  if (source == nullptr)
    return false;
  if (!copy.scalar) {
    source->hold(copy.held_token, event, nullptr);
    return true;
  }
  const RawEvent sync = scalar_read_wait(event);
  source->hold(copy.held_token, event, &sync);
  return true;
}

/// The Kokkos copy that a source of late events holds made no event of its
/// own.
__attribute__((noinline, cold)) void
forget_in_source(Recorder& recorder, const InFlightCopy& copy) {
  if (EventSource* source = recorder.sources().added(copy.held_by))
    source->forget(copy.held_token);
}

/// The file name of the module of the first frame of the calling thread's
/// stack outside cunumpy, Kokkos and the runtime ("libtpetra.so.13.2", the
/// program's name); "" when there is none.
std::string calling_module() {
  void* frames[32];
  const int count = capture_stack(frames, 32);
  for (int i = 1; i < count; ++i) {
    LoadedModule module;
    // A return address points after the call; look up the call itself.
    if (frames[i] != nullptr &&
        find_module(reinterpret_cast<std::uintptr_t>(frames[i]) - 1, module) &&
        !module.library)
      return module.name;
  }
  return {};
}

void place_event(RawEvent& event, const Place& place) noexcept {
  event.node = place.node;
  event.region_thread = place.thread;
  event.call = place.call;
}

/// The copy of a device kernel's result to the host (a parallel_reduce or
/// parallel_scan into a host value) that `fence` waits for, whose sync is
/// `wait`: a to_host of the program's, at the fence's line. Kokkos does not
/// report its size.
RawEvent result_read(Recorder& recorder, const ThreadState& thread,
                     const InFlightFence& fence, const RawEvent& wait,
                     const RecorderLock& lock) {
  RawEvent read = wait;
  read.kind = EventKind::to_host;
  read.implicit = false;
  read.allocation = false;
  read.nbytes = 0;
  const bool scan = fence.name.find("scan") != std::string::npos;
  StringTable& strings = recorder.strings(lock);
  read.label = strings.intern(thread.device_kernel);
  read.description = strings.intern(
      std::string(scan ? "parallel_scan(\"" : "parallel_reduce(\"") +
      thread.device_kernel +
      "\") result to the host, size not reported by Kokkos");
  read.src_space = strings.intern(device_space_name(fence.space_type));
  read.dst_space = strings.intern("Host");
  return read;
}

} // namespace

namespace record {

void begin_deep_copy(Recorder& recorder, const char* dst_space,
                     const char* dst_label, const void* dst_ptr,
                     const char* src_space, const char* src_label,
                     const void* src_ptr, std::uint64_t size) noexcept {
  ThreadState* thread = nullptr;
  InFlightCopy* copy = nullptr;
  try {
    thread = &thread_state(recorder);
    ++thread->activity;
    thread->allocation_step = AllocationStep::none;
    thread->device_launch = false; // a launch whose end never came
    copy = &thread->push_copy();
    copy->transfer = false;
    copy->begun = false;
    copy->saw_fence = false;
    copy->has_recorded_child = false;
    copy->hash_contents = false;
    copy->held_token = 0;
    if (!recorder.has_sinks())
      return;
    SpaceSide dst_side, src_side;
    thread->last_spaces.classify(dst_space, src_space, *thread,
                                 recorder.spaces().generation(), dst_side,
                                 copy->dst_space, src_side, copy->src_space);
    if (!copy_kind(dst_side, src_side, copy->kind)) {
      if (thread->last_spaces.unknown_host_pair)
        recorder.spaces().count_unknown_copy(); // a device no one named?
      return;                                   // host to host: not a transfer
    }
    copy->transfer = true;
    copy->scalar = is_scalar_read(copy->kind, dst_label);
    copy->nbytes = size;
    copy->dst_ptr = dst_ptr;
    copy->src_ptr = src_ptr;
    if (recorder.wants_contents())
      begin_content_check(*copy,
                          dst_side == SpaceSide::host ? dst_space : src_space);
    // Loops copy the same views: reuse their labels' ids.
    const char* label = src_label != nullptr ? src_label : "";
    copy->label_known = thread->copy_labels.find(label, copy->label_id);
    if (!copy->label_known)
      copy->label.assign(label);
    copy->site.capture(recorder);
    copy->place = recorder.place(*thread);
    copy->start = recorder.now();
    std::atomic_signal_fence(std::memory_order_release);
    copy->begun = true;
  } catch (...) {
    // The copy cannot be recorded. Its end is still expected: an entry in
    // flight, or a count of begins that made none.
    if (copy != nullptr)
      copy->transfer = false;
    else if (thread != nullptr)
      ++thread->failed_copy_begins;
    lost_record(recorder);
  }
}

namespace {

/// The end of `thread`'s innermost copy.
inline void end_copy(Recorder& recorder, ThreadState& thread) noexcept {
  std::size_t depth = 0;
  try {
    if (thread.copy_depth == 0) {
      if (thread.failed_copy_begins > 0) {
        --thread.failed_copy_begins; // counted as lost at its begin
        return;
      }
      // A copy whose begin went elsewhere: another tool took that callback.
      // It is lost; the Kokkos Tools layer puts cunumpy back in front.
      if (recorder.has_sinks())
        recorder.losses().count(LossReason::copy_begin_missed);
      recorder.before_read();
      return;
    }
    // In flight until delivered: a process that ends in between (exit from
    // a signal handler) counts it then (end_copies_in_flight).
    depth = thread.copy_depth - 1;
    InFlightCopy& copy = thread.copies[depth];
    // A copy made of inner deep copies is recorded through them only.
    if (!copy.transfer || copy.has_recorded_child) {
      thread.copy_depth = depth;
      if (__builtin_expect(copy.held_token != 0, 0))
        forget_in_source(recorder, copy);
      return;
    }
    RawEvent event;
    event.kind = copy.kind;
    event.blocking =
        copy_is_blocking(copy.site.api != nullptr && copy.site.api->async(),
                         copy.saw_fence, copy.scalar, recorder.kokkos());
    event.thread = thread.index;
    event.nbytes = copy.nbytes;
    event.src_space = copy.src_space;
    event.dst_space = copy.dst_space;
    event.start = copy.start;
    event.duration = recorder.now() - copy.start;
    event.scalar = copy.scalar;
    event.dst_ptr = copy.dst_ptr;
    event.src_ptr = copy.src_ptr;
    place_event(event, copy.place);
    if (copy.hash_contents)
      event.content = end_content_check(copy);
    const bool cached = cached_copy_ids(thread, copy, event);
    const RecorderLock lock = recorder.lock();
    if (!cached) {
      allocation_point();
      event.site = copy.site.intern(recorder, thread.sites, lock);
      if (!copy.label_known) {
        copy.label_id = recorder.strings(lock).intern(copy.label);
        copy.label_known = true;
        thread.copy_labels.store(copy.label, copy.label_id);
      }
      event.label = copy.label_id;
      event.description =
          copy.site.api != nullptr
              ? api_description(recorder, copy.site.api, lock)
              : raw_copy_description(recorder, thread, copy, lock);
    }
    // Held: the event waits for a source's record of its copies (CUDA's:
    // src/core/cuda).
    const bool held = __builtin_expect(copy.held_token != 0, 0) &&
                      hold_in_source(recorder, copy, event);
    if (!held) {
      recorder.deliver(event, lock);
      if (copy.scalar)
        recorder.deliver(scalar_read_wait(event), lock);
    }
    thread.copy_depth = depth;
    for (std::size_t i = 0; i < thread.copy_depth; ++i)
      thread.copies[i].has_recorded_child = true;
    thread.last_copy = {copy.dst_ptr, copy.src_ptr, copy.nbytes,
                        event.site,   copy.kind,    true};
  } catch (...) {
    if (thread.copy_depth > depth)
      thread.copy_depth = depth;
    lost_record(recorder);
  }
}

} // namespace

void end_deep_copy(Recorder& recorder) noexcept {
  ThreadState* thread = nullptr;
  try {
    thread = &thread_state(recorder);
  } catch (...) {
    lost_record(recorder);
    return;
  }
  end_copy(recorder, *thread);
}

void end_copies_in_flight(Recorder& recorder) noexcept {
  ThreadState* const first = existing_thread_state();
  if (ThreadState* const thread =
          first != nullptr ? first->find(recorder) : nullptr)
    end_copies_in_flight(recorder, *thread);
}

void end_copies_in_flight(Recorder& recorder, ThreadState& thread) noexcept {
  while (thread.copy_depth > 0) {
    InFlightCopy& copy = thread.copies[thread.copy_depth - 1];
    if (copy.transfer && !copy.begun) {
      // Ended inside cunumpy's own handling of its begin: a copy the
      // program asked for, not known enough to be counted.
      recorder.losses().count(LossReason::record_failed);
      --thread.copy_depth;
    } else {
      copy.site.memo = WalkMemo{}; // the thread's unwinder cache is gone
      end_copy(recorder, thread);
    }
  }
}

void begin_fence(Recorder& recorder, const char* name,
                 std::uint32_t device_id) noexcept {
  ThreadState* thread = nullptr;
  InFlightFence* fence = nullptr;
  try {
    thread = &thread_state(recorder);
    ++thread->activity;
    recorder.note_execution_space(device_id);
    if (thread->copy_depth == 0 && name != nullptr &&
        std::strncmp(name, "Kokkos::deep_copy", 17) == 0)
      // Kokkos fences inside its deep copies only: this one's copy was
      // made while cunumpy's deep-copy callbacks were taken away.
      recorder.losses().count(LossReason::copy_unseen);
    fence = &thread->push_fence();
    fence->recorded = false;
    fence->reads_result = false;
    fence->in_allocation = thread->allocation_step != AllocationStep::none;
    if (thread->allocation_step == AllocationStep::allocated)
      thread->allocation_step = AllocationStep::header; // no header copy
    fence->global = is_global_fence(device_id);
    fence->space_type = device_id >> 24;
    if (thread->in_debug_fence)
      return; // recorded by end_kernel
    if (thread->copy_depth > 0) {
      // A copy's own fence: it makes the copy blocking, not a sync apart.
      thread->copies[thread->copy_depth - 1].saw_fence = true;
      return;
    }
    const std::string_view fence_name = name != nullptr ? name : "";
    if (!recorder.has_sinks() || is_tool_fence(fence_name) ||
        is_host_execution_space_fence(device_id, recorder.kokkos()))
      return;
    // The waits of a blocking cunumpy call around its copies (Kokkos fences
    // after a device allocation and before freeing a host temporary) belong
    // to the call, which waits anyway: not a sync apart. SyncScopes record
    // their wait; a wait inside an asynchronous call is recorded, implicit.
    const ApiScope* api = ApiScope::current();
    if (api != nullptr && !api->single_sync && !api->async())
      return;
    ++thread->fence_count; // recorded: SyncScope need not record it again
    fence->recorded = true;
    if (thread->launch_result == LaunchResult::uncounted &&
        is_device_execution_space(device_id) &&
        is_result_read_fence(fence_name)) {
      // Kokkos reads the result of the device kernel begun last: the
      // program asked for it (a reduction into a host value), once.
      fence->reads_result = true;
      thread->launch_result = LaunchResult::none;
    }
    fence->name.assign(fence_name);
    fence->site.capture(recorder);
    fence->place = recorder.place(*thread);
    fence->start = recorder.now();
  } catch (...) {
    if (fence != nullptr)
      fence->recorded = false;
    else if (thread != nullptr)
      ++thread->failed_fence_begins;
    lost_record(recorder);
  }
}

void end_fence(Recorder& recorder) noexcept {
  try {
    ThreadState& thread = thread_state(recorder);
    if (thread.fence_depth == 0) {
      if (thread.failed_fence_begins > 0)
        --thread.failed_fence_begins;
      return;
    }
    InFlightFence& fence = thread.fences[--thread.fence_depth];
    if (fence.in_allocation &&
        thread.allocation_step == AllocationStep::initialized)
      thread.allocation_step = AllocationStep::none; // the view is made
    if (!fence.recorded)
      return;
    RawEvent event;
    event.kind = EventKind::sync;
    event.blocking = true;
    const ApiScope* api = fence.site.api;
    event.implicit = is_implicit_fence(fence.name) ||
                     (api != nullptr && (api->async() || api->implicit_sync));
    event.allocation = fence.in_allocation;
    event.thread = thread.index;
    event.start = fence.start;
    event.duration = recorder.now() - fence.start;
    event.label = recent_name_id(recorder, thread, fence.name);
    event.description = fence.site.api != nullptr
                            ? fence.site.api->description_id
                            : event.label;
    place_event(event, fence.place);
    const bool cached =
        event.description != 0 && fence.site.cached(thread.sites, event.site);
    const RecorderLock lock = recorder.lock();
    if (!cached) {
      allocation_point();
      event.site = fence.site.intern(recorder, thread.sites, lock);
      if (fence.site.api != nullptr)
        event.description = api_description(recorder, fence.site.api, lock);
    }
    if (fence.reads_result) {
      // The read of a value and its wait, as for a deep copy into a scalar.
      event.scalar = true;
      recorder.deliver(result_read(recorder, thread, fence, event, lock), lock);
    }
    if (ApiScope* api = fence.site.api; api != nullptr && api->single_sync) {
      if (api->sync_recorded)
        return;
      api->sync_recorded = true;
    }
    if (recorder.kokkos().reports_fences() && fence.global) {
      // The next execution space's part of the same Kokkos::fence: nothing
      // else happened on this thread since the previous part ended, and no
      // part of this execution space came yet (one part per space: a second
      // is the next Kokkos::fence of the same name).
      const std::uint64_t type = std::uint64_t(1) << (fence.space_type & 63);
      const bool same_fence =
          thread.global_fence_name_id == event.label &&
          thread.global_fence_activity + 1 == thread.activity &&
          (thread.global_fence_types & type) == 0;
      thread.global_fence_name_id = event.label;
      thread.global_fence_activity = thread.activity;
      thread.global_fence_types =
          same_fence ? thread.global_fence_types | type : type;
      if (same_fence)
        return;
    }
    recorder.deliver(event, lock);
  } catch (...) {
    lost_record(recorder);
  }
}

// Regions are followed with or without sinks: a counter or budget made
// inside a region sees the events there placed in it.
void push_region(Recorder& recorder, const char* name) noexcept {
  try {
    ThreadState& thread = thread_state(recorder);
    thread.allocation_step = AllocationStep::none;
    thread.device_launch = false; // a launch whose end never came
    const std::uint32_t id =
        recent_name_id(recorder, thread, name != nullptr ? name : "");
    const double time = recorder.now();
    const RecorderLock lock = recorder.lock();
    recorder.push_region(thread, id, 0, time, lock);
  } catch (...) {
    lost_record(recorder);
  }
}

void pop_region(Recorder& recorder) noexcept {
  try {
    ThreadState& thread = thread_state(recorder);
    thread.allocation_step = AllocationStep::none;
    thread.device_launch = false; // a launch whose end never came
    const double time = recorder.now();
    // A pop with no region open names who made it: found here, without the
    // mutex (the thread's own regions are written only by itself).
    const bool unbalanced =
        std::none_of(thread.regions.begin(), thread.regions.end(),
                     [](const OpenRegion& r) { return r.token == 0; });
    const std::string module = unbalanced ? calling_module() : std::string();
    const RecorderLock lock = recorder.lock();
    const std::uint32_t module_id =
        module.empty() ? 0 : recorder.strings(lock).intern(module);
    recorder.pop_region(thread, time, module_id, lock);
  } catch (...) {
    lost_record(recorder);
  }
}

std::uint64_t open_phase(Recorder& recorder, const std::string& name) {
  ThreadState& thread = thread_state(recorder);
  const std::uint64_t token = recorder.next_phase_token();
  std::optional<recording::Inside> inside;
  if (recording::active()) {
    recording::Line("open_phase")
        .text("name", name)
        .number("token", token)
        .write();
    inside.emplace();
  }
  const double time = recorder.now();
  const RecorderLock lock = recorder.lock();
  recorder.push_region(thread, recorder.strings(lock).intern(name), token, time,
                       lock);
  return token;
}

void close_phase(Recorder& recorder, std::uint64_t token) noexcept {
  try {
    std::optional<recording::Inside> inside;
    if (recording::active()) {
      recording::Line("close_phase").number("token", token).write();
      inside.emplace();
    }
    ThreadState& thread = thread_state(recorder);
    const double time = recorder.now();
    const RecorderLock lock = recorder.lock();
    recorder.close_phase(thread, token, time, lock);
  } catch (...) {
    lost_record(recorder);
  }
}

namespace {

void dual_view_event(Recorder& recorder, const char* label, const void* ptr,
                     bool sync, bool device) {
  if (!recorder.has_sinks())
    return;
  ThreadState& thread = thread_state(recorder);
  DualViewEvent event;
  event.pointer = ptr;
  event.sync = sync;
  event.device = device;
  event.thread = thread.index;
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
  event.label = recent_name_id(recorder, thread, label != nullptr ? label : "");
  const Place place = recorder.place(thread);
  event.node = place.node;
  event.region_thread = place.thread;
  event.call = place.call;
  CapturedSite site;
  const bool cached = event.copied || (site.capture(recorder),
                                       site.cached(thread.sites, event.site));
  const RecorderLock lock = recorder.lock();
  if (!cached) {
    allocation_point();
    event.site = site.intern(recorder, thread.sites, lock);
  }
  recorder.deliver(event, lock);
}

} // namespace

void dual_view_sync(Recorder& recorder, const char* label, const void* ptr,
                    bool to_device) noexcept {
  try {
    dual_view_event(recorder, label, ptr, true, to_device);
  } catch (...) {
    lost_record(recorder);
  }
}

void dual_view_modify(Recorder& recorder, const char* label, const void* ptr,
                      bool on_device) noexcept {
  try {
    dual_view_event(recorder, label, ptr, false, on_device);
  } catch (...) {
    lost_record(recorder);
  }
}

void allocation(Recorder& recorder, const char* space, const void* ptr,
                std::uint64_t size, bool freed) noexcept {
  try {
    // A device allocation starts Kokkos' making of a view, which CUDA's
    // record and advice follow (ThreadState::allocation_step).
    const bool follow =
        recorder.sources().any() || recorder.wants_allocations();
    if (!follow && recorder.device_space_seen())
      return;
    ThreadState& thread = thread_state(recorder);
    SpaceSide side = SpaceSide::host;
    std::uint32_t id = 0;
    bool unknown = false;
    classify_space(space, thread, side, id, unknown);
    // Kokkos copies the allocation's header from the host only into memory
    // the host cannot write (CudaSpace, HIPSpace, SYCLDeviceUSMSpace); in
    // managed or pinned memory it writes it in place, and a copy that
    // follows is the program's.
    const std::string_view name(space, strnlen(space, space_name_size));
    const bool header_copied =
        name == "Cuda" || name == "HIP" || name == "SYCLDeviceUSM";
    thread.allocation_step = !follow || freed || side != SpaceSide::device
                                 ? AllocationStep::none
                             : header_copied ? AllocationStep::allocated
                                             : AllocationStep::header;
    thread.allocation = ptr;
    if (!recorder.wants_allocations())
      return;
    if (side != SpaceSide::host)
      return; // advice needs the host's buffers only
    const Allocation record{ptr, size, thread.index, freed, recorder.now()};
    recorder.deliver(record, recorder.lock());
  } catch (...) {
    lost_record(recorder);
  }
}

void begin_kernel(Recorder& recorder, const char* name,
                  std::uint32_t device_id) noexcept {
  try {
    recorder.note_execution_space(device_id);
    ThreadState& thread = thread_state(recorder);
    // Only a device kernel's launch makes CUDA copies of Kokkos' own: a
    // host kernel's functor is the program's code.
    thread.device_launch = is_device_execution_space(device_id);
    thread.launch_result =
        thread.device_launch ? LaunchResult::uncounted : LaunchResult::none;
    if (thread.device_launch)
      thread.device_kernel.assign(name != nullptr ? name : "");
    const AllocationStep step = thread.allocation_step;
    thread.allocation_step =
        step == AllocationStep::allocated || step == AllocationStep::header
            ? AllocationStep::initializing
            : AllocationStep::none;
    if (!recorder.wants_kernels() && !recorder.debug_sync())
      return;
    InFlightKernel& kernel = thread.push_kernel();
    kernel.name.assign(name != nullptr ? name : "");
    kernel.start = recorder.now();
  } catch (...) {
    lost_record(recorder);
  }
}

namespace {

/// Debug-sync mode: the host waits for the device after `kernel`, and the
/// wait is an implicit sync named after the kernel, at its line.
void wait_after_kernel(Recorder& recorder, ThreadState& thread,
                       const InFlightKernel& kernel) {
  const Recorder::DeviceFence fence = recorder.device_fence();
  if (fence == nullptr)
    return;
  CapturedSite site;
  if (recorder.has_sinks())
    site.capture(recorder);
  const double start = recorder.now();
  thread.in_debug_fence = true;
  fence();
  thread.in_debug_fence = false;
  if (!recorder.has_sinks())
    return;
  RawEvent event;
  event.kind = EventKind::sync;
  event.blocking = true;
  event.implicit = true; // the program did not ask for it
  event.thread = thread.index;
  event.start = start;
  event.duration = recorder.now() - start;
  event.label = recent_name_id(recorder, thread, kernel.name);
  place_event(event, recorder.place(thread));
  const RecorderLock lock = recorder.lock();
  allocation_point();
  event.site = site.intern(recorder, thread.sites, lock);
  event.description = recorder.strings(lock).intern(
      "debug_sync(after kernel \"" + kernel.name + "\")");
  recorder.deliver(event, lock);
}

} // namespace

void end_kernel(Recorder& recorder) noexcept {
  ThreadState* state = nullptr;
  try {
    ThreadState& thread = thread_state(recorder);
    state = &thread;
    thread.device_launch = false;
    if (thread.allocation_step == AllocationStep::initializing)
      thread.allocation_step = AllocationStep::initialized;
    if (thread.kernel_depth == 0)
      return; // begun before a sink wanted kernels
    const InFlightKernel& kernel = thread.kernels[--thread.kernel_depth];
    if (recorder.debug_sync())
      wait_after_kernel(recorder, thread, kernel);
    if (!recorder.wants_kernels())
      return;
    const KernelSpan span{recent_name_id(recorder, thread, kernel.name),
                          thread.index, kernel.start, recorder.now()};
    recorder.deliver(span, recorder.lock());
  } catch (...) {
    if (state != nullptr)
      state->in_debug_fence = false;
    lost_record(recorder);
  }
}

} // namespace record
} // namespace cunumpy::Impl
