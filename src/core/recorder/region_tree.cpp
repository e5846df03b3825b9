#include "recorder/region_tree.hpp"

#include "recorder/recorder.hpp"

namespace cunumpy::Impl {

std::uint32_t RegionTree::child(std::uint32_t parent, std::uint32_t name) {
  const std::uint64_t key = std::uint64_t(parent) << 32 | name;
  const auto found = children_.find(key);
  if (found != children_.end())
    return found->second;
  if (nodes_[parent].depth >= max_depth) {
    if (cut_ == 0)
      cut_ = parent;
    truncated_.insert(name);
    return parent;
  }
  if (nodes_.size() >= max_nodes) {
    truncated_.insert(name);
    return parent;
  }
  allocation_point();
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  // The same-named region rule, decided here once per path.
  std::uint32_t call_node = index;
  for (std::uint32_t above = parent; above != 0; above = nodes_[above].parent)
    if (nodes_[above].name == name) {
      call_node = nodes_[above].call_node;
      break;
    }
  nodes_.push_back({name, parent, nodes_[parent].depth + 1, call_node});
  children_.emplace(key, index);
  return index;
}

} // namespace cunumpy::Impl
