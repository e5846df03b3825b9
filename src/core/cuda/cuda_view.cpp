// The CUDA view's two sides: the API calls CUPTI reports on the threads that
// make them (placed among the Kokkos events in flight there), and the
// activity records, which go through the attribution unit to the sinks.

#include "cuda/cuda_view.hpp"

#include <algorithm>
#include <limits>

#include "cuda/collector.hpp"
#include "recorder/thread_state.hpp"
#include "support/fast_thread_local.hpp"

namespace cunumpy::Impl::cuda {
namespace {

/// What an open API call is to cunumpy.
enum class Role : std::uint8_t {
  ignored,    ///< part of something else, or nothing counts
  own_copy,   ///< a CUDA copy no Kokkos copy contains: an event of its own
  kokkos_own, ///< a CUDA copy Kokkos made on its own (a launch, an
              ///< allocation): an event of kind kokkos_own
  in_kokkos,  ///< a CUDA copy inside a Kokkos deep copy: describes it
  alias,      ///< a driver call inside one of the above
  wait,       ///< a wait outside Kokkos' fences and copies: a sync
  prefetch,   ///< a request to migrate managed memory
};

struct OpenCall {
  std::uint32_t correlation = 0;
  Role role = Role::ignored;
  std::uint32_t token = 0;
  ApiCall call;
  CapturedSite site;
  double start = 0.0;
};

/// The CUDA calls open on a thread (a runtime call, the driver calls
/// inside it).
struct CudaThread {
  std::vector<OpenCall> calls;
  std::size_t depth = 0;
};

CudaThread& cuda_thread() {
  return FastThreadLocal<CudaThread, &HotThreadLocals::cuda_thread>::get();
}

/// The header Kokkos writes at the start of a device view's allocation
/// (Kokkos::Impl::SharedAllocationHeader, 128 bytes in Kokkos 3 to 5).
constexpr std::uint64_t allocation_header_size = 128;

/// A copy the way Kokkos makes them when it launches a kernel: its lock
/// arrays (cudaMemcpyToSymbol), its parameters (cudaMemcpyToSymbolAsync
/// into constant memory, or cudaMemcpyAsync for a large functor). A plain
/// cudaMemcpy, a 2D copy or a driver call is never one.
bool is_launch_copy(const ApiCall& call) {
  const std::string_view name = call.name != nullptr ? call.name : "";
  return !call.driver && (name.rfind("cudaMemcpyToSymbol", 0) == 0 ||
                          name.rfind("cudaMemcpyAsync", 0) == 0);
}

std::string describe(const ApiCall& call) {
  std::string text = call.name;
  if (call.family == CallFamily::wait)
    return text + "()";
  text += "(nbytes=" + std::to_string(call.bytes);
  if (call.family == CallFamily::prefetch)
    text += call.direction == CopyDirection::device_to_host ? ", to host"
                                                            : ", to device";
  return text + ")";
}

const char* host_side_space(CopyDirection direction, bool source) {
  switch (direction) {
  case CopyDirection::host_to_device:
    return source ? "Host" : "Cuda";
  case CopyDirection::device_to_host:
    return source ? "Cuda" : "Host";
  case CopyDirection::device_to_device:
    return "Cuda";
  default:
    return "";
  }
}

} // namespace

CudaView& CudaView::of(Recorder& recorder) {
  return static_cast<CudaView&>(recorder.sources().cuda_state(
      [] { return std::unique_ptr<EventSource>(new CudaView()); }));
}

CudaView::CudaView() : attribution_(0) {}

void CudaView::bind(Recorder& recorder) noexcept {
  if (recorder_.load(std::memory_order_acquire) != nullptr)
    return;
  // Not under mutex_: the fork handler takes the recorder's locks first.
  const std::uint8_t origin = recorder.sources().register_name(name());
  {
    const std::lock_guard lock(mutex_);
    origin_ = origin;
    attribution_.set_origin(origin);
  }
  recorder_.store(&recorder, std::memory_order_release);
}

Recorder* CudaView::become_source() noexcept {
  Recorder* const recorder = recorder_.load(std::memory_order_acquire);
  // Every CUDA call asks: a read, not a write to a line all threads share.
  if (recorder == nullptr || source_.load(std::memory_order_acquire) ||
      source_.exchange(true, std::memory_order_acq_rel))
    return recorder;
  // CUDA's own record runs: the process has a device.
  recorder->note_device_space();
  if (recorder->sources().add(*this))
    return recorder;
  // Another source holds the name's place: what CUDA records cannot reach
  // the recorder, and the verdict must not pass.
  recorder_.store(nullptr, std::memory_order_release);
  try {
    const RecorderLock lock = recorder->lock();
    recorder->open_incident(
        "CUDA's record cannot feed the recorder: another event source took "
        "its place ('" +
            std::string(recorder->sources().name(origin_)) +
            "'), so copies CUDA made outside Kokkos are not counted",
        lock);
  } catch (...) {
    recorder->losses().count(LossReason::record_failed);
  }
  return nullptr;
}

void CudaView::set_status(profiling::CudaViewState state, std::string reason) {
  {
    const std::lock_guard lock(mutex_);
    state_ = state;
    reason_ = std::move(reason);
  }
  // Not under mutex_: the fork handler takes the recorder's locks first.
  if (state == profiling::CudaViewState::on)
    become_source();
}

void CudaView::set_unified_memory(bool on, std::string reason) {
  const std::lock_guard lock(mutex_);
  unified_memory_ = on;
  unified_memory_reason_ = std::move(reason);
}

void CudaView::note_managed_memory() noexcept {
  const std::lock_guard lock(mutex_);
  managed_memory_ = true;
}

std::string CudaView::migrations_unseen() const {
  const std::lock_guard lock(mutex_);
  return migrations_unseen_locked();
}

std::string CudaView::migrations_unseen_locked() const {
  if (!managed_memory_ || state_ != profiling::CudaViewState::on)
    return {};
  if (!unified_memory_)
    return "the program allocated managed memory, and " +
           unified_memory_reason_;
  // Managed memory that is used faults or migrates: CUDA says so in a
  // record. None at all is CUDA not recording, not a program that never
  // touched its managed memory.
  if (attribution_.stats().migration_records == 0)
    return "the program allocated managed memory, and CUDA delivered no "
           "unified-memory record (no page fault, no migration): its "
           "counters do not record on this machine";
  return {};
}

void CudaView::set_time_mapping(const TimeMapping& mapping) {
  const std::lock_guard lock(mutex_);
  attribution_.set_time_mapping(mapping);
}

void CudaView::api_enter(const ApiCall& call) noexcept {
  try {
    Recorder* const bound = become_source();
    if (bound == nullptr)
      return; // CUDA's record starts after bind
    Recorder& recorder = *bound;
    CudaThread& cuda = cuda_thread();
    if (cuda.depth == cuda.calls.size())
      cuda.calls.emplace_back();
    OpenCall& open = cuda.calls[cuda.depth];
    const OpenCall* outer =
        cuda.depth > 0 ? &cuda.calls[cuda.depth - 1] : nullptr;
    ++cuda.depth;
    open.correlation = call.correlation;
    open.role = Role::ignored;
    open.token = 0;
    open.call = call;
    if (!recorder.has_sinks())
      return;
    if (outer != nullptr && outer->role != Role::ignored) {
      // Inside a call cunumpy follows: the same copy at the driver level,
      // or a part of it (a copy's own wait).
      if (call.family == CallFamily::copy &&
          (outer->role == Role::own_copy || outer->role == Role::in_kokkos ||
           outer->role == Role::kokkos_own || outer->role == Role::alias)) {
        open.role = Role::alias;
        open.token = outer->token;
        const std::lock_guard lock(mutex_);
        attribution_.alias(open.token, call.correlation);
      }
      return;
    }
    if (outer != nullptr)
      return; // inside an ignored call
    ThreadState& thread = thread_state(recorder);
    const double now = recorder.now();
    switch (call.family) {
    case CallFamily::wait:
      // Kokkos' fences wait through CUDA, and so do its blocking copies:
      // those waits are Kokkos events already. A device kernel's launch
      // waits on Kokkos' own business (a host kernel's functor is the
      // program's code).
      if (thread.fence_depth > 0 || thread.copy_depth > 0 ||
          thread.device_launch)
        return;
      // A blocking cunumpy call waits anyway, and a SyncScope records its
      // own wait (PendingHost::result): not a second sync.
      if (const ApiScope* api = ApiScope::current();
          api != nullptr && !api->async())
        return;
      open.role = Role::wait;
      break;
    case CallFamily::copy:
      if (thread.copy_depth > 0) {
        InFlightCopy& copy = thread.copies[thread.copy_depth - 1];
        if (!copy.transfer)
          return; // host to host, or not counted
        const std::lock_guard lock(mutex_);
        if (copy.held_token == 0) {
          copy.held_token = attribution_.open(copy.start, now);
          copy.held_by = origin_;
        } else if (copy.held_by != origin_) {
          return; // another source describes this copy
        }
        attribution_.expect(copy.held_token, call.correlation);
        open.role = Role::in_kokkos;
        open.token = copy.held_token;
        return;
      }
      if (call.direction == CopyDirection::host_to_host)
        return; // not a transfer
      {
        const std::lock_guard lock(mutex_);
        open.token = attribution_.open(now, now);
        attribution_.expect(open.token, call.correlation);
      }
      open.role = Role::own_copy;
      // What Kokkos is doing says whose copy it is (docs/cuda.md): a device
      // kernel's launch copies its lock arrays and parameters to the
      // device, and its result (a reduction into a host value) to the host
      // for the program; Kokkos writes a new device view's header, 128
      // bytes to the start of the allocation it just reported. Anything
      // else, or what cannot be told, is the program's.
      if (thread.device_launch) {
        if (call.direction == CopyDirection::device_to_host)
          thread.launch_result = LaunchResult::none; // counted here
        else if (call.direction != CopyDirection::unknown &&
                 is_launch_copy(call))
          open.role = Role::kokkos_own;
      } else if (thread.allocation_step == AllocationStep::allocated &&
                 call.direction == CopyDirection::host_to_device &&
                 call.bytes == allocation_header_size &&
                 call.dst == thread.allocation) {
        thread.allocation_step = AllocationStep::header;
        open.role = Role::kokkos_own;
      }
      break;
    case CallFamily::prefetch:
      // Kokkos prefetches the views it initializes: the migration records
      // count the bytes.
      if (thread.copy_depth > 0 || thread.device_launch)
        return;
      open.role = Role::prefetch;
      break;
    }
    open.site.capture(recorder);
    open.start = recorder.now();
  } catch (...) {
    lost(1);
  }
}

void CudaView::api_exit(std::uint32_t correlation) noexcept {
  try {
    CudaThread& cuda = cuda_thread();
    // The innermost call of this correlation (an enter whose exit CUPTI
    // did not report is closed with it).
    std::size_t index = cuda.depth;
    while (index > 0 && cuda.calls[index - 1].correlation != correlation)
      --index;
    if (index == 0)
      return;
    cuda.depth = index - 1;
    OpenCall& open = cuda.calls[index - 1];
    if (open.role != Role::own_copy && open.role != Role::wait &&
        open.role != Role::prefetch && open.role != Role::kokkos_own)
      return;
    const bool held =
        open.role == Role::own_copy || open.role == Role::kokkos_own;
    Recorder* const bound = recorder_.load(std::memory_order_acquire);
    if (bound == nullptr)
      return;
    Recorder& recorder = *bound;
    ThreadState& thread = thread_state(recorder);
    RawEvent event;
    event.thread = thread.index;
    const Place place = recorder.place(thread);
    event.node = place.node;
    event.region_thread = place.thread;
    event.call = place.call;
    event.start = open.start;
    event.duration = recorder.now() - open.start;
    event.nbytes = open.call.bytes;
    event.origin = origin_;
    event.late = held;
    switch (open.role) {
    case Role::wait:
      event.kind = EventKind::sync;
      event.nbytes = 0;
      break;
    case Role::prefetch:
      event.kind = EventKind::migration;
      event.nbytes = 0; // the migration records count the bytes moved
      event.blocking = false;
      break;
    default:
      event.kind = EventKind::to_device; // CUDA's record may tell otherwise
      kind_of(open.call.direction, event.kind);
      if (open.role == Role::kokkos_own)
        event.kind = EventKind::kokkos_own;
      event.blocking = open.call.synchronous;
      break;
    }
    {
      const RecorderLock lock = recorder.lock();
      allocation_point();
      event.site = open.site.intern(recorder, thread.sites, lock);
      StringTable& strings = recorder.strings(lock);
      event.description = strings.intern(describe(open.call));
      if (held) {
        event.src_space =
            strings.intern(host_side_space(open.call.direction, true));
        event.dst_space =
            strings.intern(host_side_space(open.call.direction, false));
      }
      if (!held) {
        recorder.deliver(event, lock);
        return;
      }
    }
    if (open.call.synchronous && open.role == Role::own_copy) {
      // The host waited for the device: a wait the program did not ask
      // for, as for a scalar read.
      RawEvent wait = event;
      wait.kind = EventKind::sync;
      wait.nbytes = 0;
      wait.blocking = true;
      wait.implicit = true;
      wait.src_space = 0;
      wait.dst_space = 0;
      const std::lock_guard lock(mutex_);
      attribution_.hold(open.token, event, &wait, open.call.direction);
    } else {
      const std::lock_guard lock(mutex_);
      attribution_.hold(open.token, event, nullptr, open.call.direction);
    }
  } catch (...) {
    lost(1);
  }
}

void CudaView::hold(std::uint32_t token, const RawEvent& event,
                    const RawEvent* wait) noexcept {
  try {
    const std::lock_guard lock(mutex_);
    attribution_.hold(token, event, wait, CopyDirection::unknown);
  } catch (...) {
    lost(1);
  }
}

void CudaView::forget(std::uint32_t token) noexcept {
  const std::lock_guard lock(mutex_);
  attribution_.cancel(token);
}

void CudaView::copy_records(const CopyRecord* records,
                            std::size_t count) noexcept {
  become_source();
  const std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < count; ++i)
    attribution_.on_copy(records[i]);
}

