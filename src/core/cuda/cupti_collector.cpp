// The CUPTI collector: CUDA's own record of the process, for every front
// end. libcupti is loaded when the collector starts (dlopen), so a machine
// without it runs on with Kokkos' events; CUPTI allows one subscriber per
// process, so under Nsight Systems, Nsight Compute or another CUPTI user
// cunumpy steps aside. What CUPTI reports is turned into the plain records
// of cuda_records.hpp here and nowhere else:
//
// - API callbacks, on the thread of the call: the copy families
//   (cudaMemcpy*, cuMemcpy*), cudaMemPrefetchAsync, and the waits
//   (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize and
//   their driver forms);
// - activity records, from CUPTI's buffers: copies (memory kinds, bytes,
//   time on the device) and unified-memory counters (migrations, faults).
//
// CUPTI takes its timestamps from the recorder's clock, so activity records
// and Kokkos events share one time line.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cupti.h> // with the parameter structs of every API call
#include <dlfcn.h>
#include <functional>
#include <link.h>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/collector.hpp"
#include "cuda/cuda_view.hpp"
#include "cuda/cupti_calls.hpp"
#include "cuda/cupti_library.hpp" // configured: the build's libcupti
#include "recorder/recorder.hpp"
#include "recorder/recording.hpp"
#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/file_kind.hpp"
#include "support/variables.hpp"

namespace cunumpy::Impl::cuda {

const bool collector_built = true;

namespace {

/// The few functions of libcupti the collector calls, found with dlsym.
struct Cupti {
  CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                           void*) = nullptr;
  CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                              void*, CUpti_SubscriberParams*) = nullptr;
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle,
                                 CUpti_CallbackDomain,
                                 CUpti_CallbackId) = nullptr;
  CUptiResult (*register_buffers)(CUpti_BuffersCallbackRequestFunc,
                                  CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*enable_activity)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*configure_unified_memory)(
      CUpti_ActivityUnifiedMemoryCounterConfig*, uint32_t) = nullptr;
  CUptiResult (*timestamp)(uint64_t*) = nullptr;
  CUptiResult (*result_string)(CUptiResult, const char**) = nullptr;
};

/// The driver functions the collector asks about pointers and
/// initialization (libcuda is loaded already where CUDA is used).
struct Driver {
  CUresult (*pointer_attribute)(void*, CUpointer_attribute,
                                CUdeviceptr) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
};

Cupti cupti;
Driver driver;
/// CUDA's timestamps on the recorder's clock (as the CUDA view maps them).
TimeMapping time_mapping;
/// Whether the driver was initialized when the collector started.
bool initialized_at_start = false;
CUpti_SubscriberHandle subscriber = nullptr;
std::once_flag started;
/// The view CUPTI feeds, the one of the recorder the collector started
/// with: CUPTI's callbacks carry no context. Set before the subscription.
std::atomic<CudaView*> fed{nullptr};
CudaView& fed_view() noexcept {
  return *fed.load(std::memory_order_acquire);
}
std::once_flag activities_enabled;
std::once_flag unified_memory_enabled;

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cupti.result_string != nullptr &&
      cupti.result_string(result, &text) == CUPTI_SUCCESS && text != nullptr)
    return text;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

template <class Function>
bool find(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// ---------------------------------------------------------------- API calls

/// The side of a pointer, for copies whose kind CUDA infers from the
/// pointers (cudaMemcpyDefault, cuMemcpy).
bool on_device(const void* pointer) {
  if (driver.pointer_attribute == nullptr || pointer == nullptr)
    return false;
  unsigned int type = 0;
  const CUresult result =
      driver.pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                               reinterpret_cast<CUdeviceptr>(pointer));
  // Pageable host memory is unknown to CUDA: an error, and the host.
  return result == CUDA_SUCCESS &&
         (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY);
}

CopyDirection by_pointers(const void* dst, const void* src) {
  const bool dst_device = on_device(dst);
  const bool src_device = on_device(src);
  if (dst_device && src_device)
    return CopyDirection::device_to_device;
  if (dst_device)
    return CopyDirection::host_to_device;
  if (src_device)
    return CopyDirection::device_to_host;
  return CopyDirection::host_to_host;
}

