#ifndef CUNUMPY_SRC_RECORDER_RECORDER_HPP
#define CUNUMPY_SRC_RECORDER_RECORDER_HPP

// The recorder: one per process. Kokkos Tools events (src/core/tools) and
// cunumpy's own calls arrive through the functions of namespace `record`
// (record_events.hpp); each becomes a record given at once, under one mutex,
// to every attached sink (counters, budgets, the plugin's report), placed
// in the one tree of region paths (region_tree.hpp): events reach the sinks
// in the order they happened, and no thread ever stops to catch up. Sources
// whose events come later (event_source.hpp: CUDA's record) give them at
// every read. Events the recorder could not deliver are counted and reach
// the sinks as losses at the next read, so that no reader takes a short
// count for a complete one.

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cunumpy/budget_snapshot.hpp>
#include <cunumpy/impl/api_scope.hpp>

#include "call_sites/call_sites.hpp"
#include "recorder/clock.hpp"
#include "recorder/event_source.hpp"
#include "recorder/kokkos_rules.hpp"
#include "recorder/lock.hpp"
#include "recorder/losses.hpp"
#include "recorder/records.hpp"
#include "recorder/region_timeline.hpp"
#include "recorder/spaces.hpp"
#include "recorder/string_table.hpp"
#include "support/variables.hpp"

namespace cunumpy {
struct Event;
}

namespace cunumpy::Impl {

struct ThreadState;

/// Converts a raw event into the public Event (resolving ids).
Event to_public(const RawEvent& event, const RecorderLock& lock);

/// What the recorder takes from the environment, read in one place, once,
/// when the recorder is made.
struct RecorderSettings {
  /// CUNUMPY_BACKTRACE: stack frames per event without a cunumpy call site.
  int backtrace_depth = 32;
  /// CUNUMPY_DEVICE_SPACES="FakeDevice,Other": more device space names.
  std::vector<std::string> device_spaces;
  /// CUNUMPY_DEBUG_SYNC=1: the host waits after every kernel.
  bool debug_sync = false;
  /// CUNUMPY_CUPTI=0 turns CUDA's own record of the process off.
  bool cupti = true;
  /// CUNUMPY_ALLOW_NO_DEVICE=1: a budget of a program without a device
  /// memory space passes, unchecked, instead of failing (a CPU-only CI job
  /// that runs the GPU job's rule file).
  bool allow_no_device = false;
  /// Which process of which run (rank, job size, run id, CUNUMPY_LABEL):
  /// every report of the recorder (the plugin's, a TransferBudget's) and
  /// the plugin's paths say the same.
  RunIdentity run;

  static RecorderSettings from_environment();
};

class alignas(64) Recorder {
public:
  /// The process' recorder: the one Kokkos' and CUDA's callbacks, which
  /// carry no context, feed (tools::connect hands it to the event path).
  static Recorder& instance();

  /// A recorder of its own (tests make several): nothing recorded in one
  /// reaches another. Threads that recorded in it other than the one that
  /// ends it must have ended before it ends.
  explicit Recorder(const RecorderSettings& settings = {});
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// The memory space names cunumpy knows as devices.
  SpaceRegistry& spaces() noexcept { return spaces_; }

  /// Whether cunumpy's in-process hooks are installed (or the plugin feeds
  /// the recorder instead): tools/install.cpp's, kept here with the rest
  /// of the process-wide state.
  std::atomic<bool>& hooks_installed() noexcept { return hooks_installed_; }

  /// Takes every lock an event or a read takes, in the order they nest
  /// (the fork handler's); releases them (in the parent and the child).
  void lock_for_fork() noexcept;
  void unlock_after_fork() noexcept;

  /// Holds the mutex (see also lock_recorder, for readers).
  RecorderLock lock() { return RecorderLock(*this, mutex_); }
  /// The calling thread holds the lock: a signal handler interrupted it
  /// inside cunumpy, and what the lock guards cannot be read (nor the lock
  /// taken) on this thread again. An exit from that handler writes no
  /// report and says so.
  bool lock_held_by_this_thread() const noexcept {
    return mutex_.held_by_this_thread();
  }

