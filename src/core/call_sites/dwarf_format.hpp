#ifndef CUNUMPY_SRC_CALL_SITES_DWARF_FORMAT_HPP
#define CUNUMPY_SRC_CALL_SITES_DWARF_FORMAT_HPP

// The parts of the DWARF format (versions 2 to 5, the DWARF 5 standard's
// names) the symbolizer reads, and a reader of bytes that checks every read
// against the end of its section: a malformed or hostile file makes a read
// fail (ok() false), never one out of bounds.

#include <cstdint>
#include <cstring>

#include "call_sites/elf_image.hpp"

namespace cunumpy::Impl::dwarf {

// Tags.
constexpr std::uint64_t tag_lexical_block = 0x0b;
constexpr std::uint64_t tag_compile_unit = 0x11;
constexpr std::uint64_t tag_inlined_subroutine = 0x1d;
constexpr std::uint64_t tag_catch_block = 0x25;
constexpr std::uint64_t tag_subprogram = 0x2e;
constexpr std::uint64_t tag_try_block = 0x32;
constexpr std::uint64_t tag_namespace = 0x39;
constexpr std::uint64_t tag_partial_unit = 0x3c;

// Attributes.
constexpr std::uint64_t at_sibling = 0x01;
constexpr std::uint64_t at_name = 0x03;
constexpr std::uint64_t at_stmt_list = 0x10;
constexpr std::uint64_t at_low_pc = 0x11;
constexpr std::uint64_t at_high_pc = 0x12;
constexpr std::uint64_t at_comp_dir = 0x1b;
constexpr std::uint64_t at_abstract_origin = 0x31;
constexpr std::uint64_t at_decl_file = 0x3a;
constexpr std::uint64_t at_specification = 0x47;
constexpr std::uint64_t at_ranges = 0x55;
constexpr std::uint64_t at_call_file = 0x58;
constexpr std::uint64_t at_call_line = 0x59;
constexpr std::uint64_t at_linkage_name = 0x6e;
constexpr std::uint64_t at_str_offsets_base = 0x72;
constexpr std::uint64_t at_addr_base = 0x73;
constexpr std::uint64_t at_rnglists_base = 0x74;
constexpr std::uint64_t at_mips_linkage_name = 0x2007;
constexpr std::uint64_t at_gnu_addr_base = 0x2133;

// Forms.
constexpr std::uint64_t form_addr = 0x01;
constexpr std::uint64_t form_block2 = 0x03;
constexpr std::uint64_t form_block4 = 0x04;
constexpr std::uint64_t form_data2 = 0x05;
constexpr std::uint64_t form_data4 = 0x06;
constexpr std::uint64_t form_data8 = 0x07;
constexpr std::uint64_t form_string = 0x08;
constexpr std::uint64_t form_block = 0x09;
constexpr std::uint64_t form_block1 = 0x0a;
constexpr std::uint64_t form_data1 = 0x0b;
constexpr std::uint64_t form_flag = 0x0c;
constexpr std::uint64_t form_sdata = 0x0d;
constexpr std::uint64_t form_strp = 0x0e;
constexpr std::uint64_t form_udata = 0x0f;
constexpr std::uint64_t form_ref_addr = 0x10;
constexpr std::uint64_t form_ref1 = 0x11;
constexpr std::uint64_t form_ref2 = 0x12;
constexpr std::uint64_t form_ref4 = 0x13;
constexpr std::uint64_t form_ref8 = 0x14;
constexpr std::uint64_t form_ref_udata = 0x15;
constexpr std::uint64_t form_indirect = 0x16;
constexpr std::uint64_t form_sec_offset = 0x17;
constexpr std::uint64_t form_exprloc = 0x18;
constexpr std::uint64_t form_flag_present = 0x19;
constexpr std::uint64_t form_strx = 0x1a;
constexpr std::uint64_t form_addrx = 0x1b;
constexpr std::uint64_t form_ref_sup4 = 0x1c;
constexpr std::uint64_t form_strp_sup = 0x1d;
constexpr std::uint64_t form_data16 = 0x1e;
constexpr std::uint64_t form_line_strp = 0x1f;
constexpr std::uint64_t form_ref_sig8 = 0x20;
constexpr std::uint64_t form_implicit_const = 0x21;
constexpr std::uint64_t form_loclistx = 0x22;
constexpr std::uint64_t form_rnglistx = 0x23;
constexpr std::uint64_t form_ref_sup8 = 0x24;
constexpr std::uint64_t form_strx1 = 0x25;
constexpr std::uint64_t form_strx4 = 0x28;
constexpr std::uint64_t form_addrx1 = 0x29;
constexpr std::uint64_t form_addrx4 = 0x2c;
constexpr std::uint64_t form_gnu_addr_index = 0x1f01;
constexpr std::uint64_t form_gnu_str_index = 0x1f02;
constexpr std::uint64_t form_gnu_ref_alt = 0x1f20;
constexpr std::uint64_t form_gnu_strp_alt = 0x1f21;

/// Reads one section's bytes; a read past the end fails and every later
/// one too.
class Cursor {
public:
  Cursor() = default;
  Cursor(Bytes bytes, std::uint64_t offset = 0) noexcept
      : begin_(bytes.data), end_(bytes.data + bytes.size) {
    at_ = offset <= bytes.size ? begin_ + offset : end_;
    ok_ = offset <= bytes.size;
  }

