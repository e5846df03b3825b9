#include "consumers/unbalanced_pops.hpp"

#include <algorithm>

#include "recorder/records.hpp"

namespace cunumpy::Impl {

void UnbalancedPops::Tally::add(const Tally& other) noexcept {
  count += other.count;
  nbytes += other.nbytes;
  max_nbytes = std::max(max_nbytes, other.max_nbytes);
  blocking = blocking || other.blocking;
  not_blocking = not_blocking || other.not_blocking;
  implicit = implicit || other.implicit;
  not_implicit = not_implicit || other.not_implicit;
}

void UnbalancedPops::on_pop(std::uint32_t thread, std::uint32_t node,
                            std::uint32_t depth, bool kokkos_region) noexcept {
  try {
    if (threads_.size() >= max_candidates && threads_.count(thread) == 0) {
      candidates_lost_ = true;
      return;
    }
    ThreadCandidates& candidates = threads_[thread];
    const std::uint32_t after = depth > 0 ? depth - 1 : 0;
    // The stack is at `after` now: a region popped deeper was left since.
    auto& popped = candidates.popped;
    popped.erase(
        std::remove_if(popped.begin(), popped.end(),
                       [after](const Popped& p) { return p.depth > after; }),
        popped.end());
    candidates.set = no_set;
    candidates.foreign_set = no_set;
    last_thread_ = nullptr;
    // An explicit phase closes by its token, never by a Kokkos pop.
    if (!kokkos_region ||
        std::any_of(popped.begin(), popped.end(),
                    [node](const Popped& p) { return p.node == node; }))
      return;
    if (popped.size() >= max_candidates) {
      candidates_lost_ = true;
      return;
    }
    popped.push_back({node, after});
    if (after == 0 &&
        std::find(roots_.begin(), roots_.end(), node) == roots_.end()) {
      if (roots_.size() >= max_candidates) {
        candidates_lost_ = true;
        return;
      }
      roots_.push_back(node);
      ++roots_version_;
      roots_set_ = no_set;
    }
  } catch (...) {
    candidates_lost_ = true; // later events may belong where none can tell
  }
}

std::uint32_t UnbalancedPops::intern(const std::vector<Candidate>& candidates) {
  if (candidates.empty())
    return no_set;
  std::vector<std::uint64_t> key;
  key.reserve(candidates.size());
  for (const Candidate& candidate : candidates)
    key.push_back(std::uint64_t(candidate.node) << 1 | candidate.anywhere);
  const auto found = set_index_.find(key);
  if (found != set_index_.end())
    return found->second;
  if (sets_.size() >= max_keys ||
      stored_candidates_ + candidates.size() > max_stored_candidates)
    return overflow_set;
  stored_candidates_ += candidates.size();
  const auto id = static_cast<std::uint32_t>(sets_.size());
  sets_.push_back(candidates);
  set_index_.emplace(std::move(key), id);
  return id;
}

std::uint32_t UnbalancedPops::set_of(const RawEvent& event) {
  if (event.node == 0) {
    // In no region: it may belong to any region popped to an empty stack.
    if (roots_set_ == no_set) {
      scratch_.clear();
      for (std::uint32_t node : roots_)
        scratch_.push_back({node, false});
      roots_set_ = intern(scratch_);
    }
    return roots_set_;
  }
  if (last_thread_ == nullptr || last_thread_index_ != event.region_thread) {
    const auto found = threads_.find(event.region_thread);
    if (found == threads_.end()) {
      // Its regions' thread popped nothing: only another thread's region
      // popped to an empty stack can hold it.
      if (event.region_thread == event.thread || roots_.empty())
        return no_set;
      if (roots_anywhere_version_ != roots_version_ ||
          roots_anywhere_set_ == no_set) {
        scratch_.clear();
        for (std::uint32_t node : roots_)
          scratch_.push_back({node, true});
        roots_anywhere_set_ = intern(scratch_);
        roots_anywhere_version_ = roots_version_;
      }
      return roots_anywhere_set_;
    }
    last_thread_ = &found->second;
    last_thread_index_ = event.region_thread;
  }
  ThreadCandidates& candidates = *last_thread_;
  if (event.region_thread == event.thread) {
    if (candidates.set == no_set && !candidates.popped.empty()) {
      scratch_.clear();
      for (const Popped& popped : candidates.popped)
        scratch_.push_back({popped.node, false});
      candidates.set = intern(scratch_);
    }
    return candidates.set;
  }
  // Placed in another thread's regions, it may belong to a region popped
  // there, or to one of any thread's that closed early.
  if (candidates.foreign_set == no_set ||
      candidates.foreign_roots != roots_version_) {
    scratch_.clear();
    for (const Popped& popped : candidates.popped)
      scratch_.push_back({popped.node, false});
    for (std::uint32_t node : roots_)
      scratch_.push_back({node, true});
    candidates.foreign_set = intern(scratch_);
    candidates.foreign_roots = roots_version_;
  }
  return candidates.foreign_set;
}

void UnbalancedPops::on_event(const RawEvent& event) noexcept {
  std::uint32_t set = no_set;
  try {
    set = set_of(event);
  } catch (...) {
    set = overflow_set;
  }
  if (set == no_set)
    return; // nothing popped before it: it belongs where it counted
  if (set == overflow_set) {
    running_overflow_ = true;
    return;
  }
  const std::uint64_t key = std::uint64_t(event.node) << 32 |
                            std::uint64_t(set) << 8 |
                            static_cast<std::uint64_t>(event.kind);
  if (key != last_key_) {
    auto found = running_.find(key);
    if (found == running_.end()) {
      if (running_.size() + judged_.size() >= max_keys) {
        running_overflow_ = true;
        return;
      }
      try {
        found = running_.emplace(key, Tally()).first;
      } catch (...) {
        running_overflow_ = true;
        return;
      }
    }
    last_key_ = key;
    last_tally_ = &found->second; // map nodes never move
  }
  Tally& tally = *last_tally_;
  ++tally.count;
  tally.nbytes += event.nbytes;
  tally.max_nbytes = std::max(tally.max_nbytes, event.nbytes);
  (event.blocking ? tally.blocking : tally.not_blocking) = true;
  (event.implicit ? tally.implicit : tally.not_implicit) = true;
}

void UnbalancedPops::on_unbalanced_pop() noexcept {
  ++count_;
  try {
    for (const auto& [key, tally] : running_)
      judged_[key].add(tally);
  } catch (...) {
    running_overflow_ = true;
  }
  running_.clear();
  last_key_ = ~std::uint64_t(0);
  last_tally_ = nullptr;
  judged_overflow_ = judged_overflow_ || running_overflow_ || candidates_lost_;
  running_overflow_ = false;
}

} // namespace cunumpy::Impl
