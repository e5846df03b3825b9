#ifndef CUNUMPY_SRC_STRING_TABLE_HPP
#define CUNUMPY_SRC_STRING_TABLE_HPP

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cunumpy::Impl {

/// Interned strings: events store 32-bit ids instead of strings, so recording
/// allocates nothing once a label or description has been seen. Not
/// thread-safe; the recorder's mutex guards it.
class StringTable {
public:
  StringTable() { intern(""); }

  std::uint32_t intern(std::string_view text) {
    auto found = index_.find(text);
    if (found != index_.end())
      return found->second;
    const auto id = static_cast<std::uint32_t>(strings_.size());
    const std::string& stored = strings_.emplace_back(text);
    index_.emplace(std::string_view(stored), id);
    return id;
  }

  std::string_view view(std::uint32_t id) const {
    return id < strings_.size() ? std::string_view(strings_[id])
                                : std::string_view();
  }

  std::size_t size() const noexcept { return strings_.size(); }

private:
  std::deque<std::string> strings_; // stable addresses for the index keys
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

} // namespace cunumpy::Impl

#endif
