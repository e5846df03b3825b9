#ifndef CUNUMPY_SRC_RECORDER_REGION_TIMELINE_HPP
#define CUNUMPY_SRC_RECORDER_REGION_TIMELINE_HPP

// Where the main thread was at a given time: for the events CUDA reports
// long after they happened without a thread of their own (unified-memory
// migrations), which count where the program was then, not where it is
// when they arrive. It keeps the changes since the recorder's horizon (no
// late event still to come starts before it).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>

namespace cunumpy::Impl {

class RegionTimeline {
public:
  struct State {
    std::uint32_t node = 0;
    std::uint32_t thread = 0;
    std::uint64_t call = 0;
  };

  /// Changes kept at most: older ones are forgotten (16 MiB).
  static constexpr std::size_t max_changes = std::size_t(1) << 20;

  explicit RegionTimeline(State initial) {
    changes_.push_back({-std::numeric_limits<double>::infinity(), initial});
  }

  /// From `time` on, `state` holds. Times only grow (a time before the
  /// last change is taken as the last change's).
  void record(double time, State state) {
    if (time < changes_.back().time)
      time = changes_.back().time;
    changes_.push_back({time, state});
    if (changes_.size() > max_changes)
      changes_.pop_front();
  }

  /// From `time` on, `state` holds, and nothing earlier is known: what is
  /// kept while no late event can come. One that comes later from before
  /// `time` is not placed (at() is false), never placed by a guess.
  void reset(double time, State state) {
    if (changes_.size() != 1)
      changes_.resize(1);
    changes_.front() = {time, state};
  }

  /// Forgets the changes no event still to come can need: those before
  /// the one in force at `horizon`.
  void forget_before(double horizon) {
    while (changes_.size() > 1 && changes_[1].time <= horizon)
      changes_.pop_front();
  }

  /// The state at `time`; false when the change in force then is forgotten.
  bool at(double time, State& state) const {
    if (time < changes_.front().time)
      return false;
    // The last change at or before `time`.
    const auto after = std::upper_bound(
        changes_.begin(), changes_.end(), time,
        [](double t, const Change& change) { return t < change.time; });
    state = std::prev(after)->state;
    return true;
  }

  std::size_t size() const noexcept { return changes_.size(); }

private:
  struct Change {
    double time;
    State state;
  };
  std::deque<Change> changes_;
};

} // namespace cunumpy::Impl

#endif
