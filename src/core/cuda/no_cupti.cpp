// A build without the CUDA toolkit: CUDA's record is not built, and the
// CUDA view says so (in the JSON report; text reports leave it out).

#include "cuda/collector.hpp"
#include "cuda/cuda_view.hpp"

namespace cunumpy::Impl::cuda {

const bool collector_built = false;

void start_collector(Recorder& recorder) noexcept {
  try {
    CudaView::of(recorder).set_status(
        profiling::CudaViewState::not_built,
        "cunumpy was built without the CUDA toolkit (CMake found no CUPTI)");
  } catch (...) {
  }
}

} // namespace cunumpy::Impl::cuda
