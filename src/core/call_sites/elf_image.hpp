#ifndef CUNUMPY_SRC_CALL_SITES_ELF_IMAGE_HPP
#define CUNUMPY_SRC_CALL_SITES_ELF_IMAGE_HPP

// A module's ELF file, mapped read-only, and the sections the symbolizer
// reads: what its section headers say, without reading any section.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cunumpy::Impl {

/// Bytes of a section (empty when missing).
struct Bytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool empty() const noexcept { return size == 0; }
};

/// The DWARF sections a call site is read from.
struct DwarfSections {
  Bytes info, abbrev, line, str, line_str, str_offsets, addr, ranges, rnglists,
      aranges;
};

class ElfImage {
public:
  /// Maps the file at `path`: a regular file (a FIFO or a device is never
  /// opened for reading, so it cannot block), a 64-bit ELF file of this
  /// machine's byte order. usable() says whether it was.
  explicit ElfImage(const std::string& path);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  bool usable() const noexcept { return base_ != nullptr; }
  /// Its GNU build id in hex (empty without one).
  const std::string& build_id() const noexcept { return build_id_; }
  /// The debug sections, when it has .debug_info and .debug_line, neither
  /// compressed nor split off (a separate debug file, DWARF objects): what
  /// the symbolizer reads. False for a stripped module.
  bool dwarf(DwarfSections& sections) const noexcept;

private:
  Bytes section(std::string_view name, bool& compressed) const noexcept;

  const std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::string build_id_;
};

} // namespace cunumpy::Impl

#endif
