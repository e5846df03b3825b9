#ifndef CUNUMPY_SRC_RECORDER_REGION_TREE_HPP
#define CUNUMPY_SRC_RECORDER_REGION_TREE_HPP

// The one tree of region paths that every consumer reads: a node per path
// of nested regions and explicit phases ("step/solve" and "output/solve" are
// two nodes), made by the recorder as threads push, and the regions open on
// each thread (ThreadState::regions, read through Recorder::open_regions).
// Events carry the node they happened in; counters, budgets, advice and the
// trace key their data by it. Guarded by the recorder's mutex.

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "recorder/lock.hpp"

namespace cunumpy::Impl {

/// A region or explicit phase open on a thread.
struct OpenRegion {
  std::uint32_t node = 0;
  std::uint32_t name = 0; ///< StringTable id
  /// The call's serial number: what a consumer counts per call. A new one,
  /// increasing, for every push except one that `continues` a call.
  std::uint64_t call = 0;
  /// An explicit phase's token (TransferBudget::phase); 0 for a Kokkos
  /// region.
  std::uint64_t token = 0;
  double since = 0.0;
  /// A region inside an open region or phase of its own name (a region
  /// inside the explicit phase of its name, a recursive region): the same
  /// call as that one (RegionTree::Node::call_node), not a new one.
  bool continues = false;
};

/// The regions open on one thread, outermost first: the recorder's own
/// stack, read under its mutex until the next push or pop.
struct OpenRegions {
  const OpenRegion* first = nullptr;
  const OpenRegion* last = nullptr;
  const OpenRegion* begin() const noexcept { return first; }
  const OpenRegion* end() const noexcept { return last; }
  bool empty() const noexcept { return first == last; }
};

/// Where an event happened: the node of its region path, the thread whose
/// regions those are, and the innermost region call (0 outside every
/// region).
struct Place {
  std::uint32_t node = 0;
  std::uint32_t thread = 0;
  std::uint64_t call = 0;
};

class RegionTree {
public:
  /// Nodes beyond this are not made: a program naming its regions after
  /// the step would grow the tree without bound. A push of a new path then
  /// counts in its parent, and its name is remembered (truncated_names): a
  /// rule on it cannot be checked.
  static constexpr std::size_t max_nodes = std::size_t(1) << 16;
  /// Levels beyond this are not made either: a loop that misses a pop per
  /// step nests each step in the last, and every path repeats its
  /// ancestors (a report would grow as the square of the steps). A push
  /// below it counts in its parent, as above; cut() says where.
  static constexpr std::uint32_t max_depth = 64;

  struct Node {
    std::uint32_t name = 0; ///< StringTable id; the root's is 0
    std::uint32_t parent = 0;
    std::uint32_t depth = 0;
    /// The node whose calls a region of this path is part of: the
    /// outermost region of its name on the path ("step" for "step/step" and
    /// "step/lib/step"), else itself. Where events of a nested region of
    /// the same name count as one call, they count in this node.
    std::uint32_t call_node = 0;
  };

  RegionTree() : nodes_(1) {}

  /// The child of `parent` named `name`, made when new; `parent` itself
  /// when the tree is full. May throw std::bad_alloc.
  std::uint32_t child(std::uint32_t parent, std::uint32_t name);

  const Node& node(std::uint32_t id) const noexcept { return nodes_[id]; }
  std::size_t size() const noexcept { return nodes_.size(); }
  const std::unordered_set<std::uint32_t>& truncated_names() const noexcept {
    return truncated_;
  }
  /// The first node at max_depth a push went below (0: none).
  std::uint32_t cut() const noexcept { return cut_; }

private:
  std::vector<Node> nodes_; ///< nodes_[0] is the root; parents first
  std::unordered_map<std::uint64_t, std::uint32_t> children_; ///< parent,name
  std::unordered_set<std::uint32_t> truncated_;
  std::uint32_t cut_ = 0;
};

} // namespace cunumpy::Impl

#endif
