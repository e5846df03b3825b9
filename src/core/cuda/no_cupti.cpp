// A build without the CUDA toolkit: CUDA's record is off, and says why.

#include "cuda/collector.hpp"
#include "cuda/cuda_view.hpp"

namespace cunumpy::Impl::cuda {

void start_collector() noexcept {
  try {
    CudaView::instance().set_status(
        false, "cunumpy was built without the CUDA toolkit (CMake found no "
               "CUPTI), so it sees only the copies Kokkos reports");
  } catch (...) {
  }
}

} // namespace cunumpy::Impl::cuda