  /// Sinks receive every record while attached; attaching one twice counts
  /// once (the second attach only raises a reference count).
  void attach(EventSink* sink);
  void detach(EventSink* sink);
  bool has_sinks() const noexcept {
    return sink_count_.load(std::memory_order_acquire) > 0;
  }

  /// Gives a record to every attached sink, now; a sink that cannot take
  /// it loses it, counted. With the mutex: the caller interns what the
  /// record names under the same lock.
  void deliver(const RawEvent& event, const RecorderLock& lock) noexcept;
  void deliver(const DualViewEvent& event, const RecorderLock& lock) noexcept;
  void deliver(const KernelSpan& kernel, const RecorderLock& lock) noexcept;
  void deliver(const Allocation& allocation, const RecorderLock& lock) noexcept;

  /// The tree of region paths, and the regions open on each thread.
  const RegionTree& regions(const RecorderLock&) const noexcept {
    return regions_;
  }
  /// Where an event of `thread` happens now: the innermost region open on
  /// it; on a thread inside none of its own, the innermost region open on
  /// the other threads, so that a helper or pool thread's copies count in
  /// the phase the program is in, whichever thread opened it. When other
  /// threads are in different regions, where such an event belongs is not
  /// known: it counts in one of them (the main thread's first) and a loss
  /// (LossReason::placement_unknown) makes the verdict incomplete. Without
  /// the mutex: read by the thread itself at the start of its event.
  Place place(const ThreadState& thread) noexcept;
  /// The calling thread becomes the main thread (named so in reports, and
  /// where CUDA's records without a thread count). No ThreadState is passed: a
  /// library built with hidden visibility (the plugin) has a thread state of
  /// its own (support/fast_thread_local.hpp), never the one events use.
  void set_main_thread();

  /// What the program has of devices, as seen so far: a memory space that
  /// is a device's in a copy or an allocation, a kernel or fence of a
  /// device execution space (Kokkos 3.5 on encode its type in the device
  /// id), the default execution space a front end names. Without them no
  /// copy can be a transfer, and a budget checks nothing.
  void note_device_space() noexcept {
    device_space_seen_.store(true, std::memory_order_relaxed);
  }
  bool device_space_seen() const noexcept {
    return device_space_seen_.load(std::memory_order_relaxed);
  }
  void note_execution_space(std::uint32_t device_id) noexcept {
    if (!kokkos().reports_fences())
      return; // Kokkos 3.4's device ids name no execution space
    const std::uint32_t bit = 1u << ((device_id >> 24) & 31u);
    if ((execution_spaces_.load(std::memory_order_relaxed) & bit) == 0)
      execution_spaces_.fetch_or(bit, std::memory_order_relaxed);
  }
  void set_default_device(const std::string& name);
  profiling::DeviceStatus device_status(const RecorderLock& lock) const;
  /// A Kokkos region, or an explicit phase (`token` != 0, from
  /// next_phase_token), opens on `thread`.
  void push_region(ThreadState& thread, std::uint32_t name, std::uint64_t token,
                   double time, const RecorderLock& lock);
  /// The innermost Kokkos region open on `thread` closes (explicit phases
  /// opened inside it stay open). With none open, the pop is unbalanced
  /// (unbalanced_pops): `module` (a StringTable id, 0 when not known) is
  /// the module of the first frame of its stack outside cunumpy, Kokkos and
  /// the runtime.
  void pop_region(ThreadState& thread, double time, std::uint32_t module,
                  const RecorderLock& lock);
  /// Pops that found no region open, by the module that made them
  /// (StringTable id, 0: not known or beyond the first 16), in the order
  /// first seen.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>>&
  unbalanced_pops(const RecorderLock&) const noexcept {
    return unbalanced_pops_;
  }
  /// The explicit phase of `token` closes, and what was left open inside it.
  void close_phase(ThreadState& thread, std::uint64_t token, double time,
                   const RecorderLock& lock);
  /// Region calls begun so far (OpenRegion::call numbers them from 1): a
  /// call open now was open when this was n if its number is at most n.
  std::uint64_t calls_begun(const RecorderLock&) const noexcept {
    return next_call_ - 1;
  }
  std::uint64_t next_phase_token() noexcept {
    return next_phase_token_.fetch_add(1, std::memory_order_relaxed);
  }
  /// "integrate/output", the path of a node.
  std::string path(std::uint32_t node, const RecorderLock& lock) const;
  /// A region still open, and the index of the thread that opened it.
  struct StillOpen {
    OpenRegion region;
    std::uint32_t thread = 0;
    bool main = false;  ///< the main thread (see set_main_thread)
    bool ended = false; ///< the thread ended without popping it
  };
  /// The regions still open on every thread, outermost first, then those
  /// of threads that ended.
  std::vector<StillOpen> open_regions(const RecorderLock& lock) const;
  /// The regions open on the thread of index `thread` (none once it ended):
  /// what consumers read of a thread's regions, kept nowhere else.
  OpenRegions open_regions(std::uint32_t thread,
                           const RecorderLock& lock) const noexcept;

