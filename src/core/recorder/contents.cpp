#include "recorder/contents.hpp"

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "recorder/spaces.hpp"

// Compiled into this file: no xxHash library is needed at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cunumpy::Impl {
namespace {

/// What a device buffer held last, as this thread saw it copied.
struct Known {
  std::uint64_t nbytes = 0;
  std::uint64_t hash = 0;
};

/// Per thread, without a lock: a buffer copied by two threads is checked
/// on each separately. Bounded, so a program that copies into ever new
/// buffers does not grow it.
std::unordered_map<const void*, Known>& known_buffers() {
  thread_local std::unordered_map<const void*, Known> known;
  return known;
}
constexpr std::size_t max_known_buffers = 4096;

std::uint64_t hash(const void* data, std::uint64_t nbytes) noexcept {
  return XXH3_64bits(data, static_cast<std::size_t>(nbytes));
}

void remember(const void* device, std::uint64_t nbytes,
              std::uint64_t value) noexcept {
  try {
    auto& known = known_buffers();
    if (known.size() >= max_known_buffers)
      known.clear();
    known[device] = {nbytes, value};
  } catch (...) {
    // Out of memory: the next copy of this buffer is not found redundant.
  }
}

} // namespace

void begin_content_check(InFlightCopy& copy, const char* host_space) noexcept {
  const std::string_view name(host_space,
                              ::strnlen(host_space, space_name_size));
  copy.hash_contents =
      copy.nbytes > 0 && copy.dst_ptr != nullptr && copy.src_ptr != nullptr &&
      (copy.kind == EventKind::to_host || copy.kind == EventKind::to_device) &&
      (is_host_space_name(name) || name == "HBW");
  if (copy.hash_contents && copy.kind == EventKind::to_host)
    copy.content_before = hash(copy.dst_ptr, copy.nbytes);
}

Content end_content_check(const InFlightCopy& copy) noexcept {
  if (copy.kind == EventKind::to_host) {
    const std::uint64_t after = hash(copy.dst_ptr, copy.nbytes);
    remember(copy.src_ptr, copy.nbytes, after);
    return after == copy.content_before ? Content::unchanged : Content::changed;
  }
  const std::uint64_t value = hash(copy.src_ptr, copy.nbytes);
  const auto& known = known_buffers();
  const auto found = known.find(copy.dst_ptr);
  const bool same = found != known.end() &&
                    found->second.nbytes == copy.nbytes &&
                    found->second.hash == value;
  remember(copy.dst_ptr, copy.nbytes, value);
  return same ? Content::unchanged : Content::changed;
}

} // namespace cunumpy::Impl
