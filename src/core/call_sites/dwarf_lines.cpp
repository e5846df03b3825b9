#include "call_sites/dwarf_lines.hpp"

#include <algorithm>
#include <cstring>

namespace cunumpy::Impl::dwarf {
namespace {

constexpr std::uint64_t content_path = 1;            // DW_LNCT_path
constexpr std::uint64_t content_directory_index = 2; // DW_LNCT_directory_index

/// `name` under `directory`, itself under `comp_dir` when relative.
std::string join(const std::string& comp_dir, std::string_view directory,
                 std::string_view name) {
  if (!name.empty() && name[0] == '/')
    return std::string(name);
  std::string path;
  if (!directory.empty() && directory[0] != '/' && !comp_dir.empty() &&
      directory != comp_dir)
    path.append(comp_dir).append(1, '/');
  path.append(directory);
  if (!path.empty() && path.back() != '/')
    path += '/';
  return path.append(name);
}

} // namespace

LineTable::LineTable(const DwarfSections& sections, std::uint64_t offset,
                     const std::string& comp_dir)
    : sections_(sections) {
  Cursor cursor(sections.line, offset);
  const std::uint64_t length = cursor.initial_length(dwarf64_);
  if (!cursor.ok() || length > sections.line.size - cursor.offset())
    return;
  end_ = cursor.offset() + length;
  // Reads stop at the program's end.
  cursor = Cursor(Bytes{sections.line.data, end_}, cursor.offset());
  version_ = cursor.u16();
  if (version_ < 2 || version_ > 5)
    return;
  if (version_ >= 5) {
    address_size_ = cursor.u8();
    cursor.u8(); // segment selector size
  }
  const std::uint64_t header_length = cursor.fixed(dwarf64_ ? 8 : 4);
  program_ = cursor.offset() + header_length;
  min_instruction_length_ = cursor.u8();
  if (version_ >= 4)
    cursor.u8(); // operations per instruction: VLIW machines only
  cursor.u8();   // default_is_stmt: every row counts
  line_base_ = static_cast<std::int8_t>(cursor.u8());
  line_range_ = cursor.u8();
  opcode_base_ = cursor.u8();
  if (!cursor.ok() || line_range_ == 0 || opcode_base_ == 0)
    return;
  standard_lengths_.resize(opcode_base_ - 1u);
  for (std::uint8_t& length_of : standard_lengths_)
    length_of = cursor.u8();
  for (unsigned opcode = opcode_base_; opcode < 256; ++opcode) {
    const unsigned adjusted = opcode - opcode_base_;
    address_advance_[opcode] = static_cast<std::uint16_t>(
        min_instruction_length_ * (adjusted / line_range_));
    line_advance_[opcode] =
        static_cast<std::int16_t>(line_base_ + int(adjusted % line_range_));
  }

  comp_dir_ = comp_dir;
  if (version_ >= 5) {
    // Entries described by (content, form) pairs: directory 0 and file 0
    // are the unit's own.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> formats;
    for (int list = 0; list < 2 && cursor.ok(); ++list) {
      if (!read_entry_formats(cursor, formats))
        return;
      const std::uint64_t count = cursor.uleb();
      for (std::uint64_t i = 0; i < count && cursor.ok(); ++i) {
        const char* path = "";
        std::uint64_t directory = 0;
        for (const auto& [content, form] : formats) {
          std::uint64_t number = 0;
          const char* text = nullptr;
          switch (form) {
          case form_string:
            text = cursor.string();
            break;
          case form_line_strp:
            text = string_at(sections.line_str, cursor.fixed(dwarf64_ ? 8 : 4));
            break;
          case form_strp:
            text = string_at(sections.str, cursor.fixed(dwarf64_ ? 8 : 4));
            break;
          case form_udata:
            number = cursor.uleb();
            break;
          case form_data1:
          case form_data2:
          case form_data4:
          case form_data8:
            number = cursor.fixed(form == form_data1   ? 1
                                  : form == form_data2 ? 2
                                  : form == form_data4 ? 4
                                                       : 8);
            break;
          case form_data16:
            cursor.skip(16);
            break;
          case form_block:
            cursor.skip(cursor.uleb());
            break;
          default:
            return; // a form a line table header does not use
          }
          if (content == content_path && text != nullptr)
            path = text;
          else if (content == content_directory_index)
            directory = number;
        }
        if (list == 0)
          directories_.push_back(path);
        else
          files_.push_back({path, directory});
      }
    }
  } else {
    // Directory 0 is the unit's; file numbers start at 1.
    directories_.push_back(comp_dir_.c_str());
    while (cursor.ok()) {
      const char* directory = cursor.string();
      if (directory == nullptr || directory[0] == '\0')
        break;
      directories_.push_back(directory);
    }
    files_.push_back({"", 0});
    while (cursor.ok()) {
      const char* name = cursor.string();
      if (name == nullptr || name[0] == '\0')
        break;
      const std::uint64_t directory = cursor.uleb();
      cursor.uleb(); // modification time
      cursor.uleb(); // length
      files_.push_back({name, directory});
    }
  }
  ok_ = cursor.ok() && program_ <= end_;
  scan_.at = scan_.start = program_;
}

bool LineTable::read_entry_formats(
    Cursor& cursor,
    std::vector<std::pair<std::uint64_t, std::uint64_t>>& formats) {
  formats.clear();
  const std::uint8_t count = cursor.u8();
  for (std::uint8_t i = 0; i < count && cursor.ok(); ++i) {
    const std::uint64_t content = cursor.uleb();
    formats.emplace_back(content, cursor.uleb());
  }
  return cursor.ok();
}

template <class RowFunction>
void LineTable::run(std::uint64_t from, Row state, RowFunction&& row) {
  // A pointer, not a Cursor: the index runs every opcode of the program
  // once, most of them one byte (special opcodes).
  const std::uint8_t* const begin = sections_.line.data;
  const std::uint8_t* const end = begin + end_;
  const std::uint8_t* at = begin + from;
  // LEB128 numbers; one that runs past the end ends the program.
  const auto uleb = [&at, end] {
    std::uint64_t value = 0;
    for (unsigned shift = 0; at < end; shift += 7) {
      const std::uint8_t byte = *at++;
      if (shift < 64)
        value |= std::uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        break;
    }
    return value;
  };
  const auto sleb = [&at, end] {
    std::uint64_t value = 0;
    unsigned shift = 0;
    std::uint8_t byte = 0;
    while (at < end) {
      byte = *at++;
      if (shift < 64)
        value |= std::uint64_t(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0)
        break;
    }
    if (shift < 64 && (byte & 0x40) != 0)
      value |= ~std::uint64_t(0) << shift;
    return static_cast<std::int64_t>(value);
  };
  while (at < end) {
    const std::uint8_t opcode = *at++;
    if (opcode >= opcode_base_) { // special: advance the address and line
      state.address += address_advance_[opcode];
      state.line += line_advance_[opcode];
      if (row(state, false, std::uint64_t(at - begin)))
        return;
      continue;
    }
    switch (opcode) {
    case 0: { // extended
      const std::uint64_t length = uleb();
      if (length == 0 || length > std::uint64_t(end - at))
        return;
      const std::uint8_t* const next = at + length;
      const std::uint8_t extended = *at++;
      if (extended == 1) { // end_sequence
        if (row(state, true, std::uint64_t(next - begin)))
          return;
        state = Row();
      } else if (extended == 2 && length - 1 <= 8) { // set_address
        state.address = 0;
        std::memcpy(&state.address, at, length - 1); // little-endian
      }
      // Others (set_discriminator; define_file, which no compiler of this
      // century writes) are skipped.
      at = next;
      break;
    }
    case 1: // copy
      if (row(state, false, std::uint64_t(at - begin)))
        return;
      break;
    case 2: // advance_pc
      state.address += min_instruction_length_ * uleb();
      break;
    case 3: // advance_line
      state.line += sleb();
      break;
    case 4: // set_file
      state.file = uleb();
      break;
    case 8: // const_add_pc
      state.address +=
          min_instruction_length_ * ((255u - opcode_base_) / line_range_);
      break;
    case 9: // fixed_advance_pc
      if (end - at < 2)
        return;
      state.address += std::uint64_t(at[0]) | std::uint64_t(at[1]) << 8;
      at += 2;
      break;
    case 6:  // negate_stmt
    case 7:  // set_basic_block
    case 10: // set_prologue_end
    case 11: // set_epilogue_begin
      break;
    default: // set_column, set_isa, and opcodes of later versions
      for (std::uint8_t i = 0; i < standard_lengths_[opcode - 1u]; ++i)
        uleb();
    }
  }
}

bool LineTable::scan(std::uint64_t address, Row& found) {
  if (scan_.rows == 0 && scan_.at == program_)
    checkpoints_.reserve((end_ - program_) / 128); // about one per 32 rows
  bool covered = false;
  Row previous = scan_.previous;
  // Inlined into the loop: it runs for every row the scan reads.
  run(
      scan_.at, scan_.state,
      [&](const Row& row, bool end_of_sequence, std::uint64_t next)
          __attribute__((always_inline)) {
            if (++scan_.rows == 1) {
              scan_.low = row.address;
              scan_.first = checkpoints_.size();
            }
            const bool holds = scan_.rows > 1 && scan_.low != 0 &&
                               scan_.low <= address && address < row.address;
            if (!end_of_sequence) {
              if ((scan_.rows & 31) == 0 && row.file <= UINT32_MAX &&
                  row.line >= INT32_MIN && row.line <= INT32_MAX)
                checkpoints_.push_back(
                    {row.address, static_cast<std::uint32_t>(row.file),
                     static_cast<std::int32_t>(row.line), next});
              if (holds) { // stop here; the next lookup goes on from here
                found = previous;
                covered = true;
                scan_.state = row;
                scan_.at = next;
              }
              previous = row;
              return covered;
            }
            // A sequence at address 0 is a function the linker dropped.
            if (scan_.low != 0 && row.address > scan_.low) {
              sequences_.push_back({scan_.low, row.address, scan_.start,
                                    scan_.first, checkpoints_.size()});
              sorted_ = false;
            } else {
              checkpoints_.resize(scan_.first);
            }
            if (holds) {
              found = previous;
              covered = true;
            }
            scan_.start = next;
            scan_.at = next;
            scan_.state = Row();
            scan_.rows = 0;
            return covered;
          });
  scan_.previous = previous;
  if (!covered)
    scan_.done = true;
  return covered;
}

bool LineTable::find(std::uint64_t address, std::string& file, int& line) {
  if (!ok_)
    return false;
  Row best;
  if (!sorted_) {
    std::sort(
        sequences_.begin(), sequences_.end(),
        [](const Sequence& a, const Sequence& b) { return a.low < b.low; });
    sorted_ = true;
  }
  auto it = std::upper_bound(sequences_.begin(), sequences_.end(), address,
                             [](std::uint64_t a, const Sequence& sequence) {
                               return a < sequence.low;
                             });
  if (it != sequences_.begin() && address < (it - 1)->high) {
    if (!row_in(*(it - 1), address, best))
      return false;
  } else if (scan_.rows > 1 && scan_.low != 0 && scan_.low <= address &&
             address < scan_.state.address) {
    // In the sequence the scan stopped in, before where it stopped.
    if (!row_in({scan_.low, scan_.state.address, scan_.start, scan_.first,
                 checkpoints_.size()},
                address, best))
      return false;
  } else if (scan_.done || !scan(address, best)) {
    return false;
  }
  file = this->file(best.file);
  line =
      best.line > 0 && best.line <= INT32_MAX ? static_cast<int>(best.line) : 0;
  return true;
}

bool LineTable::row_in(const Sequence& sequence, std::uint64_t address,
                       Row& best) {
  // The last row at or before the address (the last of several at one
  // address) covers it, up to the next row: from the last checkpoint
  // before it.
  const auto first = checkpoints_.begin() + std::ptrdiff_t(sequence.first);
  auto checkpoint = std::upper_bound(
      first, checkpoints_.begin() + std::ptrdiff_t(sequence.last), address,
      [](std::uint64_t a, const Checkpoint& c) { return a < c.address; });
  bool found = false;
  best = Row();
  std::uint64_t from = sequence.start;
  if (checkpoint != first) {
    --checkpoint;
    best = {checkpoint->address, checkpoint->file, checkpoint->line};
    found = true;
    from = checkpoint->next;
  }
  run(from, best, [&](const Row& row, bool end_of_sequence, std::uint64_t) {
    if (row.address > address)
      return true;
    if (end_of_sequence) {
      found = false;
      return true;
    }
    best = row;
    found = true;
    return false;
  });
  return found;
}

std::string LineTable::file(std::uint64_t index) const {
  if (index >= files_.size() || files_[index].name[0] == '\0')
    return {};
  const File& file = files_[index];
  return join(
      comp_dir_,
      file.directory < directories_.size() ? directories_[file.directory] : "",
      file.name);
}

} // namespace cunumpy::Impl::dwarf
