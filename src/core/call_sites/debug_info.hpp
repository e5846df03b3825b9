#ifndef CUNUMPY_SRC_CALL_SITES_DEBUG_INFO_HPP
#define CUNUMPY_SRC_CALL_SITES_DEBUG_INFO_HPP

// A module's debug information, read with elfutils' libdw: from the module's
// file, or from a separate debug file (found by build id, in debuginfod's
// cache, or by .gnu_debuglink), with sections compressed (zlib, zstd) or
// not, and split DWARF (.dwo files; a .dwp package where the libdw reads
// it). Read when a report resolves a site, never on the event path. Not
// thread-safe (the recorder's mutex guards it).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cunumpy::Impl {

/// Where an address is in the source, or where an inlined call it is in was
/// made.
struct DebugLocation {
  std::string file; ///< full path; empty when unknown
  int line = 0;     ///< 0: unknown
  /// The function it is in: its linkage (mangled) name, else its name;
  /// empty when unknown.
  std::string function;
};

class DebugInfo {
public:
  /// Opens the module file at `path`; `loaded_build_id` (hex, empty when
  /// none) is the build id of the code in memory: a file with another one
  /// (rebuilt since it was loaded) is not read.
  DebugInfo(const std::string& path, const std::string& loaded_build_id);
  ~DebugInfo();
  DebugInfo(const DebugInfo&) = delete;
  DebugInfo& operator=(const DebugInfo&) = delete;

  /// Why this module's frames have no line, or have lines without their
  /// inlined calls ("no debug information, and no separate debug file at
  /// ..."); empty when nothing is missing.
  const std::string& problem() const noexcept { return problem_; }

  /// The locations of `address` (a link-time address of this module),
  /// innermost first: where it is (from the line table), then, for each
  /// inlined function it is in, where that was called from. Empty without
  /// debug information or when no unit covers it.
  std::vector<DebugLocation> locations(std::uint64_t address);

  /// libdw's version ("0.188").
  static std::string libdw_version();

  struct State;

private:
  std::unique_ptr<State> state_;
  std::string problem_;
};

} // namespace cunumpy::Impl

#endif