CopyDirection by_kind(cudaMemcpyKind kind, const void* dst, const void* src) {
  switch (kind) {
  case cudaMemcpyHostToHost:
    return CopyDirection::host_to_host;
  case cudaMemcpyHostToDevice:
    return CopyDirection::host_to_device;
  case cudaMemcpyDeviceToHost:
    return CopyDirection::device_to_host;
  case cudaMemcpyDeviceToDevice:
    return CopyDirection::device_to_device;
  default: // cudaMemcpyDefault: the pointers say
    return by_pointers(dst, src);
  }
}

CopyDirection by_memory_types(CUmemorytype dst, CUmemorytype src,
                              const void* dst_pointer,
                              const void* src_pointer) {
  const auto device = [](CUmemorytype type, const void* pointer) {
    if (type == CU_MEMORYTYPE_UNIFIED)
      return on_device(pointer);
    return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY;
  };
  const bool dst_device = device(dst, dst_pointer);
  const bool src_device = device(src, src_pointer);
  if (dst_device && src_device)
    return CopyDirection::device_to_device;
  return dst_device   ? CopyDirection::host_to_device
         : src_device ? CopyDirection::device_to_host
                      : CopyDirection::host_to_host;
}

// Decoders of the parameters of each family of calls.
template <class P>
void decode_count_and_kind(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->count;
  call.direction = by_kind(p->kind, p->dst, p->src);
  call.dst = p->dst;
  call.src = p->src;
}
template <class P> void decode_to_symbol(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->count;
  call.direction = p->kind == cudaMemcpyDeviceToDevice
                       ? CopyDirection::device_to_device
                       : CopyDirection::host_to_device;
}
template <class P> void decode_from_symbol(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->count;
  call.direction = p->kind == cudaMemcpyDeviceToDevice
                       ? CopyDirection::device_to_device
                       : CopyDirection::device_to_host;
}
template <class P> void decode_two_d(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->width * p->height;
  call.direction = by_kind(p->kind, p->dst, p->src);
  call.dst = p->dst;
  call.src = p->src;
}
template <class P> void decode_three_d(const void* params, ApiCall& call) {
  const cudaMemcpy3DParms* p = static_cast<const P*>(params)->p;
  if (p == nullptr)
    return;
  // Bytes of a linear copy; a copy to or from an array counts elements:
  // CUDA's record gives its bytes.
  if (p->srcArray == nullptr && p->dstArray == nullptr)
    call.bytes = p->extent.width * p->extent.height * p->extent.depth;
  call.direction = by_kind(p->kind, p->dstPtr.ptr, p->srcPtr.ptr);
  call.dst = p->dstPtr.ptr;
  call.src = p->srcPtr.ptr;
}
template <class P> void decode_peer(const void* params, ApiCall& call) {
  call.bytes = static_cast<const P*>(params)->count;
  call.direction = CopyDirection::device_to_device;
}
template <class P> void decode_peer_3d(const void* params, ApiCall& call) {
  const cudaMemcpy3DPeerParms* p = static_cast<const P*>(params)->p;
  if (p != nullptr && p->srcArray == nullptr && p->dstArray == nullptr)
    call.bytes = p->extent.width * p->extent.height * p->extent.depth;
  call.direction = CopyDirection::device_to_device;
}
template <class P, CopyDirection direction>
void byte_count(const void* params, ApiCall& call) {
  call.bytes = static_cast<const P*>(params)->ByteCount;
  call.direction = direction;
}
template <class P> void decode_bytes_h2d(const void* params, ApiCall& call) {
  byte_count<P, CopyDirection::host_to_device>(params, call);
}
template <class P> void decode_bytes_d2h(const void* params, ApiCall& call) {
  byte_count<P, CopyDirection::device_to_host>(params, call);
}
template <class P> void decode_bytes_d2d(const void* params, ApiCall& call) {
  byte_count<P, CopyDirection::device_to_device>(params, call);
}
template <class P> void decode_unified(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->ByteCount;
  call.dst = reinterpret_cast<const void*>(p->dst);
  call.src = reinterpret_cast<const void*>(p->src);
  call.direction = by_pointers(call.dst, call.src);
}
template <class P> void decode_driver_2d(const void* params, ApiCall& call) {
  const CUDA_MEMCPY2D* p = static_cast<const P*>(params)->pCopy;
  if (p == nullptr)
    return;
  call.bytes = p->WidthInBytes * p->Height;
  call.direction = by_memory_types(p->dstMemoryType, p->srcMemoryType,
                                   reinterpret_cast<const void*>(p->dstDevice),
                                   reinterpret_cast<const void*>(p->srcDevice));
}
template <class P> void decode_driver_3d(const void* params, ApiCall& call) {
  const CUDA_MEMCPY3D* p = static_cast<const P*>(params)->pCopy;
  if (p == nullptr)
    return;
  call.bytes = p->WidthInBytes * p->Height * p->Depth;
  call.direction = by_memory_types(p->dstMemoryType, p->srcMemoryType,
                                   reinterpret_cast<const void*>(p->dstDevice),
                                   reinterpret_cast<const void*>(p->srcDevice));
}

