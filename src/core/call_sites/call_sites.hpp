#ifndef CUNUMPY_SRC_CALL_SITES_HPP
#define CUNUMPY_SRC_CALL_SITES_HPP

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <cunumpy/event.hpp>

namespace cunumpy::Impl {

class Symbolizer;

/// Call sites by id. A site is either known (file, line and function given by
/// a cunumpy call or a front end) or a captured stack, symbolized once, the
/// first time it is resolved, into the first frame outside Kokkos, cunumpy
/// and the system libraries. Id 0 is the unknown site. Not thread-safe; the
/// recorder's mutex guards it.
class SiteTable {
public:
  SiteTable();
  ~SiteTable();

  std::uint32_t known(std::string_view file, int line,
                      std::string_view function);
  /// `fallback` (a known site, or 0) is used when no frame of the stack has
  /// a file and line, e.g. a Python line for C++ code without debug
  /// information.
  std::uint32_t stack(const void* const* frames, int count,
                      std::uint32_t fallback);

  const CallSite& resolve(std::uint32_t id);

  std::size_t size() const noexcept { return entries_.size(); }

private:
  struct Entry {
    std::vector<const void*> frames; // empty for known sites
    std::uint32_t fallback = 0;
    std::optional<CallSite> resolved;
  };

  CallSite symbolize(const Entry& entry);

  std::deque<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t> known_index_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> stack_index_;
  std::uint32_t last_stack_ = 0; ///< the id stack() returned last, 0: none
  std::unique_ptr<Symbolizer> symbolizer_;
};

/// One source-level frame of an address: inlined calls expand into several.
struct SourceFrame {
  std::string module;
  std::string file;
  int line = 0;
  std::string function;
  std::uintptr_t offset = 0; ///< address relative to the module
  /// In a library's module (modules.hpp: cunumpy's own by identity).
  bool library = false;
};

/// Turns return addresses into source frames with elfutils' libdw,
/// following inlined calls; SiteTable caches sites. libdw is set up at the
/// first address.
class Symbolizer {
public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// Source frames of the return address `pc`, innermost first.
  std::vector<SourceFrame> frames(const void* pc);

private:
  struct State;
  std::unique_ptr<State> state_;
};

/// True when a frame belongs to Kokkos, cunumpy, the C/C++ runtime or the
/// Python interpreter, and is skipped when looking for the caller: its
/// module is a library's (by identity for cunumpy's, by name for the
/// others), or its file or function is.
bool is_library_frame(const SourceFrame& frame);

} // namespace cunumpy::Impl

#endif
