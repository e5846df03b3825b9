// Asynchronous copies to the host: the execution-space instance they run on,
// the events that order and complete them, and the pool of pinned scalar
// slots. Everything is created on first use and released by a Kokkos
// finalize hook; objects that outlive Kokkos::finalize see a new generation
// and let go of their handles.

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/pin_memory.hpp>
#include <cunumpy/to_host_async.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#define CUNUMPY_GPU_EVENTS 1
using GpuStream = cudaStream_t;
using GpuEvent = cudaEvent_t;
using GpuError = cudaError_t;
#elif defined(KOKKOS_ENABLE_HIP)
#define CUNUMPY_GPU_EVENTS 1
using GpuStream = hipStream_t;
using GpuEvent = hipEvent_t;
using GpuError = hipError_t;
#else
#define CUNUMPY_GPU_EVENTS 0
#endif

namespace cunumpy::Impl {
namespace {

constexpr std::size_t slots_per_chunk = 64;

#if CUNUMPY_GPU_EVENTS

[[noreturn]] void throw_gpu_error(const char* call, GpuError error) {
#if defined(KOKKOS_ENABLE_CUDA)
  const char* text = cudaGetErrorString(error);
#else
  const char* text = hipGetErrorString(error);
#endif
  throw std::runtime_error(std::string("cunumpy::to_host_async: ") + call +
                           " failed: " + text);
}

void check(GpuError error, const char* call) {
  if (error != GpuError{})
    throw_gpu_error(call, error);
}

GpuStream stream_of(const Kokkos::DefaultExecutionSpace& instance) {
#if defined(KOKKOS_ENABLE_CUDA)
  return instance.cuda_stream();
#else
  return instance.hip_stream();
#endif
}

GpuEvent create_event() {
  GpuEvent event;
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
#else
  check(hipEventCreateWithFlags(&event, hipEventDisableTiming),
        "hipEventCreateWithFlags");
#endif
  return event;
}

void destroy_event(GpuEvent event) noexcept {
#if defined(KOKKOS_ENABLE_CUDA)
  (void)cudaEventDestroy(event);
#else
  (void)hipEventDestroy(event);
#endif
}

void record(GpuEvent event, GpuStream stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaEventRecord(event, stream), "cudaEventRecord");
#else
  check(hipEventRecord(event, stream), "hipEventRecord");
#endif
}

void wait_for(GpuStream stream, GpuEvent event) {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaStreamWaitEvent(stream, event, 0), "cudaStreamWaitEvent");
#else
  check(hipStreamWaitEvent(stream, event, 0), "hipStreamWaitEvent");
#endif
}

#endif // CUNUMPY_GPU_EVENTS

struct AsyncState {
  std::mutex mutex;
  std::uint64_t generation = 1;
  bool hook_installed = false;
  std::vector<void*> chunks;
  std::vector<void*> free_slots;
#if CUNUMPY_GPU_EVENTS
  GpuStream stream = nullptr;
  std::optional<Kokkos::DefaultExecutionSpace> copier;
  GpuEvent before = nullptr;
  std::vector<GpuEvent> free_events;
#endif
};

AsyncState& async_state() {
  // Never destroyed: handles may be released during static destruction.
  static AsyncState* state = new AsyncState();
  return *state;
}

/// The finalize hook: releases what Kokkos must free before it finalizes.
void release_all() noexcept {
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  for (void* chunk : state.chunks)
    Kokkos::kokkos_free<pinned_memory_space>(chunk);
  state.chunks.clear();
  state.free_slots.clear();
#if CUNUMPY_GPU_EVENTS
  state.copier.reset();
  for (GpuEvent event : state.free_events)
    destroy_event(event);
  state.free_events.clear();
  if (state.before != nullptr)
    destroy_event(state.before);
  state.before = nullptr;
  if (state.stream != nullptr) {
#if defined(KOKKOS_ENABLE_CUDA)
    (void)cudaStreamDestroy(state.stream);
#else
    (void)hipStreamDestroy(state.stream);
#endif
  }
  state.stream = nullptr;
#endif
  ++state.generation;
  state.hook_installed = false;
}

void install_hook(AsyncState& state) {
  if (!state.hook_installed) {
    Kokkos::push_finalize_hook(release_all);
    state.hook_installed = true;
  }
}

