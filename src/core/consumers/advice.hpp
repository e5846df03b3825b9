#ifndef CUNUMPY_SRC_CONSUMERS_ADVICE_HPP
#define CUNUMPY_SRC_CONSUMERS_ADVICE_HPP

// Advice: what the recorded events of a counter or budget say about the
// copies worth changing. AdviceState is fed the records its owner receives
// (a TransferCounter's or a TransferBudget's, under the recorder's mutex)
// and keeps only what the rules need: per call site and region, counts per
// call, sizes, time, copies into fresh buffers and of unchanged contents;
// the copies of one allocation there and back; DualView syncs. The rules
// run when findings are asked for, with the thresholds given then.

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <cunumpy/advice.hpp>

#include "recorder/records.hpp"

namespace cunumpy::Impl {

/// Host memory as a copy's host side is named: page-locked
/// (CudaHostPinned, HIPHostPinned, SharedHostPinned, SYCLHostUSM),
/// pageable (Host, HBW), or a space cunumpy cannot tell.
enum class HostMemory : std::uint8_t { pageable, page_locked, unknown };
HostMemory host_memory(std::string_view space) noexcept;

class AdviceState {
public:
  /// `contents`: copies carry Content (EventSink::wants_contents).
  explicit AdviceState(bool contents) : contents_(contents) {}

  void on_event(const RawEvent& event, const RecorderLock& lock);
  /// A region or explicit phase opens on a thread; `counted`: its call
  /// counts (a budget that is started).
  void on_region_push(const RegionPush& push, bool counted,
                      const RecorderLock& lock);
  void on_region_pop(const RegionPop& pop);
  void on_dual_view(const DualViewEvent& event, const RecorderLock& lock);
  void on_allocation(const Allocation& allocation);
  void clear();

  bool contents() const noexcept { return contents_; }

  /// Whether a host space (a StringTable id) is page-locked, from its name,
  /// learnt once per id.
  HostMemory space_memory(std::uint32_t id) const;

  /// The findings of every rule under `options`, largest estimated saving
  /// first.
  std::vector<profiling::Finding>
  findings(const profiling::AdviceOptions& options,
           const RecorderLock& lock) const;

  /// Pointers followed for round trips, allocations and DualViews: a
  /// program making ever new buffers forgets the oldest beyond this.
  static constexpr std::size_t max_tracked = 1u << 14;

