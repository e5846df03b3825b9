#ifndef CUNUMPY_SRC_CONSUMERS_UNBALANCED_POPS_HPP
#define CUNUMPY_SRC_CONSUMERS_UNBALANCED_POPS_HPP

// A budget's record of what pops on an empty stack may have moved. Such a
// pop (UnbalancedPop) means that a region was pushed where cunumpy did not
// see it (before it was loaded, or on another thread), and nothing moved;
// or that a pop made earlier on that thread closed a region early (a
// library popped one more than it pushed, as Trilinos 13.2's Tpetra does),
// and the events made since counted outside it. Which pop it was cannot be
// known. Had a pop closed region M early, M would still be open under the
// regions pushed since, until the thread's stack went below M's depth:
// those regions, popped and not left since, are each event's candidates.
// Kept: for the events counted before the last unbalanced pop, how many of
// each kind counted in each node with which candidates; the budget decides
// when it is read, with the phases known then, whether counting them in a
// candidate's phase could change a verdict.

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include <cunumpy/event.hpp>

namespace cunumpy::Impl {

struct RawEvent;

class UnbalancedPops {
public:
  /// What the events of one key amount to: enough to tell whether adding
  /// them to a phase, or taking them out, changes a limit of its rule.
  struct Tally {
    std::uint64_t count = 0;
    std::uint64_t nbytes = 0;
    std::uint64_t max_nbytes = 0;
    bool blocking = false;     ///< some event was blocking
    bool not_blocking = false; ///< some event was not
    bool implicit = false;     ///< some event was implicit
    bool not_implicit = false; ///< some event was not

    void add(const Tally& other) noexcept;
  };
  /// A region an event may belong to, had its pop closed it early: the
  /// node, inserted above the event's regions at the node's depth; or,
  /// `anywhere`, around whatever regions the event is in (an event of a
  /// thread with no region of its own, placed in another thread's).
  struct Candidate {
    std::uint32_t node = 0;
    bool anywhere = false;
  };

  /// Keys and candidates kept before the record stops (overflowed()).
  static constexpr std::size_t max_keys = 1u << 14;
  static constexpr std::size_t max_candidates = 1u << 10;
  static constexpr std::size_t max_stored_candidates = 1u << 18;

  /// A region (or explicit phase, which no Kokkos pop closes) of `node`, at
  /// `depth` in the tree, was popped on `thread`.
  void on_pop(std::uint32_t thread, std::uint32_t node, std::uint32_t depth,
              bool kokkos_region) noexcept;
  /// An event was counted.
  void on_event(const RawEvent& event) noexcept;
  /// A pop found no region open on its thread: what was counted until now
  /// may have moved.
  void on_unbalanced_pop() noexcept;

  /// Unbalanced pops seen.
  std::uint64_t count() const noexcept { return count_; }
  /// `visit(node, candidates, kind, tally)` for the events counted before
  /// the last unbalanced pop that have candidates.
  template <class Visit> void for_each_judged(Visit visit) const {
    for (const auto& [key, tally] : judged_)
      visit(static_cast<std::uint32_t>(key >> 32),
            sets_[static_cast<std::uint32_t>(key >> 8) & 0xffffffu],
            static_cast<EventKind>(key & 15u), tally);
  }
  /// Events before the last unbalanced pop could not all be recorded (too
  /// many keys or candidates, or memory ran out).
  bool overflowed() const noexcept { return judged_overflow_; }

private:
  struct Popped {
    std::uint32_t node;
    std::uint32_t depth; ///< the stack's depth after its pop
  };
  static constexpr std::uint32_t no_set = ~std::uint32_t(0);
  static constexpr std::uint32_t overflow_set = no_set - 1;
  struct ThreadCandidates {
    std::vector<Popped> popped;
    std::uint32_t set = no_set;         ///< popped, interned
    std::uint32_t foreign_set = no_set; ///< popped and roots_, interned
    std::uint64_t foreign_roots = 0;    ///< roots_version_ of foreign_set
  };

  std::uint32_t set_of(const RawEvent& event);
  std::uint32_t intern(const std::vector<Candidate>& candidates);

  std::unordered_map<std::uint32_t, ThreadCandidates> threads_;
  ThreadCandidates* last_thread_ = nullptr; ///< elements never move
  std::uint32_t last_thread_index_ = 0;
  /// Regions popped to an empty stack on any thread: where an event in no
  /// region may belong.
  std::vector<std::uint32_t> roots_;
  std::uint64_t roots_version_ = 0;
  std::uint32_t roots_set_ = no_set;          ///< for events in no region
  std::uint32_t roots_anywhere_set_ = no_set; ///< for a foreign event's
  std::uint64_t roots_anywhere_version_ = 0;
  std::vector<std::vector<Candidate>> sets_;
  std::map<std::vector<std::uint64_t>, std::uint32_t> set_index_;
  std::size_t stored_candidates_ = 0; ///< in sets_
  std::vector<Candidate> scratch_;
  /// Since the last unbalanced pop, and before it; by (node, set, kind).
  std::unordered_map<std::uint64_t, Tally> running_, judged_;
  std::uint64_t last_key_ = ~std::uint64_t(0);
  Tally* last_tally_ = nullptr;
  bool running_overflow_ = false;
  bool candidates_lost_ = false;
  bool judged_overflow_ = false;
  std::uint64_t count_ = 0;
};

} // namespace cunumpy::Impl

#endif
