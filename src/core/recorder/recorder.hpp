#ifndef CUNUMPY_SRC_RECORDER_HPP
#define CUNUMPY_SRC_RECORDER_HPP

// The recorder: one per process. Kokkos Tools events (from the in-process
// hooks or from the plugin) and cunumpy's own calls arrive through the
// functions of namespace `feed`; each becomes a record (a RawEvent, a region
// push or pop, a DualView event) queued on its thread without a lock. The
// queued records reach every attached sink (counters, budgets, the plugin's
// report) under one mutex, in time order, whenever the sinks are read
// (lock_recorder), attached or detached, or a thread's queue is full.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <cunumpy/event.hpp>

#include "call_sites/call_sites.hpp"
#include "recorder/string_table.hpp"

namespace cunumpy::Impl {

/// An event as the recorder stores it: strings and call sites are ids.
struct RawEvent {
  EventKind kind = EventKind::to_host;
  bool blocking = true;
  bool implicit = false;
  std::uint32_t thread = 0;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;      ///< SiteTable id
  std::uint32_t what = 0;      ///< StringTable id of the description
  std::uint32_t label = 0;     ///< StringTable id
  std::uint32_t src_space = 0; ///< StringTable id
  std::uint32_t dst_space = 0; ///< StringTable id
  double start = 0.0;          ///< seconds since the recorder started
  double duration = 0.0;

  bool async() const noexcept { return is_copy(kind) && !blocking; }
};

/// A DualView sync or modify, with the copy a sync caused (if any).
struct DualViewEvent {
  std::uint32_t label = 0;
  const void* pointer = nullptr;
  /// A sync that copied: the data of the copy's source (the other side of
  /// the DualView), to pair the sync with the modify it resolves.
  const void* source = nullptr;
  bool sync = true;    ///< sync (else modify)
  bool device = true;  ///< sync to / modify on the device side
  bool copied = false; ///< a sync that copied
  EventKind copy_kind = EventKind::to_device;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;
  double time = 0.0;
};

struct RegionPush {
  std::uint32_t name = 0; ///< StringTable id
  double time = 0.0;
};

struct RegionPop {
  double time = 0.0;
};

/// What a thread queues for the sinks: 64 bytes.
using PendingRecord =
    std::variant<RawEvent, RegionPush, RegionPop, DualViewEvent>;

/// Receives the recorder's events. Every call is made with the recorder's
/// mutex held; a sink must not call back into the recorder's locking API.
class EventSink {
public:
  virtual ~EventSink() = default;
  virtual void on_event(const RawEvent& event) = 0;
  virtual void on_region_push(std::uint32_t /*name*/, double /*time*/) {}
  virtual void on_region_pop(double /*time*/) {}
  virtual void on_dual_view(const DualViewEvent& /*event*/) {}
};

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
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
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

/// Converts a raw event into the public Event (resolving ids). Needs the
/// recorder's mutex held.
Event to_public(const RawEvent& event);

class Recorder {
public:
  static Recorder& instance();

  RecorderMutex& mutex() noexcept { return mutex_; }

  /// Sinks receive every event while attached; attaching one twice counts
  /// once (the second attach only raises a reference count).
  void attach(EventSink* sink);
  void detach(EventSink* sink);
  bool has_sinks() const noexcept {
    return sink_count_.load(std::memory_order_acquire) > 0;
  }

  // With the mutex held:
  StringTable& strings() noexcept { return strings_; }
  SiteTable& sites() noexcept { return sites_; }
  /// Gives every record queued by any thread to the sinks, in time order
  /// (each thread's in the order it queued them).
  void flush();

  /// Queues a record (RawEvent, RegionPush, RegionPop or DualViewEvent) on
  /// the calling thread, for the sinks attached when it is flushed: those
  /// attached now, as attaching and detaching flush first. Called without
  /// the mutex; flushes when the queue is full.
  template <class Record> void post(const Record& record);

  /// Seconds since the recorder started.
  double now() const noexcept;

  /// Stack frames captured per event without a cunumpy call site
  /// (CUNUMPY_BACKTRACE; 0 turns capture off).
  int backtrace_depth() const noexcept {
    return backtrace_depth_.load(std::memory_order_relaxed);
  }
  void set_backtrace_depth(int depth) noexcept;

