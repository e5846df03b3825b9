#ifndef CUNUMPY_SRC_CALL_SITES_DEBUG_INFO_HPP
#define CUNUMPY_SRC_CALL_SITES_DEBUG_INFO_HPP

// A module's debug information, read with elfutils' libdw: from the module's
// file, or from a separate debug file (found by build id, in debuginfod's
// cache, or by .gnu_debuglink), with sections compressed (zlib, zstd) or
// not, and split DWARF (.dwo files; a .dwp package where the libdw reads
// it). Read when a report resolves a site, never on the event path nor under
// the recorder's mutex. Not thread-safe (the recorder's symbolizer mutex
// guards it).
//
// Every file read is bounded by its own size: only regular files are
// opened (never blocking, whatever the path has become), and a compressed
// section's claimed size is checked against its compressed bytes before
// anything is allocated. libdw opens the files of split DWARF itself: they
// are checked the same way first, and not read when they fail.

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
  /// ...", "split DWARF: /b/x.dwo is a FIFO (named pipe), ..."); empty when
  /// nothing is missing. Never throws: what could not be read for want of
  /// memory is said here.
  const std::string& problem() const noexcept { return problem_; }

  /// The locations of `address` (a link-time address of this module),
  /// innermost first: where it is (from the line table), then, for each
  /// inlined function it is in, where that was called from. Empty without
  /// debug information or when no unit covers it.
  std::vector<DebugLocation> locations(std::uint64_t address);

  /// The tail calls that may have reached the function holding `address`
  /// from outside this module's direct calls: the addresses of the jumps
  /// whose callee has that function's name, in functions that another
  /// module or a pointer can call (their address stored in the file, or
  /// exported) or that tail calls reach in turn. A tail call replaces its
  /// caller's frame, so a stack shows none of it; with exactly one, that
  /// jump is where the function was reached from.
  std::vector<std::uint64_t> tail_calls_into(std::uint64_t address);

  /// libdw's version ("0.188").
  static std::string libdw_version();

  struct State;

private:
  void open(const std::string& path, const std::string& loaded_build_id);
  /// After an exception while reading: nothing more is read; says why.
  void give_up(const char* why) noexcept;

  std::unique_ptr<State> state_;
  std::string problem_;
  bool failed_ = false;
};

} // namespace cunumpy::Impl

#endif
