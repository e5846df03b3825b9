#include "call_sites/elf_image.hpp"

#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cunumpy::Impl {
namespace {

template <class T>
bool read_at(const std::uint8_t* base, std::size_t size, std::uint64_t offset,
             T& value) {
  if (offset > size || size - offset < sizeof(T))
    return false;
  std::memcpy(&value, base + offset, sizeof(T));
  return true;
}

} // namespace

ElfImage::ElfImage(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return;
  struct stat status {};
  void* mapped = MAP_FAILED;
  if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
      status.st_size >= static_cast<off_t>(sizeof(ElfW(Ehdr))))
    mapped = ::mmap(nullptr, static_cast<std::size_t>(status.st_size),
                    PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED)
    return;
  base_ = static_cast<const std::uint8_t*>(mapped);
  size_ = static_cast<std::size_t>(status.st_size);
  ElfW(Ehdr) header;
  std::memcpy(&header, base_, sizeof header);
  const bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] !=
          (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      header.e_ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB) ||
      header.e_shentsize != sizeof(ElfW(Shdr))) {
    ::munmap(const_cast<std::uint8_t*>(base_), size_);
    base_ = nullptr;
    return;
  }
  bool compressed = false;
  const Bytes note = section(".note.gnu.build-id", compressed);
  ElfW(Nhdr) id{};
  if (!compressed && read_at(note.data, note.size, 0, id) &&
      id.n_type == NT_GNU_BUILD_ID && id.n_namesz == 4 && id.n_descsz <= 64 &&
      sizeof id + 4 + id.n_descsz <= note.size) {
    static const char digits[] = "0123456789abcdef";
    for (std::size_t b = 0; b < id.n_descsz; ++b) {
      const std::uint8_t byte = note.data[sizeof id + 4 + b];
      build_id_ += digits[byte >> 4];
      build_id_ += digits[byte & 15];
    }
  }
}

ElfImage::~ElfImage() {
  if (base_ != nullptr)
    ::munmap(const_cast<std::uint8_t*>(base_), size_);
}

Bytes ElfImage::section(std::string_view name,
                        bool& compressed) const noexcept {
  compressed = false;
  ElfW(Ehdr) header;
  std::memcpy(&header, base_, sizeof header);
  ElfW(Shdr) names;
  if (header.e_shstrndx == SHN_UNDEF || header.e_shstrndx >= header.e_shnum ||
      !read_at(base_, size_,
               header.e_shoff + std::uint64_t(header.e_shstrndx) * sizeof names,
               names) ||
      names.sh_offset > size_ || size_ - names.sh_offset < names.sh_size)
    return {};
  for (std::size_t i = 1; i < header.e_shnum; ++i) {
    ElfW(Shdr) candidate;
    if (!read_at(base_, size_, header.e_shoff + i * sizeof candidate,
                 candidate))
      return {};
    if (candidate.sh_name >= names.sh_size)
      continue;
    const char* text = reinterpret_cast<const char*>(base_ + names.sh_offset +
                                                     candidate.sh_name);
    const std::size_t room = names.sh_size - candidate.sh_name;
    if (strnlen(text, room) != name.size() ||
        std::memcmp(text, name.data(), name.size()) != 0)
      continue;
    if (candidate.sh_type == SHT_NOBITS || candidate.sh_offset > size_ ||
        size_ - candidate.sh_offset < candidate.sh_size)
      return {};
    compressed = (candidate.sh_flags & SHF_COMPRESSED) != 0;
    return {base_ + candidate.sh_offset, candidate.sh_size};
  }
  return {};
}

bool ElfImage::dwarf(DwarfSections& sections) const noexcept {
  if (base_ == nullptr)
    return false;
  bool any_compressed = false;
  const auto get = [&](std::string_view name) {
    bool compressed = false;
    const Bytes bytes = section(name, compressed);
    any_compressed = any_compressed || compressed;
    return bytes;
  };
  sections.info = get(".debug_info");
  sections.abbrev = get(".debug_abbrev");
  sections.line = get(".debug_line");
  sections.str = get(".debug_str");
  sections.line_str = get(".debug_line_str");
  sections.str_offsets = get(".debug_str_offsets");
  sections.addr = get(".debug_addr");
  sections.ranges = get(".debug_ranges");
  sections.rnglists = get(".debug_rnglists");
  sections.aranges = get(".debug_aranges");
  return !any_compressed && !sections.info.empty() &&
         !sections.abbrev.empty() && !sections.line.empty();
}

} // namespace cunumpy::Impl