template <class P>
void decode_prefetch_to_device(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->count;
  call.direction = p->device < 0 ? CopyDirection::device_to_host
                                 : CopyDirection::host_to_device;
}
template <class P>
void decode_prefetch_to_location(const void* params, ApiCall& call) {
  const auto* p = static_cast<const P*>(params);
  call.bytes = p->count;
  // cudaMemLocationTypeDevice is 1; the host types come after it.
  call.direction = p->location.type == 1 ? CopyDirection::host_to_device
                                         : CopyDirection::device_to_host;
}
template <class P> void decode_none(const void*, ApiCall&) {}

/// A call the collector follows: its callback id, how to read it.
struct Watched {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId id;
  const char* name;
  CallFamily family;
  bool synchronous;
  void (*decode)(const void* params, ApiCall& call);
};

const Watched watched[] = {
#define CUNUMPY_WATCHED(domain, id, name, family, synchronous, form, P)        \
  {CUNUMPY_CUPTI_DOMAIN_##domain,                                              \
   id,                                                                         \
   name,                                                                       \
   CallFamily::family,                                                         \
   synchronous,                                                                \
   &decode_##form<P>},
    CUNUMPY_CUPTI_CALLS(CUNUMPY_WATCHED)
#undef CUNUMPY_WATCHED
};

const Watched* find_watched(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  // A few dozen entries: a linear search costs less than the call itself.
  for (const Watched& entry : watched)
    if (entry.id == id && entry.domain == domain)
      return &entry;
  return nullptr;
}

// --------------------------------------------------------- activity records

constexpr std::size_t buffer_size = std::size_t(1) << 20;

MemoryKind memory_kind(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
    return MemoryKind::pageable;
  case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
    return MemoryKind::pinned;
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
    return MemoryKind::device;
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
    return MemoryKind::managed;
  case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    return MemoryKind::array;
  default:
    return MemoryKind::unknown;
  }
}

CopyDirection copy_direction(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
    return CopyDirection::host_to_device;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
    return CopyDirection::device_to_host;
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return CopyDirection::device_to_device;
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
    return CopyDirection::host_to_host;
  default:
    return CopyDirection::unknown;
  }
}

bool unified_memory_counter(CUpti_ActivityUnifiedMemoryCounterKind kind,
                            UnifiedMemoryCounter& counter) {
  switch (kind) {
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    counter = UnifiedMemoryCounter::bytes_to_device;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
    counter = UnifiedMemoryCounter::bytes_to_host;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
    counter = UnifiedMemoryCounter::bytes_device_to_device;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
    counter = UnifiedMemoryCounter::gpu_page_fault;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
    counter = UnifiedMemoryCounter::cpu_page_fault;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
    counter = UnifiedMemoryCounter::thrashing;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
    counter = UnifiedMemoryCounter::throttling;
    return true;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
    counter = UnifiedMemoryCounter::remote_map;
    return true;
  default:
    return false;
  }
}

MigrationCause migration_cause(uint32_t flags) {
  switch (flags) {
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER:
    return MigrationCause::user;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE:
    return MigrationCause::coherence;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH:
    return MigrationCause::prefetch;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION:
    return MigrationCause::eviction;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS:
    return MigrationCause::access_counters;
  default:
    return MigrationCause::unknown;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size,
                               size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_size));
  *size = *buffer != nullptr ? buffer_size : 0;
  *max_records = 0; // as many as fit
}

// ------------------------------------------------- the recording's lines

/// A time of CUDA's on the recorder's clock; none for 0 (not timed).
std::optional<double> recorded_time(std::uint64_t ns) {
  if (ns == 0)
    return std::nullopt;
  return time_mapping.seconds(ns);
}

