#ifndef CUNUMPY_SRC_RECORDER_LOCK_HPP
#define CUNUMPY_SRC_RECORDER_LOCK_HPP

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace cunumpy::profiling {
struct DeviceStatus;
}

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

class Recorder;
class StringTable;
class SiteTable;
class RegionTree;
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

  /// Interned labels, descriptions, region and space names.
  StringTable& strings() const;
  /// Call sites by id.
  SiteTable& sites() const;
  /// The one tree of region paths.
  const RegionTree& regions() const;
  /// An incident told to the sinks as a loss (Recorder::open_incident).
  const Incident& incident(std::uint32_t id) const;
  /// "integrate/output", the path of a node.
  std::string path(std::uint32_t node) const;
  /// Whether the program has a device, and its backends.
  profiling::DeviceStatus device_status() const;
  /// LateSource::migrations_unseen of CUDA's record, "" without one.
  std::string migrations_unseen() const;
  /// What the environment set (CUNUMPY_ALLOW_NO_DEVICE, ...).
  const RecorderSettings& settings() const;

private:
  Recorder* recorder_;
  std::unique_lock<RecorderMutex> lock_;
};

} // namespace cunumpy::Impl

#endif
