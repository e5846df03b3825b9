#ifndef CUNUMPY_SRC_CUDA_CUPTI_CALLS_HPP
#define CUNUMPY_SRC_CUDA_CUPTI_CALLS_HPP

// The CUDA API calls the CUPTI collector follows, in one table: the
// collector reads each call's parameters by its form (cupti_collector.cpp),
// and the replay of a recording writes them (tests/tools/cunumpy_replay.cpp).
// Needs <cupti.h>, with the parameter structs of every API call.
//
//   X(domain, callback id, name, family, synchronous, form, parameters)
//
// domain: RUNTIME or DRIVER; family: copy, prefetch or wait (CallFamily);
// form: how the parameters say the copy's bytes, direction and pointers.

#include <cstddef>
#include <cupti.h>

namespace cunumpy::Impl::cuda {

/// cudaMemPrefetchAsync before CUDA 12.2: (pointer, count, device, stream),
/// the device cudaCpuDeviceId (-1) for the host.
struct PrefetchToDevice {
  const void* pointer;
  size_t count;
  int device;
  cudaStream_t stream;
};
/// From CUDA 12.2 (and cuMemPrefetchAsync_v2): a location.
struct PrefetchToLocation {
  const void* pointer;
  size_t count;
  struct {
    int type;
    int id;
  } location;
  unsigned int flags;
  cudaStream_t stream;
};

// Callback ids that not every CUPTI header names (the enums only grow).
constexpr CUpti_CallbackId cudaMemPrefetchAsync_v12020 = 449;
constexpr CUpti_CallbackId cudaMemPrefetchAsync_ptsz_v12020 = 450;

} // namespace cunumpy::Impl::cuda

#define CUNUMPY_CUPTI_DOMAIN_RUNTIME CUPTI_CB_DOMAIN_RUNTIME_API
#define CUNUMPY_CUPTI_DOMAIN_DRIVER CUPTI_CB_DOMAIN_DRIVER_API