/// A buffer of CUDA's records, as the collector read it.
void record_buffer(const std::vector<CopyRecord>& copies,
                   const std::vector<UnifiedMemoryRecord>& migrations,
                   std::size_t dropped) {
  std::string copy_list = "[";
  for (const CopyRecord& copy : copies)
    copy_list += (copy_list.size() > 1 ? "," : "") +
                 recording::Object()
                     .number("corr", copy.correlation)
                     .number("rcorr", copy.runtime_correlation)
                     .text("dir", name_of(copy.direction))
                     .text("src", name_of(copy.src))
                     .text("dst", name_of(copy.dst))
                     .number("bytes", copy.bytes)
                     .seconds("start", recorded_time(copy.start_ns))
                     .seconds("end", recorded_time(copy.end_ns))
                     .take();
  std::string migration_list = "[";
  for (const UnifiedMemoryRecord& migration : migrations)
    migration_list += (migration_list.size() > 1 ? "," : "") +
                      recording::Object()
                          .text("counter", name_of(migration.counter))
                          .text("cause", name_of(migration.cause))
                          .number("value", migration.value)
                          .seconds("start", recorded_time(migration.start_ns))
                          .seconds("end", recorded_time(migration.end_ns))
                          .take();
  recording::Line("cuda_buffer")
      .json("copies", copy_list + "]")
      .json("migrations", migration_list + "]")
      .number("dropped", dropped)
      .write();
}

/// A callback of an API call (`call`: what the collector read of it at its
/// entry).
void record_call(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                 const CUpti_CallbackData& info, const char* name,
                 const ApiCall* call) {
  recording::Line line(info.callbackSite == CUPTI_API_ENTER ? "cuda_enter"
                                                            : "cuda_exit");
  line.text("domain",
            domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime")
      .number("cbid", id)
      .number("corr", info.correlationId);
  if (name != nullptr)
    line.text("fn", name);
  if (call != nullptr)
    line.text("family", name_of(call->family))
        .boolean("sync", call->synchronous)
        .text("dir", name_of(call->direction))
        .number("bytes", call->bytes)
        .pointer("dst", call->dst)
        .pointer("src", call->src);
  line.write();
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream,
                               uint8_t* buffer, size_t, size_t valid) {
  // Only the leading fields of the records are read: every version of
  // CUPTI's structs has them where the newest has them.
  std::vector<CopyRecord> copies;
  std::vector<UnifiedMemoryRecord> migrations;
  try {
    CUpti_Activity* record = nullptr;
    while (buffer != nullptr &&
           cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const auto* memcpy = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        copies.push_back({memcpy->correlationId, memcpy->runtimeCorrelationId,
                          copy_direction(memcpy->copyKind),
                          memory_kind(memcpy->srcKind),
                          memory_kind(memcpy->dstKind), memcpy->bytes,
                          memcpy->start, memcpy->end});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
        const auto* memcpy =
            reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
        copies.push_back(
            {memcpy->correlationId, 0, CopyDirection::device_to_device,
             memory_kind(memcpy->srcKind), memory_kind(memcpy->dstKind),
             memcpy->bytes, memcpy->start, memcpy->end});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
        const auto* counter =
            reinterpret_cast<CUpti_ActivityUnifiedMemoryCounter3*>(record);
        UnifiedMemoryRecord entry;
        if (!unified_memory_counter(counter->counterKind, entry.counter))
          continue;
        entry.cause = migration_cause(counter->flags);
        entry.value = counter->value;
        entry.start_ns = counter->start;
        entry.end_ns = counter->end;
        migrations.push_back(entry);
      }
    }
  } catch (...) {
    if (Recorder* const recorder = fed_view().bound())
      recorder->losses().count(LossReason::record_failed);
  }
  size_t dropped = 0;
  if (cupti.dropped != nullptr &&
      cupti.dropped(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0)
    fed_view().add_dropped_records(dropped);
  std::free(buffer);
  std::optional<recording::Inside> inside;
  if (recording::active()) {
    record_buffer(copies, migrations, dropped);
    inside.emplace();
  }
  CudaView& view = fed_view();
  view.copy_records(copies.data(), copies.size());
  view.unified_memory_records(migrations.data(), migrations.size());
  if (Recorder* const recorder = view.bound())
    view.buffer_delivered(recorder->now());
}

uint64_t CUPTIAPI recorder_timestamp() {
  const Recorder* const recorder = fed_view().bound();
  return recorder == nullptr
             ? 0
             : static_cast<uint64_t>(std::max(0.0, recorder->now()) * 1e9);
}

/// CUDA's buffers handed over now, whole (before reads).
void flush_buffers() {
  if (cupti.flush_all == nullptr)
    return;
  // The buffers CUDA hands over now are recorded inside the flush.
  recording::Line("cuda_flush").write();
  const recording::Nested nested;
  cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/// Hands over the completed buffers a few times a second, so that the
/// sinks learn that older records have all come (and forget the regions
/// before them), in a run that reads nothing until its end.
class Flusher {
public:
  void start() {
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250),
                           [this] { return stopping_; })) {
      lock.unlock();
      cupti.flush_all(0);
      lock.lock();
    }
  }
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

