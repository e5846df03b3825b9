// A CUDA driver and a libcupti that do nothing but answer, for the plugin's
// tests of the CUDA view on machines without a GPU (CUPTI headers only):
// built as libcuda.so.1 (FAKE_CUDA_DRIVER) and as libcupti.so. The fake
// CUPTI says another subscriber holds it, as under Nsight Systems; with
// FAKE_CUPTI_REPLAY set it takes the subscriber instead, and a program
// replays CUDA API calls through fake_cupti_call (the H200's sequences,
// tests/programs/fake_cuda_app.cpp). The fake driver calls memory in
// fake_device_memory device memory, and every other pointer the host's.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef FAKE_CUDA_DRIVER

extern "C" {

char fake_device_memory[1 << 16];

int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0; // CUDA_SUCCESS
}

int cuDeviceGetCount(int* count) {
  *count = 1;
  return 0;
}

// cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE): device memory
// (CU_MEMORYTYPE_DEVICE, 2) inside fake_device_memory, else not CUDA's
// (CUDA_ERROR_INVALID_VALUE, 1), as for pageable memory.
int cuPointerGetAttribute(void* data, int, unsigned long long pointer) {
  const auto begin = reinterpret_cast<unsigned long long>(fake_device_memory);
  if (pointer < begin || pointer >= begin + sizeof fake_device_memory)
    return 1;
  *static_cast<unsigned int*>(data) = 2;
  return 0;
}

} // extern "C"

#else

#include <cupti.h>

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

/// One CUDA API call of `domain` and `id` with `params`, as CUPTI reports
/// it to its subscriber: its entry, then its exit. False without one.
bool fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                     const char* name, const void* params) {
  if (subscriber == nullptr)
    return false;
  CUpti_CallbackData data{};
  data.functionName = name;
  data.functionParams = params;
  data.correlationId = next_correlation++;
  data.callbackSite = CUPTI_API_ENTER;
  subscriber(subscriber_data, domain, id, &data);
  data.callbackSite = CUPTI_API_EXIT;
  subscriber(subscriber_data, domain, id, &data);
  return true;
}

CUptiResult cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain, CUpti_CallbackId) {
  return unused();
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) {
  return unused();
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind) {
  return unused();
}
CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED; // the fake records nothing
}
CUptiResult cuptiActivityFlushAll(uint32_t) {
  return unused();
}
CUptiResult cuptiActivityConfigureUnifiedMemoryCounter(
    CUpti_ActivityUnifiedMemoryCounterConfig*, uint32_t) {
  return unused();
}

} // extern "C"

#endif