// clang-format off
#define CUNUMPY_CUPTI_CALLS(X) \
  /* Runtime copies; the per-thread default stream forms (_ptds, _ptsz) */ \
  /* have the same parameters. */ \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", copy, true, count_and_kind, cudaMemcpy_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, "cudaMemcpy", copy, true, count_and_kind, cudaMemcpy_ptds_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync", copy, false, count_and_kind, cudaMemcpyAsync_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, "cudaMemcpyAsync", copy, false, count_and_kind, cudaMemcpyAsync_ptsz_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020, "cudaMemcpy2D", copy, true, two_d, cudaMemcpy2D_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000, "cudaMemcpy2D", copy, true, two_d, cudaMemcpy2D_ptds_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020, "cudaMemcpy2DAsync", copy, false, two_d, cudaMemcpy2DAsync_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000, "cudaMemcpy2DAsync", copy, false, two_d, cudaMemcpy2DAsync_ptsz_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020, "cudaMemcpy3D", copy, true, three_d, cudaMemcpy3D_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_ptds_v7000, "cudaMemcpy3D", copy, true, three_d, cudaMemcpy3D_ptds_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020, "cudaMemcpy3DAsync", copy, false, three_d, cudaMemcpy3DAsync_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_ptsz_v7000, "cudaMemcpy3DAsync", copy, false, three_d, cudaMemcpy3DAsync_ptsz_v7000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000, "cudaMemcpyPeer", copy, true, peer, cudaMemcpyPeer_v4000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, "cudaMemcpyPeerAsync", copy, false, peer, cudaMemcpyPeerAsync_v4000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeer_v4000, "cudaMemcpy3DPeer", copy, true, peer_3d, cudaMemcpy3DPeer_v4000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_v4000, "cudaMemcpy3DPeerAsync", copy, false, peer_3d, cudaMemcpy3DPeerAsync_v4000_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, "cudaMemcpyToSymbol", copy, true, to_symbol, cudaMemcpyToSymbol_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_v3020, "cudaMemcpyToSymbolAsync", copy, false, to_symbol, cudaMemcpyToSymbolAsync_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020, "cudaMemcpyFromSymbol", copy, true, from_symbol, cudaMemcpyFromSymbol_v3020_params) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_v3020, "cudaMemcpyFromSymbolAsync", copy, false, from_symbol, cudaMemcpyFromSymbolAsync_v3020_params) \
  /* Runtime prefetches and waits. */ \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemPrefetchAsync_v8000, "cudaMemPrefetchAsync", prefetch, false, prefetch_to_device, PrefetchToDevice) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemPrefetchAsync_ptsz_v8000, "cudaMemPrefetchAsync", prefetch, false, prefetch_to_device, PrefetchToDevice) \
  X(RUNTIME, cudaMemPrefetchAsync_v12020, "cudaMemPrefetchAsync", prefetch, false, prefetch_to_location, PrefetchToLocation) \
  X(RUNTIME, cudaMemPrefetchAsync_ptsz_v12020, "cudaMemPrefetchAsync", prefetch, false, prefetch_to_location, PrefetchToLocation) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize", wait, true, none, void) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020, "cudaThreadSynchronize", wait, true, none, void) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize", wait, true, none, void) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, "cudaStreamSynchronize", wait, true, none, void) \
  X(RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, "cudaEventSynchronize", wait, true, none, void) \
  /* Driver copies: inside a runtime call they are that call; alone (a */ \
  /* library on the driver API) they are copies of their own. */ \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD", copy, true, bytes_h2d, cuMemcpyHtoD_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", copy, true, bytes_h2d, cuMemcpyHtoD_v2_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH", copy, true, bytes_d2h, cuMemcpyDtoH_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", copy, true, bytes_d2h, cuMemcpyDtoH_v2_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, "cuMemcpyDtoD", copy, true, bytes_d2d, cuMemcpyDtoD_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", copy, true, bytes_d2d, cuMemcpyDtoD_v2_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", copy, false, bytes_h2d, cuMemcpyHtoDAsync_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", copy, false, bytes_h2d, cuMemcpyHtoDAsync_v2_ptsz_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", copy, false, bytes_d2h, cuMemcpyDtoHAsync_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", copy, false, bytes_d2h, cuMemcpyDtoHAsync_v2_ptsz_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", copy, false, bytes_d2d, cuMemcpyDtoDAsync_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", copy, false, bytes_d2d, cuMemcpyDtoDAsync_v2_ptsz_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy, "cuMemcpy", copy, true, unified, cuMemcpy_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds, "cuMemcpy", copy, true, unified, cuMemcpy_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, "cuMemcpyAsync", copy, false, unified, cuMemcpyAsync_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, "cuMemcpyAsync", copy, false, unified, cuMemcpyAsync_ptsz_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, "cuMemcpyPeer", copy, true, bytes_d2d, cuMemcpyPeer_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync, "cuMemcpyPeerAsync", copy, false, bytes_d2d, cuMemcpyPeerAsync_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2, "cuMemcpy2D", copy, true, driver_2d, cuMemcpy2D_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2_ptds, "cuMemcpy2D", copy, true, driver_2d, cuMemcpy2D_v2_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2, "cuMemcpy2DUnaligned", copy, true, driver_2d, cuMemcpy2DUnaligned_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", copy, false, driver_2d, cuMemcpy2DAsync_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", copy, false, driver_2d, cuMemcpy2DAsync_v2_ptsz_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2, "cuMemcpy3D", copy, true, driver_3d, cuMemcpy3D_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2_ptds, "cuMemcpy3D", copy, true, driver_3d, cuMemcpy3D_v2_ptds_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", copy, false, driver_3d, cuMemcpy3DAsync_v2_params) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync", copy, false, driver_3d, cuMemcpy3DAsync_v2_ptsz_params) \
  /* Driver prefetches and waits. */ \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync, "cuMemPrefetchAsync", prefetch, false, prefetch_to_device, PrefetchToDevice) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2, "cuMemPrefetchAsync", prefetch, false, prefetch_to_location, PrefetchToLocation) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", wait, true, none, void) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "cuStreamSynchronize", wait, true, none, void) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, "cuStreamSynchronize", wait, true, none, void) \
  X(DRIVER, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, "cuEventSynchronize", wait, true, none, void)
// clang-format on

#endif