  /// Set by the plugin: Kokkos feeds the recorder through it, so the
  /// in-process hooks must not be installed as well.
  void set_fed_by_plugin(bool value) noexcept { fed_by_plugin_ = value; }
  bool fed_by_plugin() const noexcept { return fed_by_plugin_; }

  /// A front end's guess at the caller when no cunumpy call is active (the
  /// Python module: the current Python line). Called without the mutex, on
  /// the thread of the event; returns false when it knows nothing.
  using SiteProvider = bool (*)(std::string& file, int& line,
                                std::string& function);
  void set_site_provider(SiteProvider provider) noexcept {
    site_provider_.store(provider, std::memory_order_release);
  }
  SiteProvider site_provider() const noexcept {
    return site_provider_.load(std::memory_order_acquire);
  }

  /// A thread's queue of records. Appended to by its thread without a lock,
  /// drained under the mutex by whoever flushes.
  class Queue;
  /// A thread's queue takes part in flushes from its first record to its
  /// thread's end, when its last records are flushed. Without the mutex.
  void add_queue(Queue* queue);
  void remove_queue(Queue* queue);

private:
  Recorder();
  void dispatch(const PendingRecord& record);

  RecorderMutex mutex_;
  std::vector<std::pair<EventSink*, int>> sinks_;
  std::vector<Queue*> queues_;         ///< of the threads that posted
  std::vector<std::uint64_t> cursors_; ///< flush's scratch space
  std::atomic<int> sink_count_{0};
  StringTable strings_;
  SiteTable sites_;
  std::atomic<int> backtrace_depth_;
  std::atomic<SiteProvider> site_provider_{nullptr};
  bool fed_by_plugin_ = false;
};

/// The entry points of Kokkos Tools events, shared by the in-process hooks
/// and the plugin. None of them throws. Space names are those of Kokkos'
/// SpaceHandle: 64 readable bytes, terminated unless 64 characters long.
namespace feed {
void begin_deep_copy(const char* dst_space, const char* dst_label,
                     const void* dst_ptr, const char* src_space,
                     const char* src_label, const void* src_ptr,
                     std::uint64_t size) noexcept;
void end_deep_copy() noexcept;
void begin_fence(const char* name, std::uint32_t device_id) noexcept;
void end_fence() noexcept;
void push_region(const char* name) noexcept;
void pop_region() noexcept;
void dual_view_sync(const char* label, const void* ptr,
                    bool to_device) noexcept;
void dual_view_modify(const char* label, const void* ptr,
                      bool on_device) noexcept;
} // namespace feed

/// Holds the recorder's lock until the returned lock ends, with every
/// queued record given to the sinks: what readers of a sink's state take.
inline std::unique_lock<RecorderMutex> lock_recorder() {
  Recorder& recorder = Recorder::instance();
  std::unique_lock<RecorderMutex> lock(recorder.mutex());
  recorder.flush();
  return lock;
}

/// Number of fence events seen on the calling thread (for SyncScope).
std::uint64_t thread_fence_count() noexcept;

/// The small integer naming the calling thread in events (RawEvent::thread).
std::uint32_t thread_index() noexcept;

/// Changes whenever a device space is registered (invalidates caches).
extern std::atomic<std::uint64_t> device_space_generation_counter;
inline std::uint64_t device_space_generation() noexcept {
  return device_space_generation_counter.load(std::memory_order_acquire);
}

/// Whether cunumpy knows the memory space `name` by name: a registered
/// device, or a name of Kokkos' host or device spaces. space_side takes an
/// unknown name for a host space.
bool is_known_space(std::string_view name);

/// Copies the recorder took for host-to-host because a space of the pair
/// was unknown: most likely a device space missing from
/// CUNUMPY_DEVICE_SPACES, whose copies then count as no transfer.
struct UnknownSpaceCopies {
  std::vector<std::string> names; ///< the unknown spaces, in order seen
  std::uint64_t copies = 0;
};
UnknownSpaceCopies unknown_space_copies();
/// Called by the recorder: `name` is an unknown space of a host-to-host
/// pair (once per space and thread), and a copy between such spaces.
void note_unknown_space(std::string_view name);
void count_unknown_space_copy() noexcept;

} // namespace cunumpy::Impl

#endif
