#ifndef CUNUMPY_SRC_RECORDER_RECORDS_HPP
#define CUNUMPY_SRC_RECORDER_RECORDS_HPP

// What the recorder gives its sinks: events, region pushes and pops,
// DualView events, kernel spans and losses, and the interface of a sink.

#include <cstdint>
#include <variant>

#include <cunumpy/event.hpp>

#include "recorder/lock.hpp"

namespace cunumpy::Impl {

/// What cunumpy knows of the bytes a copy moved, when a sink asked for
/// contents to be hashed (EventSink::wants_contents): the copy moved
/// exactly the bytes its destination held already, or not.
enum class Content : std::uint8_t { not_checked, changed, unchanged };

/// An event as the recorder stores it: strings and call sites are ids.
struct RawEvent {
  EventKind kind = EventKind::to_host;
  bool blocking = true;
  bool implicit = false;
  Content content = Content::not_checked;
  std::uint32_t thread = 0;
  std::uint64_t nbytes = 0;
  std::uint32_t site = 0;        ///< SiteTable id
  std::uint32_t description = 0; ///< StringTable id: what caused it
  std::uint32_t label = 0;       ///< StringTable id
  std::uint32_t src_space = 0;   ///< StringTable id
  std::uint32_t dst_space = 0;   ///< StringTable id
  bool scalar = false;           ///< a copy into a host scalar
  double start = 0.0;            ///< seconds since the recorder started
  double duration = 0.0;
  /// The data a copy wrote and read, as Kokkos reported them (advice pairs
  /// the copies of one allocation); null for syncs and markers.
  const void* dst_ptr = nullptr;
  const void* src_ptr = nullptr;

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
  std::uint32_t thread = 0;
  double time = 0.0;
};

struct RegionPush {
  std::uint32_t name = 0; ///< StringTable id
  std::uint32_t thread = 0;
  double time = 0.0;
};

struct RegionPop {
  std::uint32_t thread = 0;
  double time = 0.0;
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

/// What a thread queues for the sinks: 80 bytes.
using PendingRecord = std::variant<RawEvent, RegionPush, RegionPop,
                                   DualViewEvent, KernelSpan, Allocation>;

/// Why events may be missing from what the sinks received.
enum class LossReason : std::uint8_t {
  /// The recorder could not record an event (out of memory, an exception).
  record_failed,
  /// A sink could not take an event it was given.
  sink_failed,
  /// Kokkos reported the end of a copy whose begin cunumpy never saw: its
  /// begin callback went to someone else.
  copy_begin_missed,
  /// Another tool replaced cunumpy's Kokkos Tools callbacks; what Kokkos
  /// reported until cunumpy noticed went to that tool only. The number of
  /// events is unknown: the count is 0 and the incident says what happened.
  callbacks_replaced,
};
inline constexpr std::size_t loss_reason_count = 4;

/// Events a sink may have missed: `count` of them (0: an unknown number),
/// and for callbacks_replaced the id of the incident (Recorder::incident).
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
  virtual void on_dual_view(const DualViewEvent&, const RecorderLock&) {}
  virtual void on_kernel(const KernelSpan&, const RecorderLock&) {}
  virtual void on_allocation(const Allocation&, const RecorderLock&) {}
  virtual void on_loss(const Loss&, const RecorderLock&) {}
};

} // namespace cunumpy::Impl

#endif