  /// A region call: the recorder's serial number of the call and the node
  /// it counts in (RegionTree::Node::call_node: a region inside the region
  /// or phase of its own name is the same call, of the same node, as in a
  /// budget); node 0 outside every region.
  struct Frame {
    std::uint32_t node = 0;
    std::uint64_t call = 0;
  };
  /// Events of one kind at one call site in one region, of one size class
  /// (sizes within a factor of two) and one host space.
  struct SiteKey {
    std::uint32_t node = 0;
    std::uint32_t site = 0;
    std::uint32_t description = 0; ///< syncs only (a wait's name)
    std::uint32_t host_space = 0;  ///< copies only
    EventKind kind = EventKind::to_host;
    std::uint8_t flags = 0; ///< blocking, implicit, scalar
    std::uint8_t size_class = 0;
    bool operator==(const SiteKey& other) const noexcept;
  };
  struct SiteKeyHash {
    std::size_t operator()(const SiteKey& key) const noexcept;
  };
  /// Counts per call: events in how many calls, and the most in one.
  struct PerCall {
    std::uint64_t calls = 0;
    std::uint64_t last_call = ~std::uint64_t(0);
    void add(std::uint64_t call) noexcept;
  };
  struct SiteStats {
    std::uint64_t order = 0;
    std::uint32_t description = 0; ///< the first event's
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    std::uint64_t min_bytes = ~std::uint64_t(0);
    std::uint64_t max_bytes = 0;
    double seconds = 0.0;
    PerCall per_call;
    std::uint64_t last_record = 0; ///< when its previous event came
    std::uint64_t fresh = 0;       ///< copies into a buffer made since then
    std::uint64_t fresh_bytes = 0;
    double fresh_seconds = 0.0;
    std::uint64_t checked = 0;   ///< copies whose contents were hashed
    std::uint64_t unchanged = 0; ///< ... that moved nothing new
    std::uint64_t unchanged_bytes = 0;
    double unchanged_seconds = 0.0;
    /// Waits followed at once by the freeing of a host allocation on their
    /// thread: Kokkos fences before it frees host memory.
    std::uint64_t deallocation_waits = 0;
    std::uint64_t legs = 0; ///< copies of round trips and DualView syncs
  };
  /// One copy of a possible round trip (or a DualView's sync), waiting
  /// for the copy back.
  struct Leg {
    /// The region calls begun when it was recorded (Recorder::calls_begun):
    /// a call open now was open then if its serial is not above.
    std::uint64_t calls_begun = 0;
    std::uint32_t site = 0;
    std::uint32_t description = 0;
    EventKind kind = EventKind::to_host;
    std::uint64_t nbytes = 0;
    double seconds = 0.0;
    SiteStats* stats = nullptr;
    bool dual_view = false;
    /// False once a copy back ended its round trip: the entry stays, so
    /// that the next copy of the same buffer reuses it instead of
    /// allocating one.
    bool waiting = true;
  };
  /// A pair of copies there and back (or a DualView synced both ways).
  struct PairKey {
    std::uint32_t node = 0;
    std::uint32_t first_site = 0;
    std::uint32_t second_site = 0;
    std::uint32_t label = 0; ///< the DualView's; 0 for a round trip
    EventKind first_kind = EventKind::to_device;
    bool operator==(const PairKey& other) const noexcept;
  };
  struct PairKeyHash {
    std::size_t operator()(const PairKey& key) const noexcept;
  };
  struct PairStats {
    std::uint64_t order = 0;
    std::uint32_t first_description = 0;
    std::uint32_t second_description = 0;
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    double seconds = 0.0;
    PerCall per_call;
  };
  /// The syncs of one DualView in one direction at one site in a region.
  struct SyncKey {
    std::uint32_t node = 0;
    std::uint32_t label = 0;
    std::uint32_t site = 0;
    bool to_device = true;
    bool operator==(const SyncKey& other) const noexcept;
  };
  struct SyncKeyHash {
    std::size_t operator()(const SyncKey& key) const noexcept;
  };
  struct SyncStats {
    std::uint64_t order = 0;
    std::uint64_t idle = 0; ///< syncs that copied nothing
    PerCall idle_calls;
    std::uint64_t copied = 0;
  };
  /// A DualView, by the data of its device side: Kokkos names a sync to
  /// the device after the device view and one to the host after the host
  /// view ("x" and "x_mirror").
  struct DualViewTrack {
    std::uint32_t label = 0; ///< the device view's, else the first seen
    Leg to_device;
    Leg to_host;
    bool has_to_device = false;
    bool has_to_host = false;
  };
  using SiteMap = std::unordered_map<SiteKey, SiteStats, SiteKeyHash>;
  using PairMap = std::unordered_map<PairKey, PairStats, PairKeyHash>;
  using SyncMap = std::unordered_map<SyncKey, SyncStats, SyncKeyHash>;
  /// The flags of a SiteKey.
  static constexpr std::uint8_t blocking_flag = 1;
  static constexpr std::uint8_t implicit_flag = 2;
  static constexpr std::uint8_t scalar_flag = 4;
  /// A wait of Kokkos' making of a device view (RawEvent::allocation).
  static constexpr std::uint8_t allocation_flag = 8;
  /// A copy to or from a GPU's memory (Cuda*, HIP*, SYCL*), whose host side
  /// could be page-locked; not a space named in CUNUMPY_DEVICE_SPACES (a
  /// fake device has no page-locked memory to compare with).
  static constexpr std::uint8_t gpu_flag = 16;

  /// A thread's last copy: a DualView sync that follows is its cause.
  struct LastCopy {
    bool valid = false;
    std::uint64_t calls_begun = 0; ///< as Leg's
    EventKind kind = EventKind::to_host;
    std::uint32_t site = 0;
    std::uint32_t description = 0;
    std::uint64_t nbytes = 0;
    double seconds = 0.0;
    const void* device = nullptr; ///< the data of its device side
    SiteStats* stats = nullptr;
    /// The leg it left waiting, if any: its key in ups_ or downs_.
    const void* registered = nullptr;
    bool registered_up = false;
  };

private:
  /// The frame of a record placed in region call `call` of `node` (a
  /// record's node and call: RawEvent, DualViewEvent).
  static Frame frame_of(std::uint32_t node, std::uint64_t call,
                        const RecorderLock& lock) noexcept;
  /// The frame of the innermost region call open on `thread` (the recorder's
  /// stack) that was open already when `calls_begun` calls had begun (the
  /// root: a frame of node 0).
  static Frame common_frame(std::uint32_t thread, std::uint64_t calls_begun,
                            const RecorderLock& lock) noexcept;
  std::uint64_t call_of(const Frame& frame) noexcept;
  void add_pair(PairMap& pairs, std::uint32_t thread, const Leg& first,
                const RawEvent& second_event, std::uint32_t second_description,
                std::uint32_t label, const RecorderLock& lock);
  void track_round_trip(const RawEvent& event, SiteStats& stats, LastCopy& last,
                        const RecorderLock& lock);
  bool fresh_destination(const void* pointer, std::uint64_t since);
  SiteStats& site_stats(const SiteKey& key, std::uint32_t description);
  void learn_space(std::uint32_t id, const RecorderLock& lock);
  static constexpr std::uint8_t unknown_space = 0xff;