  bool ok() const noexcept { return ok_; }
  bool at_end() const noexcept { return at_ >= end_; }
  std::uint64_t offset() const noexcept { return std::uint64_t(at_ - begin_); }
  const std::uint8_t* position() const noexcept { return at_; }
  /// Moves to `offset` in the section; fails past its end.
  void seek(std::uint64_t offset) noexcept {
    if (offset > std::uint64_t(end_ - begin_))
      ok_ = false;
    else
      at_ = begin_ + offset;
  }
  void skip(std::uint64_t size) noexcept {
    if (ok_ && std::uint64_t(end_ - at_) >= size)
      at_ += size;
    else
      ok_ = false;
  }
  /// A little-endian integer of `size` bytes (1 to 8).
  std::uint64_t fixed(unsigned size) noexcept {
    if (!ok_ || std::uint64_t(end_ - at_) < size) {
      ok_ = false;
      return 0;
    }
    std::uint64_t value = 0;
    std::memcpy(&value, at_, size); // x86-64 and the like: little-endian
    at_ += size;
    return value;
  }
  std::uint8_t u8() noexcept {
    if (ok_ && at_ < end_)
      return *at_++;
    ok_ = false;
    return 0;
  }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(fixed(2)); }
  std::uint64_t uleb() noexcept {
    if (ok_ && at_ < end_ && *at_ < 0x80) // one byte: most of them
      return *at_++;
    std::uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (!ok_ || at_ >= end_) {
        ok_ = false;
        return 0;
      }
      const std::uint8_t byte = *at_++;
      if (shift < 64)
        value |= std::uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        return value;
    }
  }
  std::int64_t sleb() noexcept {
    std::uint64_t value = 0;
    unsigned shift = 0;
    std::uint8_t byte = 0;
    do {
      if (!ok_ || at_ >= end_) {
        ok_ = false;
        return 0;
      }
      byte = *at_++;
      if (shift < 64)
        value |= std::uint64_t(byte & 0x7f) << shift;
      shift += 7;
    } while ((byte & 0x80) != 0);
    if (shift < 64 && (byte & 0x40) != 0)
      value |= ~std::uint64_t(0) << shift;
    return static_cast<std::int64_t>(value);
  }
  /// A NUL-terminated string inside the section; null when none is.
  const char* string() noexcept {
    const void* nul =
        ok_ ? std::memchr(at_, 0, std::size_t(end_ - at_)) : nullptr;
    if (nul == nullptr) {
      ok_ = false;
      return nullptr;
    }
    const char* text = reinterpret_cast<const char*>(at_);
    at_ = static_cast<const std::uint8_t*>(nul) + 1;
    return text;
  }
  /// A unit's initial length: sets `dwarf64` and returns the length.
  std::uint64_t initial_length(bool& dwarf64) noexcept {
    std::uint64_t length = fixed(4);
    dwarf64 = length == 0xffffffffu;
    if (dwarf64)
      length = fixed(8);
    return length;
  }

private:
  const std::uint8_t* begin_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  const std::uint8_t* at_ = nullptr;
  bool ok_ = false;
};

/// The NUL-terminated string at `offset` in a string section; null when
/// there is none.
inline const char* string_at(Bytes section, std::uint64_t offset) noexcept {
  Cursor cursor(section, offset);
  return cursor.ok() ? cursor.string() : nullptr;
}

} // namespace cunumpy::Impl::dwarf

#endif