Flusher* flusher = nullptr;

void stop_flusher() {
  if (flusher != nullptr)
    flusher->stop();
}

/// Activity records of copies: from the first context on, once.
void enable_activities() {
  std::call_once(activities_enabled, [] {
    CUptiResult result = cupti.enable_activity(CUPTI_ACTIVITY_KIND_MEMCPY);
    recording::Line("cupti")
        .text("call", "activities")
        .number("result", static_cast<std::uint64_t>(result))
        .write();
    if (result == CUPTI_SUCCESS)
      cupti.enable_activity(CUPTI_ACTIVITY_KIND_MEMCPY2);
    else
      Impl::warn("note: CUDA's records of copies are off (" +
                 result_text(result) +
                 "): raw CUDA copies are counted without their memory kinds "
                 "and time on the device");
    flusher = new Flusher();
    flusher->start();
    std::atexit(stop_flusher); // before CUDA's own exit handlers run
  });
}

/// Unified-memory counters, at the program's first managed allocation
/// (before it is made): they cost the driver at every fault, and a program
/// without managed memory has nothing for them to count.
void enable_unified_memory() {
  std::call_once(unified_memory_enabled, [] {
    CudaView& view = fed_view();
    std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs;
    for (auto kind : {
             CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
             CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
             CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
             CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
             CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
         })
      configs.push_back(
          {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
           kind, 0, 1});
    CUptiResult result = cupti.configure_unified_memory(
        configs.data(), static_cast<uint32_t>(configs.size()));
    if (result == CUPTI_SUCCESS)
      result =
          cupti.enable_activity(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    recording::Line("cupti")
        .text("call", "unified_memory")
        .number("result", static_cast<std::uint64_t>(result))
        .write();
    if (result == CUPTI_SUCCESS)
      view.set_unified_memory(true, "");
    else
      view.set_unified_memory(false, "CUDA does not give unified-memory "
                                     "counters here (" +
                                         result_text(result) + ")");
  });
}

bool driver_initialized() {
  int count = 0;
  return driver.device_count != nullptr &&
         driver.device_count(&count) == CUDA_SUCCESS;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain,
                          CUpti_CallbackId id, const void* data) {
  std::optional<recording::Inside> inside;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (recording::active()) {
      recording::Line("cuda_resource").number("cbid", id).write();
      inside.emplace();
    }
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
        id == CUPTI_CBID_RESOURCE_CU_INIT_FINISHED)
      enable_activities();
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info == nullptr)
    return;
  CudaView& view = fed_view();
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      id == CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged) {
    if (recording::active()) {
      record_call(domain, id, *info, "cuMemAllocManaged", nullptr);
      inside.emplace();
    }
    if (info->callbackSite == CUPTI_API_ENTER) {
      enable_unified_memory();
      view.note_managed_memory();
    }
    return;
  }
  if (info->callbackSite == CUPTI_API_EXIT) {
    if (recording::active()) {
      record_call(domain, id, *info, nullptr, nullptr);
      inside.emplace();
    }
    view.api_exit(info->correlationId);
    return;
  }
  const Watched* entry = find_watched(domain, id);
  if (entry == nullptr)
    return;
  ApiCall call;
  call.name = entry->name;
  call.family = entry->family;
  call.driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  call.synchronous = entry->synchronous;
  call.correlation = info->correlationId;
  if (info->functionParams != nullptr)
    entry->decode(info->functionParams, call);
  if (recording::active()) {
    record_call(domain, id, *info, entry->name, &call);
    inside.emplace();
  }
  view.api_enter(call);
}

