// A CUDA driver and a libcupti that do nothing but answer, for the plugin's
// tests of the CUDA view's start on machines without a GPU (CUPTI headers
// only): built as libcuda.so.1 (FAKE_CUDA_DRIVER) and as libcupti.so. The
// fake CUPTI says another subscriber holds it, as under Nsight Systems.

#include <cstddef>
#include <cstring>

#ifdef FAKE_CUDA_DRIVER

extern "C" int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0; // CUDA_SUCCESS
}

#else

#include <cupti.h>

namespace {
CUptiResult unused() {
  return CUPTI_ERROR_NOT_INITIALIZED;
}
} // namespace

extern "C" {

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) {
  return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle*, CUpti_CallbackFunc,
                              void*, CUpti_SubscriberParams* params) {
  if (params != nullptr && params->oldSubscriberName != nullptr &&
      params->oldSubscriberSize > 0)
    std::strncpy(params->oldSubscriberName, "Nsight Systems",
                 params->oldSubscriberSize);
  return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
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
  return unused();
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
