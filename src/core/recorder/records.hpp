#ifndef CUNUMPY_SRC_RECORDER_RECORDS_HPP
#define CUNUMPY_SRC_RECORDER_RECORDS_HPP

// What the recorder gives its sinks: events, region pushes and pops,
// DualView events, kernel spans and losses, and the interface of a sink.
// Events and DualView events carry where they happened: the node of the
// recorder's one tree of region paths (region_tree.hpp) and the region call.

#include <cstdint>
#include <cstring>

#include <cunumpy/event.hpp>

#include "recorder/lock.hpp"
#include "recorder/region_tree.hpp"

namespace cunumpy::Impl {

/// What cunumpy knows of the bytes a copy moved, when a sink asked for
/// contents to be hashed (EventSink::wants_contents): the copy moved
/// exactly the bytes its destination held already, or not.
enum class Content : std::uint8_t { not_checked, changed, unchanged };

/// An event as the recorder stores it: strings and call sites are ids.
struct RawEvent {
  RawEvent() : implicit(false), scalar(false), allocation(false), late(false) {}
  EventKind kind = EventKind::to_host;
  bool blocking = true;
  Content content = Content::not_checked;
  /// Who reported it: the id of its source's name
  /// (EventSources::register_name); kokkos_source for Kokkos Tools and
  /// cunumpy's own calls.
  std::uint8_t origin = 0;
  std::uint32_t thread = 0;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;        ///< SiteTable id
  std::uint32_t description = 0; ///< StringTable id: what caused it
  std::uint32_t label = 0;       ///< StringTable id
  std::uint32_t src_space = 0;   ///< StringTable id
  std::uint32_t dst_space = 0;   ///< StringTable id
  bool implicit : 1;             ///< a wait the program did not ask for
  bool scalar : 1;               ///< a copy into a host scalar
  bool allocation : 1;           ///< a wait of Kokkos' making of a device view
  /// It reaches the sinks after records that came later (it waited for a
  /// source of late events, such as CUDA's record), so a sink places it by
  /// its time (BudgetState).
  bool late : 1;
  /// The memory kinds of a copy's source and destination (src_memory(),
  /// dst_memory()), and its time on the device (device_seconds()), as a
  /// source that sees them (CUDA's record) says; 0 when none did.
  std::uint8_t memory = 0;
  std::uint16_t device_time = 0;
  double start = 0.0; ///< seconds since the recorder started
  double duration = 0.0;
  /// The data a copy wrote and read, as Kokkos reported them (advice pairs
  /// the copies of one allocation); null for syncs and markers.
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;
  /// Where it happened: the node of the region path and the serial number
  /// of the innermost region call (0 outside every region), and the thread
  /// whose regions those are (its own, or the main thread's for a thread
  /// inside none of its own: Recorder::place).
  std::uint32_t node = 0;
  std::uint32_t region_thread = 0;
  std::uint64_t call = 0;

  bool async() const noexcept { return is_copy(kind) && !blocking; }

  // RawEvent::memory: bits 0-2 and 3-5 the memory kinds of the copy's
  // source and destination.
  MemoryKind src_memory() const noexcept {
    return static_cast<MemoryKind>(memory & 7u);
  }
  MemoryKind dst_memory() const noexcept {
    return static_cast<MemoryKind>((memory >> 3) & 7u);
  }
  void set_memory(MemoryKind src, MemoryKind dst) noexcept {
    memory = static_cast<std::uint8_t>((static_cast<unsigned>(src) & 7u) |
                                       (static_cast<unsigned>(dst) & 7u) << 3);
  }

