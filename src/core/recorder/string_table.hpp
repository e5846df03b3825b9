#ifndef CUNUMPY_SRC_STRING_TABLE_HPP
#define CUNUMPY_SRC_STRING_TABLE_HPP

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "support/environment.hpp"

namespace cunumpy::Impl {

/// Interned strings: events store 32-bit ids instead of strings, so recording
/// allocates nothing once a label or description has been seen. Not
/// thread-safe; the recorder's mutex guards it.
///
/// At most `max_strings` strings are kept: a program that labels its views
/// with step numbers must not grow the table without bound. Past that, new
/// strings all share the id of `overflow_text` (said once on stderr).
class StringTable {
public:
  static constexpr std::size_t max_strings = std::size_t(1) << 16;
  static constexpr std::string_view overflow_text =
      "(other: more distinct labels than cunumpy keeps)";

  explicit StringTable(std::size_t capacity = max_strings)
      : capacity_(capacity < 2 ? 2 : capacity) {
    intern("");
  }

  std::uint32_t intern(std::string_view text) {
    auto found = index_.find(text);
    if (found != index_.end())
      return found->second;
    if (strings_.size() + 1 >= capacity_) {
      if (overflow_id_ == 0) {
        overflow_id_ = add(overflow_text);
        warn("more than " + std::to_string(capacity_ - 2) +
             " distinct labels, descriptions and region names; new ones are "
             "recorded as \"" +
             std::string(overflow_text) +
             "\" (label your views without step numbers)");
      }
      return overflow_id_;
    }
    return add(text);
  }

  std::string_view view(std::uint32_t id) const {
    return id < strings_.size() ? std::string_view(strings_[id])
                                : std::string_view();
  }

  std::size_t size() const noexcept { return strings_.size(); }

private:
  std::uint32_t add(std::string_view text) {
    const auto id = static_cast<std::uint32_t>(strings_.size());
    const std::string& stored = strings_.emplace_back(text);
    index_.emplace(std::string_view(stored), id);
    return id;
  }

  std::size_t capacity_;
  std::uint32_t overflow_id_ = 0;
  std::deque<std::string> strings_; // stable addresses for the index keys
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

} // namespace cunumpy::Impl

#endif
