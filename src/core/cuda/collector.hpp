#ifndef CUNUMPY_SRC_CUDA_COLLECTOR_HPP
#define CUNUMPY_SRC_CUDA_COLLECTOR_HPP

// The CUPTI collector: CUDA's own record of the process, fed to the CUDA
// view (cuda_view.hpp). cupti_collector.cpp on builds where CMake found the
// CUDA toolkit's CUPTI headers, no_cupti.cpp elsewhere.

namespace cunumpy::Impl {
class Recorder;
}

namespace cunumpy::Impl::cuda {

/// Starts collecting into `recorder`, once per process, whoever asks first
/// (the in-process hooks, the plugin): binds the CUDA view to it, loads
/// libcupti, subscribes, and enables the API callbacks and the activity records
/// cunumpy needs. Unless CUNUMPY_CUPTI=0, the build has no CUDA toolkit, the
/// machine no CUDA driver, libcupti cannot be loaded or another CUPTI user
/// holds CUPTI: then the CUDA view says why (and, for the last two, one line on
/// stderr). Never throws.
void start_collector(Recorder& recorder) noexcept;

/// True in builds with the CUPTI collector (cupti_collector.cpp).
extern const bool collector_built;

} // namespace cunumpy::Impl::cuda

#endif
