#ifndef CUNUMPY_SRC_STACK_CAPTURE_HPP
#define CUNUMPY_SRC_STACK_CAPTURE_HPP

namespace cunumpy::Impl {

/// Captures at most `depth` return addresses of the calling thread into
/// `frames` and returns how many. Unwinding stops early, a few frames after
/// the first frame outside Kokkos, cunumpy and the system libraries: the
/// caller is there, and unwinding costs about 80 ns a frame.
int capture_stack(void** frames, int depth) noexcept;

} // namespace cunumpy::Impl

#endif
