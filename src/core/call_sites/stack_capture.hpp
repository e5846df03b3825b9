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

/// What a walk the unwinder keeps for replays holds for the caller of
/// capture_stack (see WalkMemo); part of the kept walk.
struct WalkHead {
  std::uint64_t serial; ///< changes with every walk kept there
  std::uint32_t memo;   ///< the caller's word
};

/// A word kept with a walk the unwinder keeps for replays, for the caller
/// of capture_stack: the recorder keeps the site id of the frames there, so
/// that an event made again from the same line needs no lookup. Reads 0
/// once the walk is replaced, or when no walk is kept (libgcc's unwinder).
/// When a capture returns with a memo that reads non-zero, it wrote only
/// frames[0]: the frames are those the memo was set for. The calling
/// thread's only, until it ends.
class WalkMemo {
public:
  WalkMemo() = default;
  explicit WalkMemo(WalkHead* head) noexcept
      : head_(head), expected_(head->serial) {}

  std::uint32_t get() const noexcept { return valid() ? head_->memo : 0; }
  void set(std::uint32_t value) const noexcept {
    if (valid())
      head_->memo = value;
  }

private:
  bool valid() const noexcept {
    return head_ != nullptr && head_->serial == expected_;
  }
  WalkHead* head_ = nullptr;
  std::uint64_t expected_ = 0;
};

/// Captures at most `depth` return addresses of the calling thread into
/// `frames` and returns how many; frames[0] lies in this function. On
/// x86-64 Linux the frame rules read from .eh_frame are cached per thread
/// and address, so a frame costs a few nanoseconds, and a walk from a stack
/// that still holds the return addresses of an earlier one replays it; a
/// frame the cache cannot step (and other platforms) goes through
/// `_Unwind_Backtrace`, about 80 ns a frame.
int capture_stack(void** frames, int depth, CaptureOptions options = {},
                  WalkMemo* memo = nullptr) noexcept;

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

/// The fork handler's: holds the lock that rebuilding the table of modules
/// takes, so that a child never inherits it held; and releases it.
void lock_stack_capture_for_fork() noexcept;
void unlock_stack_capture_after_fork() noexcept;

} // namespace cunumpy::Impl

#endif
