#ifndef CUNUMPY_SRC_RECORDER_LOSSES_HPP
#define CUNUMPY_SRC_RECORDER_LOSSES_HPP

// What a recorder could not deliver: events lost, counted by reason
// without a lock or an allocation (so that code where recording itself
// failed can count them), and incidents that may have cost events of
// unknown number. The recorder tells its sinks of both (Recorder::catch_up,
// Recorder::open_incident), so that no reader takes a short count for a
// complete one.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "recorder/records.hpp"

namespace cunumpy::Impl {

/// Something that happened to the event stream, told to the sinks
/// attached at the time (another tool replaced cunumpy's callbacks).
struct Incident {
  std::string text;
  /// Concerns the whole run (nothing reaches this recorder): told to the
  /// sinks attached later too.
  bool standing = false;
  /// Found harmless later (the replacing tool forwards to cunumpy), with
  /// why; a retracted incident loses no event.
  bool retracted = false;
  std::string retraction;
};

class Losses {
public:
  /// `count` events of `reason` could not reach the sinks.
  void count(LossReason reason, std::uint64_t count = 1) noexcept {
    counts_[static_cast<std::size_t>(reason)].fetch_add(
        count, std::memory_order_relaxed);
  }
  /// `give(loss)` for each reason counted since the last take, which the
  /// counts are then taken from.
  template <class Give> void take(Give give) noexcept {
    for (std::size_t i = 0; i < loss_reason_count; ++i) {
      if (counts_[i].load(std::memory_order_relaxed) == 0)
        continue;
      const std::uint64_t n = counts_[i].exchange(0, std::memory_order_relaxed);
      give(Loss{static_cast<LossReason>(i), n, 0});
    }
  }

  // Incidents, with the recorder's mutex (its callers hold a RecorderLock).
  /// Adds one; returns its id (never 0).
  std::uint32_t add_incident(std::string text, bool standing) {
    incidents_.push_back({std::move(text), standing, false, {}});
    return static_cast<std::uint32_t>(incidents_.size());
  }
  void retract(std::uint32_t id, std::string why) {
    Incident& incident = incidents_.at(id - 1);
    incident.retracted = true;
    incident.retraction = std::move(why);
  }
  const Incident& incident(std::uint32_t id) const {
    return incidents_.at(id - 1);
  }
  std::size_t incidents() const noexcept { return incidents_.size(); }

private:
  std::array<std::atomic<std::uint64_t>, loss_reason_count> counts_{};
  std::vector<Incident> incidents_;
};

} // namespace cunumpy::Impl

#endif