void CudaView::unified_memory_records(const UnifiedMemoryRecord* records,
                                      std::size_t count) noexcept {
  become_source();
  try {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < count; ++i)
      attribution_.on_unified_memory(records[i]);
  } catch (...) {
    lost(count);
  }
}

void CudaView::buffer_delivered(double now) noexcept {
  const std::lock_guard lock(mutex_);
  settled_ = std::max(settled_, now - settle_time);
}

void CudaView::lost(std::uint64_t count) noexcept {
  if (Recorder* const recorder = recorder_.load(std::memory_order_acquire))
    recorder->losses().count(LossReason::record_failed, count);
}

void CudaView::collect() noexcept {
  // A source of the recorder: bound.
  const double now = recorder_.load(std::memory_order_acquire)->now();
  if (const Flush flush = flush_.load(std::memory_order_acquire))
    flush();
  const std::lock_guard lock(mutex_);
  // A forced flush handed over every record CUDA held.
  settled_ = std::max(settled_, now);
  everything_ = true;
}

void CudaView::drain(std::vector<RawEvent>& out,
                     const RecorderLock& lock) noexcept {
  Recorder& recorder = lock.recorder();
  std::uint64_t unknown = 0;
  try {
    StringTable& strings = recorder.strings(lock);
    const std::lock_guard own(mutex_);
    attribution_.release(
        recorder.now(), everything_,
        [&](std::string_view text) { return strings.intern(text); }, out);
    everything_ = false;
    const std::uint64_t seen = attribution_.stats().unknown_direction;
    unknown = seen - unknown_direction_seen_;
    unknown_direction_seen_ = seen;
  } catch (...) {
    recorder.losses().count(LossReason::record_failed);
  }
  // A CUDA copy whose direction neither the call nor CUDA's record told is
  // an event missed.
  if (unknown > 0)
    recorder.losses().count(LossReason::record_failed, unknown);
}

