// A CUDA driver and a libcupti that do nothing but answer, for the plugin's
// tests of the CUDA view on machines without a GPU (CUPTI headers only):
// built as libcuda.so.1 (FAKE_CUDA_DRIVER) and as libcupti.so. The fake
// CUPTI says another subscriber holds it, as under Nsight Systems; with
// FAKE_CUPTI_REPLAY set it takes the subscriber instead, and a program
// hands CUDA's side of a run to the collector through the fake_* functions
// below: API callbacks (fake_cupti_call, fake_cupti_callback), activity
// records, queued for the next flush (fake_cupti_queue) or delivered as a
// buffer now (fake_cupti_deliver), and CUPTI's answers (fake_cupti_answer).
// tests/programs/fake_cuda_app.cpp plays the H200's sequences this way;
// tests/tools/cunumpy_replay.cpp replays recordings. The fake driver calls
// memory in fake_device_memory device memory, the pointers named by
// fake_cuda_pointer_side what they are said to be, and every other pointer
// the host's.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef FAKE_CUDA_DRIVER

namespace {

bool initialized = true;
/// Pointers whose side the program said (fake_cuda_pointer_side).
struct Side {
  unsigned long long pointer;
  bool device;
};
Side sides[4];
int side_count = 0;

} // namespace

extern "C" {

char fake_device_memory[1 << 16];

int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0; // CUDA_SUCCESS
}

// Whether CUDA was initialized (the collector enables its activity records
// at once, else at the first context).
int cuDeviceGetCount(int* count) {
  *count = 1;
  return initialized ? 0 : 3; // CUDA_ERROR_NOT_INITIALIZED
}

void fake_cuda_initialized(int yes) {
  initialized = yes != 0;
}

/// Until fake_cuda_clear_pointer_sides, `pointer` is device memory or not.
void fake_cuda_pointer_side(const void* pointer, int device) {
  if (side_count < 4)
    sides[side_count++] = {reinterpret_cast<unsigned long long>(pointer),
                           device != 0};
}

void fake_cuda_clear_pointer_sides() {
  side_count = 0;
}

// cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE): device memory
// (CU_MEMORYTYPE_DEVICE, 2) inside fake_device_memory, else not CUDA's
// (CUDA_ERROR_INVALID_VALUE, 1), as for pageable memory.
int cuPointerGetAttribute(void* data, int, unsigned long long pointer) {
  for (int i = 0; i < side_count; ++i)
    if (sides[i].pointer == pointer) {
      if (!sides[i].device)
        return 1;
      *static_cast<unsigned int*>(data) = 2;
      return 0;
    }
  const auto begin = reinterpret_cast<unsigned long long>(fake_device_memory);
  if (pointer < begin || pointer >= begin + sizeof fake_device_memory)
    return 1;
  *static_cast<unsigned int*>(data) = 2;
  return 0;
}

} // extern "C"

#else

#include <cupti.h>
#include <mutex>
#include <vector>

namespace {

bool replay() {
  return std::getenv("FAKE_CUPTI_REPLAY") != nullptr;
}

CUptiResult unused() {
  return replay() ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
}

CUpti_CallbackFunc subscriber = nullptr;
void* subscriber_data = nullptr;
std::uint32_t next_correlation = 1;
CUpti_BuffersCallbackRequestFunc buffer_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc buffer_completed = nullptr;
CUpti_TimestampCallbackFunc timestamp = nullptr;
CUptiResult activities_answer = CUPTI_SUCCESS;
CUptiResult unified_memory_answer = CUPTI_SUCCESS;
void (*flush_hook)() = nullptr;

/// Records are laid out in a buffer at this stride.
union AnyRecord {
  CUpti_ActivityMemcpy6 memcpy;
  CUpti_ActivityMemcpyPtoP4 peer;
  CUpti_ActivityUnifiedMemoryCounter3 unified;
};
constexpr std::size_t queued_stride = (sizeof(AnyRecord) + 7) / 8 * 8;

std::mutex queue_mutex;
std::vector<unsigned char> queue; ///< records for the next flush
/// What the buffer being handed over has: its stride and dropped records.
thread_local std::size_t stride = queued_stride;
thread_local std::size_t dropped = 0;

} // namespace

extern "C" {

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* handle,
                           CUpti_CallbackFunc callback, void* data) {
  if (!replay())
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscriber = callback;
  subscriber_data = data;
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(&subscriber);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* handle,
                              CUpti_CallbackFunc callback, void* data,
                              CUpti_SubscriberParams* params) {
  if (replay())
    return cuptiSubscribe(handle, callback, data);
  if (params != nullptr && params->oldSubscriberName != nullptr &&
      params->oldSubscriberSize > 0)
    std::strncpy(params->oldSubscriberName, "Nsight Systems",
                 params->oldSubscriberSize);
  return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

/// One callback of `domain` and `id` to the subscriber: `site`'s (the
/// entry or the exit) of the call `correlation`. False without one.
bool fake_cupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                         const char* name, const void* params,
                         CUpti_ApiCallbackSite site,
                         std::uint32_t correlation) {
  if (subscriber == nullptr)
    return false;
  CUpti_CallbackData data{};
  data.functionName = name;
  data.functionParams = params;
  data.correlationId = correlation;
  data.callbackSite = site;
  subscriber(subscriber_data, domain, id, &data);
  return true;
}