/// The directory of the CUDA runtime this process uses (a shared
/// libcudart), "" when none is loaded.
std::string cudart_directory() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const char* name = info->dlpi_name;
        if (name == nullptr || std::strstr(name, "libcudart.so") == nullptr)
          return 0;
        std::string path = name;
        const auto slash = path.rfind('/');
        if (slash == std::string::npos)
          return 0;
        *static_cast<std::string*>(data) = path.substr(0, slash);
        return 1;
      },
      &found);
  return found;
}

/// The libcupti to use, or nullptr and why not. The one the user named
/// (CUNUMPY_CUPTI_LIBRARY) is used or refused, never replaced; otherwise
/// the first that loads of: next to the CUDA runtime in use, the loader's
/// search path, CUDA_HOME's and CUDA_PATH's lib directories, the one
/// cunumpy was built against. `name`: the library (for messages).
void* load_cupti(std::string& name, std::string& why) {
  if (const auto path = read_text("CUNUMPY_CUPTI_LIBRARY")) {
    name = "CUNUMPY_CUPTI_LIBRARY='" + excerpt(*path, 256) + "'";
    if (const std::string problem = library_file_problem(*path);
        !problem.empty()) {
      why = name + " " + problem;
      return nullptr;
    }
    void* library = ::dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* error = ::dlerror();
      why = name + " cannot be loaded (" +
            (error != nullptr ? error : "unknown error") + ")";
    }
    return library;
  }
  std::vector<std::string> candidates;
  const char* const names[] = {"libcupti.so", "libcupti.so.13",
                               "libcupti.so.12"};
  if (const std::string dir = cudart_directory(); !dir.empty())
    for (const char* file : names)
      candidates.push_back(dir + "/" + file);
  for (const char* file : names)
    candidates.emplace_back(file);
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const auto root = environment(variable))
      for (const char* dir : {"/lib64/", "/lib/", "/extras/CUPTI/lib64/"})
        candidates.push_back(*root + dir + "libcupti.so");
  if (*built_cupti_library != '\0')
    candidates.emplace_back(built_cupti_library);
  std::string tried;
  for (const std::string& candidate : candidates) {
    if (library_file_problem(candidate).empty())
      if (void* library = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        name = "'" + excerpt(candidate, 256) + "'";
        return library;
      }
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  why = "libcupti cannot be loaded (tried " + tried +
        "); set CUNUMPY_CUPTI_LIBRARY to its path, or add the CUDA "
        "toolkit's lib64 (or extras/CUPTI/lib64) to LD_LIBRARY_PATH";
  return nullptr;
}

/// The CUDA view is off, and why: in the reports, and in one note (a
/// machine with a CUDA driver, where CUDA's record was expected).
void cannot_start(const std::string& reason) {
  fed_view().set_status(profiling::CudaViewState::unavailable, reason);
  Impl::warn("note: CUDA's own record of copies and migrations is off: " +
             reason + "; cunumpy counts the copies Kokkos reports");
}