  // RawEvent::device_time: the seconds the copy took on the device (CUDA's
  // record) as the upper 16 bits of a float (8 bits of exponent, 7 of
  // mantissa: within 0.4%), rounded to nearest; 0: not measured.
  double device_seconds() const noexcept {
    const std::uint32_t bits = std::uint32_t(device_time) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  void set_device_seconds(double seconds) noexcept {
    const float value = seconds > 0.0 ? static_cast<float>(seconds) : 0.0f;
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits += 0x7fffu + ((bits >> 16) & 1u); // round to nearest even
    device_time = static_cast<std::uint16_t>(bits >> 16);
  }
};

/// RawEvent::origin of Kokkos Tools' events and cunumpy's own calls: the
/// source named "kokkos".
inline constexpr std::uint8_t kokkos_source = 0;

/// RawEvent::region_thread of an event that no thread of the program made
/// (CUDA's record of a unified-memory migration): the recorder places it by
/// its time.
inline constexpr std::uint32_t unplaced = ~std::uint32_t(0);

/// The wait a read of a device value into a host scalar makes the host do:
/// an implicit, blocking sync at the read's line.
inline RawEvent scalar_read_wait(const RawEvent& read) noexcept {
  RawEvent sync = read;
  sync.kind = EventKind::sync;
  sync.nbytes = 0;
  sync.content = Content::not_checked;
  sync.blocking = true;
  sync.implicit = true;
  return sync;
}

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
  std::uint32_t thread = 0;
  double time = 0.0;
  std::uint32_t node = 0; ///< as RawEvent's
  std::uint32_t region_thread = 0;
  std::uint64_t call = 0;
};

/// A region or an explicit phase opens (`region.token` != 0) on `thread`.
struct RegionPush {
  OpenRegion region;
  std::uint32_t thread = 0;
};

/// It closes at `time` (it opened at region.since).
struct RegionPop {
  OpenRegion region;
  std::uint32_t thread = 0;
  double time = 0.0;
};

/// A pop on `thread` found no region open there (a region pushed where
/// cunumpy did not see it, or one popped before that closed early); the
/// first frame of its stack outside cunumpy, Kokkos and the runtime is in
/// `module` (StringTable id; 0: not known).
struct UnbalancedPop {
  std::uint32_t thread = 0;
  double time = 0.0;
  std::uint32_t module = 0;
};

/// A kernel (parallel_for, _reduce, _scan) from its begin to its end,
/// recorded only while a sink asks for kernels (Recorder::want_kernels).
struct KernelSpan {
  std::uint32_t name = 0; ///< StringTable id
  std::uint32_t thread = 0;
  double start = 0.0;
  double end = 0.0;
};

/// A Kokkos allocation or deallocation in a host memory space, recorded
/// only while a sink asks for them (EventSink::wants_allocations): advice
/// tells a copy into a buffer made for it from one into a reused buffer.
struct Allocation {
  const void* pointer = nullptr; ///< as Kokkos reports it (header included)
  std::uint64_t nbytes = 0;
  std::uint32_t thread = 0;
  bool freed = false; ///< a deallocation
  double time = 0.0;
};

static_assert(sizeof(RawEvent) == 88,
              "RawEvent's source fields live in its padding");

/// Why events may be missing from what the sinks received.
enum class LossReason : std::uint8_t {
  /// The recorder could not record an event (out of memory, an exception).
  record_failed,
  /// A sink could not take an event it was given.
  sink_failed,
  /// Kokkos reported the end of a copy whose begin cunumpy never saw: its
  /// begin callback went to someone else.
  copy_begin_missed,
  /// Something happened that may have cost events or moved them out of
  /// their phase, their number unknown (another tool replaced cunumpy's
  /// callbacks, Kokkos initialized again, ...): the count is
  /// 0 and the incident says what happened.
  incident,
  /// Kokkos fenced inside a deep copy cunumpy was not told of: its
  /// deep-copy callbacks were taken away (and maybe put back) meanwhile.
  copy_unseen,
  /// A record of CUDA's came later than the sink remembers which region was
  /// open at its time (BudgetState's timeline): its phase is not known.
  late_record_unplaced,
  /// An event of a thread inside no region of its own came while other
  /// threads were in different regions: its phase is not known.
  placement_unknown,
  /// Counted in one phase, an event may belong to another: a region was
  /// popped where none was open, so a region popped before the event may
  /// have closed early (a budget's view of a phase; UnbalancedPops).
  closed_early,
};
inline constexpr std::size_t loss_reason_count = 8;

/// Events a sink may have missed: `count` of them (0: an unknown number),
/// and for an incident its id (Recorder::incident).
struct Loss {
  LossReason reason = LossReason::record_failed;
  std::uint64_t count = 0;
  std::uint32_t incident = 0;
};

/// Receives the recorder's records, with the recorder's mutex held (the
/// lock token says so); a sink must not call back into the recorder's
/// locking API. Records reach a sink before anyone can read it, not
/// necessarily before the call that made them returns.
class EventSink {
public:
  virtual ~EventSink() = default;
  /// What the sink needs besides copies, syncs, regions and DualView
  /// events, asked when it is attached and detached (the answer must not
  /// change in between): allocations in host spaces, and the contents of
  /// copies hashed (Content).
  virtual bool wants_allocations() const { return false; }
  virtual bool wants_contents() const { return false; }
  virtual void on_event(const RawEvent& event, const RecorderLock& lock) = 0;
  virtual void on_region_push(const RegionPush&, const RecorderLock&) {}
  virtual void on_region_pop(const RegionPop&, const RecorderLock&) {}
  virtual void on_unbalanced_pop(const UnbalancedPop&, const RecorderLock&) {}
  virtual void on_dual_view(const DualViewEvent&, const RecorderLock&) {}
  virtual void on_kernel(const KernelSpan&, const RecorderLock&) {}
  virtual void on_allocation(const Allocation&, const RecorderLock&) {}
  virtual void on_loss(const Loss&, const RecorderLock&) {}
};

} // namespace cunumpy::Impl

#endif