  StringTable& strings(const RecorderLock&) noexcept { return strings_; }
  SiteTable& sites(const RecorderLock&) noexcept { return sites_; }

  /// Gives the sinks what waited for a read: the late events of every
  /// source (EventSources::add), and the losses counted since the last time.
  void catch_up(const RecorderLock& lock);

  /// Seconds since the recorder started.
  double now() const noexcept { return clock_.now(); }

  /// The Kokkos whose events the recorder interprets.
  KokkosTraits kokkos() const noexcept {
    return {kokkos_interface_.load(std::memory_order_relaxed)};
  }
  /// Set by the front end that connects cunumpy to Kokkos (the in-process
  /// hooks, the plugin) before Kokkos' events reach the recorder.
  void set_kokkos_interface(std::uint64_t version) noexcept {
    kokkos_interface_.store(version, std::memory_order_relaxed);
  }

  /// Stack frames captured per event without a cunumpy call site
  /// (CUNUMPY_BACKTRACE; 0 turns capture off).
  int backtrace_depth() const noexcept {
    return backtrace_depth_.load(std::memory_order_relaxed);
  }
  void set_backtrace_depth(int depth) noexcept;

  /// Set by the plugin: Kokkos feeds the recorder through it, so the
  /// in-process hooks must not be installed as well.
  void set_fed_by_plugin(bool value) noexcept {
    fed_by_plugin_.store(value, std::memory_order_release);
  }
  bool fed_by_plugin() const noexcept {
    return fed_by_plugin_.load(std::memory_order_acquire);
  }

  /// Debug-sync mode: after every kernel the host waits for the device (a
  /// fence made by cunumpy), and the wait is recorded as an implicit sync
  /// named after the kernel, at the kernel's line: which kernel a wait or a
  /// failure belongs to, as CUDA_LAUNCH_BLOCKING=1 shows. On while
  /// CUNUMPY_DEBUG_SYNC=1 or while a front end turned it on (nested).
  void debug_sync(bool on) noexcept {
    debug_sync_.fetch_add(on ? 1 : -1, std::memory_order_acq_rel);
  }
  bool debug_sync() const noexcept {
    return debug_sync_.load(std::memory_order_relaxed) > 0;
  }
  /// How the host waits for the device in debug-sync mode: Kokkos::fence
  /// in-process, the tool programming interface's fence for the plugin.
  using DeviceFence = void (*)();
  void set_device_fence(DeviceFence fence) noexcept {
    device_fence_.store(fence, std::memory_order_release);
  }
  DeviceFence device_fence() const noexcept {
    return device_fence_.load(std::memory_order_acquire);
  }

