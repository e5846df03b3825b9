#ifndef CUNUMPY_SRC_CUDA_ATTRIBUTION_HPP
#define CUNUMPY_SRC_CUDA_ATTRIBUTION_HPP

// The attribution of CUDA's own record: plain records in (cuda_records.hpp),
// recorder events out. A copy's event (a Kokkos deep copy with CUDA copies
// inside, or a CUDA copy no Kokkos event reported) is made on its thread
// when the call returns, then waits here for CUDA's record of its copies,
// matched by correlation id: the record adds the memory kinds and the time
// on the device, so a CUDA copy inside a Kokkos copy is the same event, not
// a second one. Unified-memory records become migration events at their
// time on the recorder's clock; the sinks place every event that waited
// here by its time (see BudgetState), not by when it arrives.
//
// No CUDA header, no recorder singleton and no lock: the CUDA view
// (cuda_view.hpp) holds one behind its mutex, and the tests feed one
// synthetic records.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cuda/cuda_records.hpp"
#include "recorder/records.hpp"

namespace cunumpy::Impl::cuda {

/// RawEvent::thread of events made by the device, not by a host thread (the
/// migrations).
inline constexpr std::uint32_t device_thread = 0xffffffffu;

/// How an event's waiting ended, and the records that described nothing.
struct AttributionStats {
  std::uint64_t copy_records = 0;      ///< copy records received
  std::uint64_t described = 0;         ///< that described a waiting event
  std::uint64_t unmatched = 0;         ///< of copies no event waited for
  std::uint64_t too_late = 0;          ///< after their event had gone on
  std::uint64_t without_record = 0;    ///< events that went on without one
  std::uint64_t unknown_direction = 0; ///< CUDA copies not counted
  std::uint64_t migration_records = 0; ///< unified-memory records
  std::uint64_t migrated_bytes = 0;    ///< in transfer records
};

/// "unified memory host to device (page fault)", "unified memory GPU page
/// fault": the description of a migration event.
std::string migration_description(UnifiedMemoryCounter counter,
                                  MigrationCause cause);

/// The Kokkos name of the memory space a CUDA memory kind is ("Host" for
/// pageable memory, "CudaHostPinned", "Cuda", "CudaUVM", "CudaArray"); ""
/// for unknown.
std::string_view space_name(MemoryKind kind) noexcept;

class Attribution {
public:
  /// Interns a string (the recorder's string table, under its mutex).
  using Intern = std::function<std::uint32_t(std::string_view)>;

  /// An event that waits longer than this for CUDA's record goes on
  /// without it, at the next read.
  static constexpr double max_wait = 1.0;

  /// `origin` is the id of CUDA's record among the recorder's sources
  /// (RawEvent::origin): the events of CUDA's own copies carry it (those of
  /// Kokkos copies carry kokkos_source), and so do migrations.
  explicit Attribution(std::uint8_t origin) noexcept : origin_(origin) {}
  void set_origin(std::uint8_t origin) noexcept { origin_ = origin; }

  void set_time_mapping(const TimeMapping& mapping) noexcept {
    mapping_ = mapping;
  }
  const TimeMapping& time_mapping() const noexcept { return mapping_; }

  /// A call whose event will wait for CUDA's records: a CUDA copy, or the
  /// Kokkos deep copy a CUDA copy is made in. `start` is when the event
  /// starts (the Kokkos copy's begin), `now` the time. Returns its token
  /// (never 0).
  std::uint32_t open(double start, double now);
  /// CUDA will write one copy record for the call `correlation` of
  /// `token`'s event.
  void expect(std::uint32_t token, std::uint32_t correlation);
  /// `correlation` is the same call as one `token` expects a record for (a
  /// driver call inside a runtime call): its record describes that call.
  void alias(std::uint32_t token, std::uint32_t correlation);
  /// The event of `token`, made when its call returned, with the implicit
  /// wait of a synchronous copy when `wait` is not null. `direction` is
  /// the copy's for a CUDA copy (its kind follows CUDA's record when it
  /// was unknown at the call), unknown for a Kokkos copy, whose kind
  /// Kokkos' spaces gave.
  void hold(std::uint32_t token, const RawEvent& event, const RawEvent* wait,
            CopyDirection direction);
  /// The call of `token` made no event (not a transfer, nothing counting).
  void cancel(std::uint32_t token);

  void on_copy(const CopyRecord& record);
  void on_unified_memory(const UnifiedMemoryRecord& record);

  /// Appends the events that may go on to the sinks, oldest first: every
  /// migration, and the events whose records all came or that waited
  /// longer than max_wait; with `everything`, every event made (a read
  /// after CUDA handed over what it had).
  void release(double now, bool everything, const Intern& intern,
               std::vector<RawEvent>& out);

  /// No event still to come from here starts before this time: the start
  /// of the oldest call still open or event still waiting; `now` when
  /// none is.
  double oldest_pending(double now) const noexcept;
  /// Calls open or events waiting.
  std::size_t pending() const noexcept { return pending_.size(); }

  const AttributionStats& stats() const noexcept { return stats_; }

private:
  struct Pending {
    double start = 0.0;
    double opened = 0.0;
    std::uint32_t expected = 0;
    std::uint32_t seen = 0;
    bool held = false;
    bool has_wait = false;
    CopyDirection direction = CopyDirection::unknown;
    MemoryKind src = MemoryKind::unknown;
    MemoryKind dst = MemoryKind::unknown;
    double device_seconds = 0.0;
    std::uint64_t record_bytes = 0;
    std::vector<std::uint32_t> correlations;
    RawEvent event;
    RawEvent wait;
  };

  /// The finished event(s) of `entry` into `out`.
  void finish(Pending& entry, const Intern& intern, std::vector<RawEvent>& out);
  void forget(std::uint32_t token, Pending& entry);

  std::uint8_t origin_;
  TimeMapping mapping_;
  std::uint32_t next_token_ = 1;
  std::unordered_map<std::uint32_t, Pending> pending_;
  std::unordered_map<std::uint32_t, std::uint32_t> tokens_; ///< correlation
  /// Correlations of events that went on, to tell a late record from one
  /// no event waited for: the last ones, replaced in turn.
  std::vector<std::uint32_t> gone_;
  std::size_t gone_next_ = 0;
  std::vector<UnifiedMemoryRecord> migrations_;
  AttributionStats stats_;
};

} // namespace cunumpy::Impl::cuda

#endif