  bool contents_;
  std::uint64_t records_ = 0;
  /// The last implicit wait, to tell a wait before a host deallocation.
  SiteStats* last_wait_ = nullptr;
  std::uint64_t last_wait_record_ = 0;
  std::uint32_t last_wait_thread_ = 0;
  std::uint64_t next_call_ = 1;
  std::uint64_t next_order_ = 0;
  /// Each node's calls while counting, by the recorder's node ids.
  std::vector<std::uint64_t> calls_;
  SiteMap sites_;
  /// The last sites seen, by their site id: a loop's copies find their
  /// statistics without hashing the whole key (the map's elements do not
  /// move when it grows).
  struct RecentSite {
    SiteKey key;
    SiteStats* stats = nullptr;
  };
  static constexpr std::size_t recent_sites = 8;
  RecentSite recent_sites_[recent_sites] = {};
  /// The best bandwidth of blocking copies per direction (0: to the host)
  /// and size class: through page-locked memory, and to the host into a
  /// reused pageable buffer.
  double pinned_[2][65] = {};
  double reused_[65] = {};
  std::unordered_map<const void*, Leg> ups_;   ///< by the device's data
  std::unordered_map<const void*, Leg> downs_; ///< by the host's data
  /// The entry of ups_ or downs_ written last, so that a loop's copies
  /// into the same buffer overwrite it without hashing its key again.
  /// Reset where that map loses elements (an element's address holds
  /// until it is erased).
  struct LastLeg {
    const void* key = nullptr;
    Leg* leg = nullptr;
  };
  LastLeg last_up_, last_down_;
  PairMap round_trips_;
  PairMap ping_pongs_;
  SyncMap syncs_;
  std::unordered_map<const void*, DualViewTrack> dual_views_;
  /// Live host allocations by address: their size and when they were made.
  std::map<std::uintptr_t, std::pair<std::uint64_t, std::uint64_t>>
      allocations_;
  /// The last allocation a copy's destination was looked up in, valid
  /// while no allocation came or went: the addresses from `lowest` to
  /// below `highest` find it.
  struct RecentAllocation {
    std::uint64_t generation = ~std::uint64_t(0);
    std::uintptr_t lowest = 0;
    std::uintptr_t highest = 0;
    std::uintptr_t start = 0;
    std::uint64_t nbytes = 0;
    std::uint64_t made = 0;
  };
  RecentAllocation recent_allocation_;
  std::uint64_t allocation_generation_ = 0;
  std::vector<LastCopy> last_copies_;      ///< per thread index
  std::vector<std::uint8_t> space_memory_; ///< HostMemory by space id
};

/// A sink with advice (a TransferCounter's, a TransferBudget's): what it
/// forwards to its AdviceState, the same for both.
struct AdvisedSink : EventSink {
  AdvisedSink(profiling::AdviceRecording recording, bool started)
      : started(started) {
    if (recording != profiling::AdviceRecording::off)
      advice = std::make_unique<AdviceState>(
          recording == profiling::AdviceRecording::contents);
  }

  void on_region_push(const RegionPush& push,
                      const RecorderLock& lock) override {
    if (advice)
      advice->on_region_push(push, started, lock);
  }
  void on_region_pop(const RegionPop& pop, const RecorderLock&) override {
    if (advice)
      advice->on_region_pop(pop);
  }
  void on_dual_view(const DualViewEvent& event,
                    const RecorderLock& lock) override {
    if (advice && started)
      advice->on_dual_view(event, lock);
  }
  void on_allocation(const Allocation& allocation,
                     const RecorderLock&) override {
    if (advice)
      advice->on_allocation(allocation);
  }
  bool wants_allocations() const override { return advice != nullptr; }
  bool wants_contents() const override {
    return advice != nullptr && advice->contents();
  }

  /// Counting (a budget can be stopped; a counter counts while attached).
  bool started;
  /// What advice needs of the records (null: AdviceRecording::off).
  std::unique_ptr<AdviceState> advice;
};

} // namespace cunumpy::Impl

#endif