double CudaView::horizon() const noexcept {
  const double now = recorder_.load(std::memory_order_acquire)->now();
  const std::lock_guard lock(mutex_);
  return std::min(settled_, attribution_.oldest_pending(now));
}

profiling::CudaView CudaView::status() const {
  const std::lock_guard lock(mutex_);
  profiling::CudaView view;
  view.built = collector_built;
  view.state = state_;
  view.on = state_ == profiling::CudaViewState::on;
  view.reason = view.on ? std::string() : reason_;
  view.unified_memory = view.on && unified_memory_;
  view.unified_memory_reason =
      view.unified_memory ? std::string()
      : !view.on          ? std::string("CUDA's record is off")
      : !managed_memory_  ? std::string("the program has allocated no managed "
                                         "memory (they start at its first "
                                         "managed allocation)")
                          : unified_memory_reason_;
  const AttributionStats& stats = attribution_.stats();
  view.copy_records = stats.copy_records;
  view.described = stats.described;
  view.unmatched = stats.unmatched;
  view.too_late = stats.too_late;
  view.without_record = stats.without_record;
  view.migration_records = stats.migration_records;
  view.migrated_bytes = stats.migrated_bytes;
  view.dropped_records = dropped_.load(std::memory_order_relaxed);
  view.migrations_unseen = migrations_unseen_locked();
  return view;
}

} // namespace cunumpy::Impl::cuda

namespace cunumpy::profiling {

CudaView cuda_view() {
  return Impl::cuda::CudaView::of(Impl::library_recorder()).status();
}

std::string_view to_string(CudaViewState state) noexcept {
  switch (state) {
  case CudaViewState::not_built:
    return "not built";
  case CudaViewState::not_started:
    return "not started";
  case CudaViewState::off:
    return "off";
  case CudaViewState::unavailable:
    return "unavailable";
  case CudaViewState::on:
    break;
  }
  return "on";
}

std::string cuda_view_line(const CudaView& view) {
  std::string line = "CUDA view: " + std::string(to_string(view.state));
  switch (view.state) {
  case CudaViewState::on:
    if (!view.migrations_unseen.empty())
      line += " (migrations not seen: " + view.migrations_unseen + ")";
    return line;
  case CudaViewState::unavailable:
    return line + ": " + view.reason;
  default:
    return view.reason.empty() ? line : line + " (" + view.reason + ")";
  }
}

} // namespace cunumpy::profiling
