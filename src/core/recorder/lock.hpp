#ifndef CUNUMPY_SRC_RECORDER_LOCK_HPP
#define CUNUMPY_SRC_RECORDER_LOCK_HPP

#include <atomic>
#include <mutex>
#include <thread>

namespace cunumpy::Impl {

/// The recorder's lock. Held for a few tens of nanoseconds per event, so a
/// spin lock (one atomic exchange, a plain store to release) rather than a
/// futex-based std::mutex; a waiter that spins too long yields its core, as
/// a report being written can hold the lock for milliseconds.
class RecorderMutex {
public:
  void lock() noexcept {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire))
        return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 100)
          pause();
        else
          std::this_thread::yield();
        ++spins;
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<bool> locked_{false};
};

/// Proof that the recorder's mutex is held. Everything the mutex guards
/// (the string and site tables, the sinks and their state) is reached
/// through functions that take a `const RecorderLock&`, so the compiler
/// checks what would otherwise be a comment ("with the mutex held").
class RecorderLock {
public:
  explicit RecorderLock(RecorderMutex& mutex) : lock_(mutex) {}
  RecorderLock(RecorderLock&&) noexcept = default;
  RecorderLock& operator=(RecorderLock&&) = delete;
  RecorderLock(const RecorderLock&) = delete;
  RecorderLock& operator=(const RecorderLock&) = delete;

private:
  std::unique_lock<RecorderMutex> lock_;
};

} // namespace cunumpy::Impl

#endif
