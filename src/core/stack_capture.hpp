#ifndef CUNUMPY_SRC_STACK_CAPTURE_HPP
#define CUNUMPY_SRC_STACK_CAPTURE_HPP

#include <cstdint>

namespace cunumpy::Impl {

struct CaptureOptions {
  /// Stop a few frames after the first frame outside Kokkos, cunumpy and
  /// the system libraries: the caller is there.
  bool stop_after_caller = true;
  /// Use libgcc's unwinder even where the cached one works (tests compare
  /// the two).
  bool portable_only = false;
};

/// Captures at most `depth` return addresses of the calling thread into
/// `frames` and returns how many; frames[0] lies in this function. On
/// x86-64 Linux the frame rules read from .eh_frame are cached per thread
/// and address, so a frame costs a few nanoseconds, and a walk from a stack
/// that still holds the return addresses of an earlier one replays it; a
/// frame the cache cannot step (and other platforms) goes through
/// `_Unwind_Backtrace`, about 80 ns a frame.
int capture_stack(void** frames, int depth,
                  CaptureOptions options = {}) noexcept;

struct StackCaptureStatistics {
  std::uint64_t fallbacks; ///< captures libgcc's unwinder made (all threads)
  std::uint64_t replays;   ///< captures that replayed an earlier walk
  /// captures at the stack pointer of an earlier walk whose return
  /// addresses had changed, so walked
  std::uint64_t refused_replays;
};

/// Counts since the start of the process, for tests: the fallbacks of all
/// threads, the replays of the calling thread.
StackCaptureStatistics stack_capture_statistics() noexcept;

} // namespace cunumpy::Impl

#endif
