#ifndef CUNUMPY_SRC_CALL_SITES_DWARF_LINES_HPP
#define CUNUMPY_SRC_CALL_SITES_DWARF_LINES_HPP

// One compilation unit's line table (.debug_line, versions 2 to 5).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "call_sites/dwarf_format.hpp"

namespace cunumpy::Impl::dwarf {

class LineTable {
public:
  /// Reads the header of the line program at `offset` in .debug_line (its
  /// file names, as full paths: a relative one under its directory, a
  /// relative directory under the unit's `comp_dir`). ok() says whether it
  /// could.
  LineTable(const DwarfSections& sections, std::uint64_t offset,
            const std::string& comp_dir);

  bool ok() const noexcept { return ok_; }

  /// The file and line of the row that covers `address`; false when no
  /// sequence of the program does. The program is run once, as far as
  /// lookups need: as it goes, its sequences (a unit has one per function
  /// section) and every 32nd row's state are kept, and a lookup in what
  /// was run goes on from the last of those before its address.
  bool find(std::uint64_t address, std::string& file, int& line);

  /// The path of file `index` as the program numbers it (DW_AT_call_file
  /// uses the same numbers): relative to its directory, and that to the
  /// unit's directory. Empty when there is no such file.
  std::string file(std::uint64_t index) const;

private:
  struct Row {
    std::uint64_t address = 0;
    std::uint64_t file = 1;
    std::int64_t line = 1;
  };
  /// A row, and where the program goes on after it: 24 bytes.
  struct Checkpoint {
    std::uint64_t address;
    std::uint32_t file;
    std::int32_t line;
    std::uint64_t next;
  };
  struct Sequence {
    std::uint64_t low, high; ///< its first row's address, its end's
    std::uint64_t start;     ///< where its opcodes begin in .debug_line
    std::size_t first, last; ///< its checkpoints
  };

  bool read_entry_formats(
      Cursor& cursor,
      std::vector<std::pair<std::uint64_t, std::uint64_t>>& formats);
  /// Runs the program from `from` with the registers `state` (a sequence's
  /// start and Row(), or a checkpoint). For each row it calls `row(state,
  /// end_of_sequence, offset after it)`, which returns true to stop.
  template <class RowFunction>
  void run(std::uint64_t from, Row state, RowFunction&& row);
  /// Runs the program on from where it stopped until a row covers
  /// `address` (`found`); false when none does up to its end.
  bool scan(std::uint64_t address, Row& found);
  /// The row of `address` in a sequence the scan read.
  bool row_in(const Sequence& sequence, std::uint64_t address, Row& best);

  const DwarfSections& sections_;
  bool ok_ = false;
  bool dwarf64_ = false;
  std::uint16_t version_ = 0;
  std::uint8_t address_size_ = 8;
  std::uint8_t min_instruction_length_ = 1;
  std::int8_t line_base_ = 0;
  std::uint8_t line_range_ = 1;
  std::uint8_t opcode_base_ = 1;
  std::vector<std::uint8_t> standard_lengths_;
  /// What each special opcode adds to the address and the line.
  std::uint16_t address_advance_[256] = {};
  std::int16_t line_advance_[256] = {};
  std::uint64_t program_ = 0; ///< the first opcode's offset
  std::uint64_t end_ = 0;     ///< the program's end offset
  /// The header's names, in the mapped file; paths are made when asked.
  struct File {
    const char* name;
    std::uint64_t directory;
  };
  std::string comp_dir_;
  std::vector<const char*> directories_;
  std::vector<File> files_;
  std::vector<Sequence> sequences_; // those the scan completed
  bool sorted_ = true;              // by low
  std::vector<Checkpoint> checkpoints_;
  /// Where the scan of the program is.
  struct Scan {
    std::uint64_t at = 0;    ///< its next opcode
    Row state;               ///< the registers there
    Row previous;            ///< the last row read
    std::size_t rows = 0;    ///< of the sequence it is in
    std::uint64_t low = 0;   ///< that sequence's first address
    std::uint64_t start = 0; ///< where it begins
    std::size_t first = 0;   ///< its first checkpoint
    bool done = false;       ///< at the program's end
  } scan_;
};

} // namespace cunumpy::Impl::dwarf

#endif
