#ifndef CUNUMPY_SRC_CALL_SITES_DWARF_READER_HPP
#define CUNUMPY_SRC_CALL_SITES_DWARF_READER_HPP

// The source locations of a code address, read from a module's DWARF debug
// information (versions 2 to 5, as GCC and Clang write it) with no library:
// the line table row of the address, and the calls of the inlined functions
// it is in. Only what an address needs is read: its compilation unit (found
// through .debug_aranges, else the units' address ranges), the functions of
// that unit with their address ranges (indexed once per unit), the one
// function holding the address walked down to its inlined calls, and the
// one sequence of the unit's line program that covers it. A unit that
// includes Kokkos has tens of thousands of entries and rows; a program a
// few call sites. Not thread-safe (the recorder's mutex guards it).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "call_sites/dwarf_format.hpp"

namespace cunumpy::Impl::dwarf {

/// Where an address is in the source, or where an inlined call it is in was
/// made.
struct Location {
  std::string file; ///< full path; empty when unknown
  int line = 0;     ///< 0: unknown
  /// The function it is in, as an entry of .debug_info (function_name
  /// reads its name); 0 when unknown.
  std::uint64_t function = 0;
};

class Reader {
public:
  explicit Reader(const DwarfSections& sections);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// Whether a file is a library's, whose locations are never a call site.
  using FileFilter = bool (*)(std::string_view file);

  /// The locations of `address` (a link-time address of this module),
  /// innermost first: where it is (from the line table), then for each
  /// inlined function it is in, where that was called from. Empty when no
  /// unit covers it. When the function the address is in is declared in a
  /// file `library_file` accepts, the first location is that file, without
  /// a line: its row is not read.
  std::vector<Location> locations(std::uint64_t address,
                                  FileFilter library_file = nullptr);

  /// The linkage name (mangled) or else the name of a Location's function,
  /// following its abstract origin and specification; empty when none.
  std::string function_name(std::uint64_t function);

  struct Unit;
  struct Range {
    std::uint64_t low, high, target; ///< target: a unit's or an entry's offset
  };

private:
  Unit* unit_of(std::uint64_t address);
  /// The unit holding the entry at `offset` in .debug_info, its own entry
  /// read; null when none (or it cannot be read).
  Unit* unit_at(std::uint64_t offset);
  void read_units();
  /// The file a function is declared in (DW_AT_decl_file, following its
  /// abstract origin or specification); ~0 when none.
  std::uint64_t declared_file(std::uint64_t function);
  void read_aranges();
  static void sort_ranges(std::vector<Range>& ranges);

  DwarfSections sections_;
  std::vector<std::unique_ptr<Unit>> units_; // by offset
  bool units_read_ = false;
  /// The units' address ranges, from .debug_aranges or else from the
  /// units' own entries; sorted by low.
  std::vector<Range> unit_ranges_;
  bool unit_ranges_from_entries_ = false;
};

} // namespace cunumpy::Impl::dwarf

#endif
