#ifndef CUNUMPY_SRC_RECORDER_LOCK_HPP
#define CUNUMPY_SRC_RECORDER_LOCK_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <pthread.h>
#include <string>
#include <string_view>
#include <thread>

namespace cunumpy::profiling {
struct DeviceStatus;
}

namespace cunumpy::Impl {

/// The recorder's lock. Held for a few tens of nanoseconds per event, so a
/// spin lock (one compare-and-swap, a plain store to release) rather than a
/// futex-based std::mutex; a waiter that spins too long yields its core, as
/// a report being written can hold the lock for milliseconds. It knows its
/// holder: a signal handler that interrupts it and ends the process must
/// not wait for it (held_by_this_thread).
class RecorderMutex {
public:
  void lock() noexcept {
    const std::uintptr_t self = this_thread();
    for (int spins = 0;; ++spins) {
      std::uintptr_t none = 0;
      // Taken and owned in one step: a signal handler can never find it
      // taken by its own thread without knowing so.
      if (owner_.compare_exchange_strong(none, self, std::memory_order_acquire,
                                         std::memory_order_relaxed))
        return;
      while (owner_.load(std::memory_order_relaxed) != 0) {
        if (spins < 100)
          pause();
        else
          std::this_thread::yield();
        ++spins;
      }
    }
  }
  void unlock() noexcept { owner_.store(0, std::memory_order_release); }
  /// The calling thread holds the lock: it can only be asking from a signal
  /// handler that interrupted it, and the lock will not be released.
  bool held_by_this_thread() const noexcept {
    return owner_.load(std::memory_order_relaxed) == this_thread();
  }

private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  /// pthread_self() as a number, never 0 (glibc: the thread's address).
  static std::uintptr_t this_thread() noexcept {
    static_assert(sizeof(pthread_t) <= sizeof(std::uintptr_t),
                  "a thread's id fits in the lock's word");
    const pthread_t self = ::pthread_self();
    std::uintptr_t id = 0;
    __builtin_memcpy(&id, &self, sizeof self);
    return id | 1u; // never 0, whatever the id
  }
  std::atomic<std::uintptr_t> owner_{0}; ///< 0: free
};

class Recorder;
class StringTable;
class SiteTable;
class RegionTree;
struct OpenRegions;
struct Incident;
struct RecorderSettings;

/// Proof that the recorder's mutex is held, and the way to what it guards:
/// the names, call sites, regions and incidents that sinks read. Everything
/// the mutex guards (those tables, the sinks and their state) is reached
/// through functions that take a `const RecorderLock&`, so the compiler
/// checks what would otherwise be a comment ("with the mutex held"), and
/// consumers are handed their context instead of fetching a singleton.
class RecorderLock {
public:
  RecorderLock(Recorder& recorder, RecorderMutex& mutex)
      : recorder_(&recorder), lock_(mutex) {}
  RecorderLock(RecorderLock&&) noexcept = default;
  RecorderLock& operator=(RecorderLock&&) = delete;
  RecorderLock(const RecorderLock&) = delete;
  RecorderLock& operator=(const RecorderLock&) = delete;

  /// The recorder whose mutex is held.
  Recorder& recorder() const noexcept { return *recorder_; }
  /// Interned labels, descriptions, region and space names.
  StringTable& strings() const;
  /// Call sites by id.
  SiteTable& sites() const;
  /// The one tree of region paths.
  const RegionTree& regions() const;
  /// The regions open on the thread of index `thread`, outermost first.
  OpenRegions open_regions(std::uint32_t thread) const;
  /// Region calls begun so far (Recorder::calls_begun).
  std::uint64_t calls_begun() const;
  /// An incident told to the sinks as a loss (Recorder::open_incident).
  const Incident& incident(std::uint32_t id) const;
  /// "integrate/output", the path of a node.
  std::string path(std::uint32_t node) const;
  /// Whether the program has a device, and its backends.
  profiling::DeviceStatus device_status() const;
  /// The name of a source's id (RawEvent::origin): "kokkos", "cuda".
  std::string_view source_name(std::uint8_t id) const;
  /// EventSource::migrations_unseen of every source (CUDA's record), ""
  /// when none says anything.
  std::string migrations_unseen() const;
  /// What the environment set (CUNUMPY_ALLOW_NO_DEVICE, ...).
  const RecorderSettings& settings() const;

private:
  Recorder* recorder_;
  std::unique_lock<RecorderMutex> lock_;
};

} // namespace cunumpy::Impl

#endif