/// One CUDA API call of `domain` and `id` with `params`, as CUPTI reports
/// it to its subscriber: its entry, then its exit. Its correlation id, 0
/// without a subscriber.
std::uint32_t fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                              const char* name, const void* params) {
  const std::uint32_t correlation = next_correlation++;
  if (!fake_cupti_callback(domain, id, name, params, CUPTI_API_ENTER,
                           correlation))
    return 0;
  fake_cupti_callback(domain, id, name, params, CUPTI_API_EXIT, correlation);
  return correlation;
}

/// The time on the subscriber's clock (the timestamps it asked CUPTI to
/// take), in ns. False when it asked for none.
bool fake_cupti_timestamp(std::uint64_t* ns) {
  if (timestamp == nullptr)
    return false;
  *ns = timestamp();
  return true;
}

/// Hands `count` records laid out `record_stride` bytes apart to the
/// subscriber as one buffer, now, on this thread, with `lost` records said
/// to be dropped. False when it asked for no buffers.
bool fake_cupti_deliver(const void* records, std::size_t record_stride,
                        std::size_t count, std::size_t lost) {
  if (buffer_requested == nullptr || buffer_completed == nullptr)
    return false;
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0, most = 0;
  buffer_requested(&buffer, &size, &most);
  const std::size_t bytes = record_stride * count;
  if (buffer == nullptr || size < bytes) {
    // More than the subscriber's buffer holds (records of CUDA's own size
    // are smaller): one as large, freed by the subscriber as its own.
    std::free(buffer);
    size = (bytes + 7) / 8 * 8;
    buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, size));
    if (buffer == nullptr)
      return false;
  }
  if (bytes > 0)
    std::memcpy(buffer, records, bytes);
  stride = record_stride;
  dropped = lost;
  buffer_completed(nullptr, 0, buffer, size, bytes);
  stride = queued_stride;
  dropped = 0;
  return true;
}

/// A record of `size` bytes for the next flush, as CUPTI keeps them until
/// a buffer is full or flushed.
void fake_cupti_queue(const void* record, std::size_t size) {
  const std::lock_guard lock(queue_mutex);
  const std::size_t at = queue.size();
  queue.resize(at + queued_stride);
  std::memcpy(queue.data() + at, record,
              size < queued_stride ? size : queued_stride);
}

/// Called at each forced flush (a read of cunumpy's), before the records
/// queued are handed over.
void fake_cupti_set_flush_hook(void (*hook)()) {
  flush_hook = hook;
}

/// What CUPTI answers when the collector enables `call`: "activities" (its
/// records of copies) or "unified_memory" (its counters).
void fake_cupti_answer(const char* call, int result) {
  if (std::strcmp(call, "activities") == 0)
    activities_answer = static_cast<CUptiResult>(result);
  else if (std::strcmp(call, "unified_memory") == 0)
    unified_memory_answer = static_cast<CUptiResult>(result);
}

CUptiResult cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain, CUpti_CallbackId) {
  return unused();
}
CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                               CUpti_BuffersCallbackCompleteFunc completed) {
  if (replay()) {
    buffer_requested = requested;
    buffer_completed = completed;
  }
  return unused();
}
CUptiResult
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc function) {
  if (replay())
    timestamp = function;
  return unused();
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (replay() && kind == CUPTI_ACTIVITY_KIND_MEMCPY)
    return activities_answer;
  return unused();
}
CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid,
                                       CUpti_Activity** record) {
  std::size_t at = 0;
  if (*record != nullptr)
    at =
        static_cast<std::size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
        stride;
  if (at + stride > valid)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + at);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t,
                                              size_t* count) {
  *count = dropped;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityFlushAll(uint32_t flags) {
  if (!replay())
    return unused();
  if ((flags & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0 && flush_hook != nullptr)
    flush_hook();
  std::vector<unsigned char> records;
  {
    const std::lock_guard lock(queue_mutex);
    records.swap(queue);
  }
  if (!records.empty())
    fake_cupti_deliver(records.data(), queued_stride,
                       records.size() / queued_stride, 0);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityConfigureUnifiedMemoryCounter(
    CUpti_ActivityUnifiedMemoryCounterConfig*, uint32_t) {
  return replay() ? unified_memory_answer : unused();
}

} // extern "C"

#endif