  /// Kernels are recorded (KernelSpan) while at least one sink wants them.
  void want_kernels(bool value) noexcept {
    kernel_wanted_.fetch_add(value ? 1 : -1, std::memory_order_acq_rel);
  }
  bool wants_kernels() const noexcept {
    return kernel_wanted_.load(std::memory_order_relaxed) > 0;
  }

  /// Allocations in host spaces are recorded, and the contents of copies
  /// hashed, while at least one attached sink wants them
  /// (EventSink::wants_allocations, wants_contents).
  bool wants_allocations() const noexcept {
    return allocations_wanted_.load(std::memory_order_relaxed) > 0;
  }
  bool wants_contents() const noexcept {
    return contents_wanted_.load(std::memory_order_relaxed) > 0;
  }

  /// A front end's guess at the caller when no cunumpy call is active (the
  /// Python module: the current Python line). Called without the mutex, on
  /// the thread of the event; returns false when it knows nothing.
  using SiteProvider = Impl::SiteProvider;
  void set_site_provider(SiteProvider provider) noexcept {
    site_provider_.store(provider, std::memory_order_release);
  }
  SiteProvider site_provider() const noexcept {
    return site_provider_.load(std::memory_order_acquire);
  }

  /// The settings read from the environment when the recorder was made.
  const RecorderSettings& settings() const noexcept { return settings_; }

  /// The sources of its events: their names (RawEvent::origin) and the
  /// sources of late events (CUDA's record) asked at every read.
  EventSources& sources() noexcept { return sources_; }
  const EventSources& sources() const noexcept { return sources_; }

  /// Run before every read of a sink (lock_recorder), without the mutex:
  /// the Kokkos Tools layer checks there that its callbacks are still the
  /// ones Kokkos calls.
  using ReadCheck = void (*)();
  void set_read_check(ReadCheck check) noexcept {
    read_check_.store(check, std::memory_order_release);
  }
  void before_read() noexcept;
  /// Symbolizes `stacks` (SiteTable::unsymbolized) under the symbolizer's
  /// mutex, not the recorder's: debug files are read, and no event waits
  /// for them. What it finds goes to the site table under the mutex; a
  /// stack whose symbolization throws stays unsymbolized. lock_recorder
  /// calls it.
  void symbolize(const std::vector<SiteTable::Stack>& stacks) noexcept;
  /// The calling thread is symbolizing: a signal handler interrupted it,
  /// and must not symbolize (nor wait for the symbolizer) again.
  bool symbolizing_on_this_thread() const noexcept {
    return symbolizer_mutex_.held_by_this_thread();
  }

  /// What it could not deliver: losses, counted without a lock or an
  /// allocation (code where recording itself failed counts them), told to
  /// the sinks attached at the next read (catch_up); incidents.
  Losses& losses() noexcept { return losses_; }
  /// An incident that may have cost events (their number unknown), told
  /// now to every attached sink, and with `standing` to every sink attached
  /// later too. Returns its id (never 0).
  std::uint32_t open_incident(std::string text, const RecorderLock& lock,
                              bool standing = false);
  void retract_incident(std::uint32_t id, std::string why,
                        const RecorderLock&) {
    losses_.retract(id, std::move(why));
  }
  const Incident& incident(std::uint32_t id, const RecorderLock&) const {
    return losses_.incident(id);
  }

  /// A thread takes part from its first event to its end (thread_state.cpp).
  void add_thread(ThreadState& thread);
  void remove_thread(ThreadState& thread);

private:
  template <class Record, class Give>
  void deliver_to_sinks(const Record& record, Give give) noexcept;
  void deliver_losses(const RecorderLock& lock) noexcept;
  /// Takes the innermost region off `thread`, and tells the sinks.
  void pop_top(ThreadState& thread, double time, const RecorderLock& lock);
  /// What the main thread's innermost region is, for the threads that read
  /// it without the mutex (place).
  void publish_main_place(const ThreadState& thread, double time) noexcept;
  /// After `thread`'s regions changed (or it ended): where the events of
  /// threads inside no region of their own go (place).
  void publish_shared_place(ThreadState& thread, bool ended = false) noexcept;
  /// With a source of late events: the timeline starts at the main
  /// thread's last change (once).
  void start_timeline() noexcept;

