#ifndef CUNUMPY_SRC_CUDA_CUDA_VIEW_HPP
#define CUNUMPY_SRC_CUDA_CUDA_VIEW_HPP

// The CUDA view: what CUDA's own record of the process adds to the
// recorder. One per recorder, owned by it (Recorder::cuda_state); CUPTI
// feeds the view of the recorder it started with. The CUPTI collector
// (cupti_collector.cpp) feeds it: API calls on the threads that make them,
// activity records from CUPTI's buffers. It keeps the attribution unit
// (attribution.hpp) behind a mutex of its own and is a source of late events
// (EventSource) of the recorder's, named "cuda".
//
// Locks: the recorder's mutex, then this one, never the other way round;
// CUPTI's buffer callback takes only this one.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <cunumpy/cuda_view.hpp>

#include "cuda/attribution.hpp"
#include "cuda/cuda_records.hpp"
#include "recorder/recorder.hpp"

namespace cunumpy::Impl::cuda {

class CudaView final : public EventSource {
public:
  /// `recorder`'s view, made at its first use.
  static CudaView& of(Recorder& recorder);

  /// Feeds `recorder` (start_collector, handed by the front end that
  /// starts CUDA's record): registers the source's name there. Once.
  void bind(Recorder& recorder) noexcept;
  /// The recorder bound, null before bind.
  Recorder* bound() const noexcept {
    return recorder_.load(std::memory_order_acquire);
  }

  // What the collector says of itself.
  void set_status(profiling::CudaViewState state, std::string reason);
  void set_unified_memory(bool on, std::string reason);
  /// The program allocates managed memory (cudaMallocManaged and the
  /// like), on the thread that does, before the allocation.
  void note_managed_memory() noexcept;
  void set_time_mapping(const TimeMapping& mapping);
  /// CUDA's flush of its buffers, called by collect() before reads.
  using Flush = void (*)();
  void set_flush(Flush flush) noexcept {
    flush_.store(flush, std::memory_order_release);
  }
  void add_dropped_records(std::uint64_t count) noexcept {
    dropped_.fetch_add(count, std::memory_order_relaxed);
  }

  /// At the entry and the exit of a CUDA API call of interest, on the
  /// thread that makes it (CUPTI's API callback). Never throw.
  void api_enter(const ApiCall& call) noexcept;
  void api_exit(std::uint32_t correlation) noexcept;

  /// CUDA's activity records, from any thread (CUPTI's buffer callback);
  /// `now` is when the buffer was handed over: every record of an
  /// activity that ended a while before is in this buffer or an earlier
  /// one.
  void copy_records(const CopyRecord* records, std::size_t count) noexcept;
  void unified_memory_records(const UnifiedMemoryRecord* records,
                              std::size_t count) noexcept;
  void buffer_delivered(double now) noexcept;

  profiling::CudaView status() const;

  // EventSource
  std::string_view name() const noexcept override { return "cuda"; }
  void collect() noexcept override;
  void drain(std::vector<RawEvent>& out,
             const RecorderLock& lock) noexcept override;
  double horizon() const noexcept override;
  void hold(std::uint32_t token, const RawEvent& event,
            const RawEvent* wait) noexcept override;
  void forget(std::uint32_t token) noexcept override;
  std::string migrations_unseen() const override;
  void lock_for_fork() noexcept override { mutex_.lock(); }
  void unlock_after_fork() noexcept override { mutex_.unlock(); }

  /// A buffer handed over without a forced flush may miss the records of
  /// activities that ended up to this long before.
  static constexpr double settle_time = 1.0;

private:
  CudaView();
  /// The recorder bound, having become its source (once); null before, or
  /// when the recorder has another source of its name (an incident).
  Recorder* become_source() noexcept;
  std::string migrations_unseen_locked() const; ///< mutex_ held
  /// `count` records could not be taken (told to the recorder bound).
  void lost(std::uint64_t count) noexcept;

  /// The recorder bound (bind); null before, when nothing reaches it.
  std::atomic<Recorder*> recorder_{nullptr};
  /// RawEvent::origin of its events, set by bind before recorder_.
  std::uint8_t origin_ = 0;
  mutable std::mutex mutex_;
  Attribution attribution_;
  profiling::CudaViewState state_ = profiling::CudaViewState::not_started;
  std::string reason_ = "no counter, budget or plugin has used cunumpy yet";
  bool unified_memory_ = false;
  std::string unified_memory_reason_ = "CUDA's record is off";
  bool managed_memory_ = false; ///< the program allocated managed memory
  /// Every late event that starts before this time has reached the
  /// attribution unit.
  double settled_ = 0.0;
  bool everything_ = false; ///< the next drain gives every event made
  std::uint64_t unknown_direction_seen_ = 0;
  std::atomic<Flush> flush_{nullptr};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<bool> source_{false};
};

} // namespace cunumpy::Impl::cuda

#endif