void start(Recorder& recorder) {
  CudaView& view = CudaView::of(recorder);
  fed.store(&view, std::memory_order_release);
  view.bind(recorder);
  if (!recorder.settings().cupti) {
    view.set_status(profiling::CudaViewState::off, "CUNUMPY_CUPTI=0");
    return;
  }
  // No driver, no CUDA: a CUDA build on a machine without a GPU. Nothing to
  // say beyond the reports' line.
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cuda == nullptr) {
    view.set_status(profiling::CudaViewState::unavailable,
                    "no CUDA driver on this machine (libcuda.so.1 cannot be "
                    "loaded)");
    return;
  }
  CUresult (*driver_version)(int*) = nullptr;
  int version = 0;
  if (!find(cuda, "cuDriverGetVersion", driver_version) ||
      driver_version(&version) != CUDA_SUCCESS) {
    view.set_status(profiling::CudaViewState::unavailable,
                    "the CUDA driver does not answer (cuDriverGetVersion "
                    "failed)");
    return;
  }
  find(cuda, "cuPointerGetAttribute", driver.pointer_attribute);
  find(cuda, "cuDeviceGetCount", driver.device_count);
  std::string name, why;
  void* library = load_cupti(name, why);
  if (library == nullptr) {
    cannot_start(why);
    return;
  }
  find(library, "cuptiGetResultString", cupti.result_string);
  find(library, "cuptiSubscribe_v2", cupti.subscribe_v2);
  find(library, "cuptiActivityRegisterTimestampCallback",
       cupti.register_timestamp);
  find(library, "cuptiActivityGetNumDroppedRecords", cupti.dropped);
  find(library, "cuptiGetTimestamp", cupti.timestamp);
  std::string missing;
  const auto need = [&](const char* function, auto& pointer) {
    if (!find(library, function, pointer))
      missing += (missing.empty() ? "" : ", ") + std::string(function);
  };
  need("cuptiSubscribe", cupti.subscribe);
  need("cuptiEnableCallback", cupti.enable_callback);
  need("cuptiActivityRegisterCallbacks", cupti.register_buffers);
  need("cuptiActivityEnable", cupti.enable_activity);
  need("cuptiActivityGetNextRecord", cupti.next_record);
  need("cuptiActivityFlushAll", cupti.flush_all);
  need("cuptiActivityConfigureUnifiedMemoryCounter",
       cupti.configure_unified_memory);
  if (!missing.empty()) {
    cannot_start(name + " lacks " + missing +
                 (cupti.subscribe == nullptr
                      ? " (it is not libcupti)"
                      : " (a CUPTI older than CUDA 11?)"));
    return;
  }

  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUptiResult result;
  if (cupti.subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "cunumpy";
    params.oldSubscriberName = other;
    params.oldSubscriberSize = sizeof other - 1;
    result = cupti.subscribe_v2(&subscriber, on_callback, nullptr, &params);
  } else {
    result = cupti.subscribe(&subscriber, on_callback, nullptr);
  }
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    // CUPTI names the holder when it knows it (cuptiSubscribe_v2).
    const std::string holder =
        other[0] != '\0' ? std::string(other)
                         : "Nsight Systems, Nsight Compute, Caliper's cupti "
                           "service, ...";
    const std::string reason = "CUPTI is taken by another CUPTI user (" +
                               holder + "), and CUDA allows one per process";
    cannot_start(reason);
    return;
  }
  if (result != CUPTI_SUCCESS) {
    cannot_start(name + " refused a subscriber (" + result_text(result) + ")");
    return;
  }
  for (const Watched& entry : watched)
    cupti.enable_callback(1, subscriber, entry.domain, entry.id);
  // Managed allocations (cudaMallocManaged calls it too) turn the
  // unified-memory counters on.
  cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
  cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CU_INIT_FINISHED);
  // One time line: CUPTI stamps its records with the recorder's clock.
  if (cupti.register_timestamp != nullptr &&
      cupti.register_timestamp(recorder_timestamp) == CUPTI_SUCCESS) {
    time_mapping = TimeMapping{};
    view.set_time_mapping(time_mapping);
  } else if (uint64_t ns = 0; cupti.timestamp != nullptr &&
                              cupti.timestamp(&ns) == CUPTI_SUCCESS) {
    time_mapping = TimeMapping{ns, recorder.now()};
    view.set_time_mapping(time_mapping);
  }
  result = cupti.register_buffers(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) {
    cannot_start(name + " refused activity buffers (" + result_text(result) +
                 ")");
    return;
  }
  view.set_flush(flush_buffers);
  view.set_status(profiling::CudaViewState::on, "");
  initialized_at_start = driver_initialized();
  if (initialized_at_start)
    enable_activities();
}

/// How the CUDA view started, for a replay to start it the same way.
void record_start() {
  const profiling::CudaView status = fed_view().status();
  recording::Line("cuda_view")
      .text("state", profiling::to_string(status.state))
      .text("reason", status.reason)
      .boolean("driver_initialized", initialized_at_start)
      .write();
}

} // namespace

void start_collector(Recorder& recorder) noexcept {
  try {
    std::call_once(started, [&recorder] {
      start(recorder);
      if (recording::active())
        record_start();
    });
  } catch (...) {
    Impl::warn("note: CUDA's own record could not be started; cunumpy counts "
               "the copies Kokkos reports");
  }
}

} // namespace cunumpy::Impl::cuda