  // Read by every event, so kept together in the object's first two cache
  // lines (the object is aligned to a line): after a time step that streams
  // more than the caches, each line an event reads is a miss.
  Clock clock_;
  std::atomic<std::uint64_t> kokkos_interface_{0};
  std::atomic<int> sink_count_{0};
  std::atomic<int> backtrace_depth_;
  std::atomic<int> kernel_wanted_{0};
  std::atomic<int> debug_sync_{0};
  std::atomic<int> contents_wanted_{0};
  std::atomic<int> allocations_wanted_{0};
  std::atomic<SiteProvider> site_provider_{nullptr};
  std::atomic<DeviceFence> device_fence_{nullptr};
  EventSources sources_; ///< its first word (any()) read by allocations
  std::atomic<ThreadState*> main_thread_{nullptr};
  std::atomic<std::uint32_t> shared_node_{0};
  std::atomic<std::uint32_t> shared_thread_{0};
  std::atomic<std::uint64_t> shared_call_{0};
  std::atomic<bool> shared_ambiguous_{false};
  std::atomic<bool> device_space_seen_{false};
  std::atomic<std::uint32_t> execution_spaces_{0}; ///< bit: Kokkos' type

  alignas(64) RecorderMutex mutex_; // written by every lock: a line apart
  std::atomic<ReadCheck> read_check_{nullptr};
  std::atomic<bool> fed_by_plugin_{false};
  std::atomic<bool> hooks_installed_{false};
  RecorderSettings settings_;
  SpaceRegistry spaces_;
  std::vector<std::pair<EventSink*, int>> sinks_;
  std::vector<ThreadState*> threads_; ///< every thread that recorded
  mutable const ThreadState* last_read_ = nullptr; ///< open_regions(thread)
  /// What threads left open when they ended, by thread index.
  std::vector<std::pair<std::uint32_t, OpenRegion>> left_open_;
  static constexpr std::size_t max_left_open = 4096;
  std::size_t threads_in_regions_ = 0; ///< of threads_, with regions open
  RegionTree regions_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> unbalanced_pops_;
  std::uint64_t next_call_ = 1;
  std::string default_device_; ///< with the mutex
  /// The main thread's places over time, for late events; kept from the
  /// main thread's last change before a source of late events came.
  RegionTimeline main_timeline_{{}};
  std::pair<double, RegionTimeline::State> main_change_{
      -std::numeric_limits<double>::infinity(), {}};
  bool timeline_started_ = false;
  std::atomic<std::uint64_t> next_phase_token_{1};
  StringTable strings_;
  SiteTable sites_;
  /// Held while stacks are symbolized (symbolize), never with the mutex
  /// waiting on it: the recorder's mutex may be taken inside it, not the
  /// reverse.
  RecorderMutex symbolizer_mutex_;
  Symbolizer symbolizer_;             ///< with symbolizer_mutex_
  std::vector<RawEvent> late_events_; ///< catch_up's scratch space
  Losses losses_;
};

/// Holds the recorder's lock until the returned lock ends, with every
/// event made before given to the sinks (late ones too): what readers of a
/// sink's state take.
RecorderLock lock_recorder(Recorder& recorder);
/// lock_recorder of the library's recorder (library_recorder).
RecorderLock lock_recorder();

/// Number of fence events `recorder` recorded on the calling thread (for
/// SyncScope).
std::uint64_t thread_fence_count(const Recorder& recorder) noexcept;

/// The small integer naming the calling thread in events (RawEvent::thread).
std::uint32_t thread_index() noexcept;

/// Test hook: the next `count` allocations the recorder and its sinks make
/// on the recording path fail with std::bad_alloc, as when memory runs out.
void inject_allocation_failures(int count) noexcept;
/// Throws std::bad_alloc when a failure is injected (see above).
void allocation_point();

} // namespace cunumpy::Impl

#endif