#if CUNUMPY_GPU_EVENTS
/// The copier instance and its stream, created on first use.
const Kokkos::DefaultExecutionSpace& copier(AsyncState& state) {
  if (!state.copier) {
    install_hook(state);
#if defined(KOKKOS_ENABLE_CUDA)
    check(cudaStreamCreateWithFlags(&state.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
#else
    check(hipStreamCreateWithFlags(&state.stream, hipStreamNonBlocking),
          "hipStreamCreateWithFlags");
#endif
    // Kokkos does not own the stream: release_all destroys it after the
    // instance.
    state.copier.emplace(state.stream);
    state.before = create_event();
  }
  return *state.copier;
}
#endif

} // namespace

PinnedScalarSlot PinnedScalarSlot::acquire() {
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  install_hook(state);
  if (state.free_slots.empty()) {
    auto* chunk =
        static_cast<unsigned char*>(Kokkos::kokkos_malloc<pinned_memory_space>(
            "cunumpy::to_host_async", slots_per_chunk * capacity));
    state.chunks.push_back(chunk);
    for (std::size_t i = slots_per_chunk; i-- > 0;)
      state.free_slots.push_back(chunk + i * capacity);
  }
  void* slot = state.free_slots.back();
  state.free_slots.pop_back();
  return PinnedScalarSlot(slot, state.generation);
}

PinnedScalarSlot::PinnedScalarSlot(PinnedScalarSlot&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      generation_(other.generation_) {}

PinnedScalarSlot&
PinnedScalarSlot::operator=(PinnedScalarSlot&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    generation_ = other.generation_;
  }
  return *this;
}

void PinnedScalarSlot::release() noexcept {
  if (data_ == nullptr)
    return;
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  if (generation_ == state.generation)
    state.free_slots.push_back(data_);
  data_ = nullptr;
}

CopyCompletion::CopyCompletion(CopyCompletion&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)),
      generation_(other.generation_), fence_(std::move(other.fence_)) {
  other.fence_.reset();
}

CopyCompletion& CopyCompletion::operator=(CopyCompletion&& other) noexcept {
  if (this != &other) {
    release();
    event_ = std::exchange(other.event_, nullptr);
    generation_ = other.generation_;
    fence_ = std::move(other.fence_);
    other.fence_.reset();
  }
  return *this;
}

void CopyCompletion::release() const noexcept {
#if CUNUMPY_GPU_EVENTS
  if (event_ == nullptr)
    return;
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  if (generation_ == state.generation)
    state.free_events.push_back(static_cast<GpuEvent>(event_));
  else
    destroy_event(static_cast<GpuEvent>(event_));
#endif
  event_ = nullptr;
}

bool CopyCompletion::ready() const {
  if (fence_)
    return false; // no query on this backend: ready once waited for
#if CUNUMPY_GPU_EVENTS
  if (event_ == nullptr)
    return true;
#if defined(KOKKOS_ENABLE_CUDA)
  const GpuError status = cudaEventQuery(static_cast<GpuEvent>(event_));
  if (status == cudaErrorNotReady)
    return false;
  check(status, "cudaEventQuery");
#else
  const GpuError status = hipEventQuery(static_cast<GpuEvent>(event_));
  if (status == hipErrorNotReady)
    return false;
  check(status, "hipEventQuery");
#endif
  release();
#endif
  return true;
}

void CopyCompletion::wait() {
  if (fence_) {
#if KOKKOS_VERSION >= 40000
    fence_->fence("cunumpy::PendingHost::result");
#else
    fence_->fence();
#endif
    fence_.reset();
  }
#if CUNUMPY_GPU_EVENTS
  if (event_ != nullptr) {
#if defined(KOKKOS_ENABLE_CUDA)
    check(cudaEventSynchronize(static_cast<GpuEvent>(event_)),
          "cudaEventSynchronize");
#else
    check(hipEventSynchronize(static_cast<GpuEvent>(event_)),
          "hipEventSynchronize");
#endif
    release();
  }
#endif
}

Kokkos::DefaultExecutionSpace
begin_async_copy(const Kokkos::DefaultExecutionSpace& producer) {
#if CUNUMPY_GPU_EVENTS
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  const Kokkos::DefaultExecutionSpace& instance = copier(state);
  // A stream wait takes the event as recorded at the call, so one event
  // serves every copy.
  record(state.before, stream_of(producer));
  wait_for(state.stream, state.before);
  return instance;
#else
  return producer;
#endif
}

CopyCompletion end_async_copy(const Kokkos::DefaultExecutionSpace& producer,
                              const Kokkos::DefaultExecutionSpace& copier) {
#if CUNUMPY_GPU_EVENTS
  AsyncState& state = async_state();
  std::lock_guard lock(state.mutex);
  GpuEvent done;
  if (state.free_events.empty()) {
    done = create_event();
  } else {
    done = state.free_events.back();
    state.free_events.pop_back();
  }
  record(done, stream_of(copier));
  wait_for(stream_of(producer), done);
  return CopyCompletion(done, state.generation);
#else
  (void)copier;
  if constexpr (has_device_backend)
    return CopyCompletion(producer);
  else
    return CopyCompletion();
#endif
}

} // namespace cunumpy::Impl
