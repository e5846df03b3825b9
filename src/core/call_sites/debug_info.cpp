#include "call_sites/debug_info.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <zlib.h>
#include <zstd.h>

#include "support/file_kind.hpp"

namespace cunumpy::Impl {
namespace {

/// How deep a unit's entries are walked: deeper is a malformed file.
constexpr int max_depth = 64;

/// The most a compressed debug section may claim to hold per compressed
/// byte: deflate's limit, which libelf holds zlib sections to. Debug
/// information compresses some 3 to 10 times, with zstd too.
constexpr std::uint64_t max_compression_ratio = 1032;

std::string hex(const void* bytes, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    const auto byte = static_cast<const unsigned char*>(bytes)[i];
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

/// `first/second`, with one slash between them; either may be empty.
std::string joined_path(const std::string& first, const std::string& second) {
  if (first.empty() || second.empty())
    return first + second;
  return first + (first.back() == '/' ? "" : "/") +
         (second.front() == '/' ? second.substr(1) : second);
}

/// The path of an open file descriptor; empty when unknown.
std::string path_of(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char* resolved = fd >= 0 ? ::realpath(link, nullptr) : nullptr;
  std::string path = resolved != nullptr ? resolved : "";
  std::free(resolved);
  return path;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts)
    text += (text.empty() ? "" : ", ") + part;
  return text;
}

/// An ELF file opened for libdw, its zstd-compressed debug sections
/// decompressed in memory where the libelf cannot (elfutils before 0.189).
struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  std::string build_id; ///< hex; empty without one
  std::vector<std::unique_ptr<char[]>> decompressed;

  ElfFile() = default;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile() {
    if (elf != nullptr)
      ::elf_end(elf);
    if (fd >= 0)
      ::close(fd);
  }

  /// Opens `path`: "" when it is an ELF file, else why not. Only a
  /// regular file is read, whatever the path is by the time it is opened:
  /// the open never blocks (O_NONBLOCK), and what was opened is checked.
  std::string open(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
      return path + ": " + std::strerror(errno);
    if (std::string kind = not_regular(info); !kind.empty())
      return path + " is " + kind;
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
      return path + ": " + std::strerror(errno);
    if (::fstat(fd, &info) != 0)
      return path + ": " + std::strerror(errno);
    if (std::string kind = not_regular(info); !kind.empty())
      return path + " is " + kind;
    elf = ::elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, nullptr);
    if (elf == nullptr || ::elf_kind(elf) != ELF_K_ELF)
      return path + " is not an ELF file";
    const void* id = nullptr;
    const ssize_t size = ::dwelf_elf_gnu_build_id(elf, &id);
    if (size > 0)
      build_id = hex(id, static_cast<std::size_t>(size));
    return {};
  }

  /// Whether it holds debug information (.debug_info, compressed or not).
  bool has_debug_info() const {
    std::size_t names = 0;
    if (::elf_getshdrstrndx(elf, &names) != 0)
      return false;
    for (Elf_Scn* section = nullptr;
         (section = ::elf_nextscn(elf, section)) != nullptr;) {
      GElf_Shdr header;
      if (::gelf_getshdr(section, &header) == nullptr ||
          header.sh_type == SHT_NOBITS)
        continue;
      const char* name = ::elf_strptr(elf, names, header.sh_name);
      if (name != nullptr && (std::strcmp(name, ".debug_info") == 0 ||
                              std::strcmp(name, ".zdebug_info") == 0))
        return true;
    }
    return false;
  }

  /// Checks every compressed debug section's claimed size against its
  /// compressed bytes (and, for zstd, its frame's content size), before
  /// anything is allocated for it; with `decompress`, makes them readable
  /// by libdw: zlib it reads itself, zstd is decompressed here where its
  /// libelf cannot. "" when all can be read, else why not.
  std::string prepare_sections(bool decompress) {
    std::size_t names = 0;
    if (::elf_getshdrstrndx(elf, &names) != 0)
      return {};
    for (Elf_Scn* section = nullptr;
         (section = ::elf_nextscn(elf, section)) != nullptr;) {
      GElf_Shdr header;
      if (::gelf_getshdr(section, &header) == nullptr ||
          (header.sh_flags & SHF_COMPRESSED) == 0)
        continue;
      const char* name = ::elf_strptr(elf, names, header.sh_name);
      if (name == nullptr || std::strncmp(name, ".debug", 6) != 0)
        continue;
      GElf_Chdr compression;
      if (::gelf_getchdr(section, &compression) == nullptr)
        return std::string(name) + " has a malformed compression header";
      const Elf_Data* raw = ::elf_rawdata(section, nullptr);
      const std::size_t skip = ::gelf_getclass(elf) == ELFCLASS64
                                   ? sizeof(Elf64_Chdr)
                                   : sizeof(Elf32_Chdr);
      if (raw == nullptr || raw->d_size < skip)
        return std::string(name) + " is truncated";
      const char* bytes = static_cast<const char*>(raw->d_buf) + skip;
      const std::size_t compressed = raw->d_size - skip;
      if (std::string problem =
              claimed_size_problem(compression, bytes, compressed);
          !problem.empty())
        return std::string(name) + " " + problem;
      if (!decompress || compression.ch_type == ELFCOMPRESS_ZLIB ||
          ::elf_compress(section, 0, 0) >= 0)
        continue;
      if (compression.ch_type != zstd_compression)
        return "its debug sections are compressed with an algorithm "
               "cunumpy cannot read (ELF compression type " +
               std::to_string(compression.ch_type) + ")";
      std::string problem =
          decompress_zstd(section, header, compression, bytes, compressed);
      if (!problem.empty())
        return std::string(name) + ": " + problem;
    }
    return {};
  }

  /// Whether code outside this module, or a pointer, can call the function
  /// at `entry` (a link-time address): its address is stored in the file
  /// (a relocated word: a vtable, a function pointer; any word of the
  /// data of a program not position-independent), or it is exported.
  /// Otherwise only the module's direct calls reach it.
  bool stores_or_exports(GElf_Addr entry) const {
    GElf_Ehdr file;
    if (::gelf_getehdr(elf, &file) == nullptr)
      return true; // unknown: it may be
    for (Elf_Scn* section = nullptr;
         (section = ::elf_nextscn(elf, section)) != nullptr;) {
      GElf_Shdr header;
      if (::gelf_getshdr(section, &header) == nullptr)
        continue;
      Elf_Data* data = ::elf_getdata(section, nullptr);
      if (data == nullptr)
        continue;
      if (header.sh_type == SHT_RELA && header.sh_entsize > 0) {
        Elf_Data* symbols =
            ::elf_getdata(::elf_getscn(elf, header.sh_link), nullptr);
        for (std::size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
          GElf_Rela relocation;
          if (::gelf_getrela(data, static_cast<int>(i), &relocation) == nullptr)
            break;
          GElf_Addr target = relocation.r_addend;
          GElf_Sym symbol;
          if (GELF_R_SYM(relocation.r_info) != 0) {
            if (symbols == nullptr ||
                ::gelf_getsym(symbols,
                              static_cast<int>(GELF_R_SYM(relocation.r_info)),
                              &symbol) == nullptr)
              continue;
            target += symbol.st_value;
          }
          if (target == entry)
            return true;
        }
      } else if (header.sh_type == SHT_DYNSYM && header.sh_entsize > 0) {
        for (std::size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
          GElf_Sym symbol;
          if (::gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr)
            break;
          if (symbol.st_shndx != SHN_UNDEF && symbol.st_value == entry &&
              GELF_ST_TYPE(symbol.st_info) == STT_FUNC)
            return true;
        }
      } else if (file.e_type == ET_EXEC && header.sh_type != SHT_NOBITS &&
                 (header.sh_flags & SHF_ALLOC) != 0 &&
                 (header.sh_flags & SHF_EXECINSTR) == 0) {
        // Absolute addresses, relocated by no one.
        const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
        const std::size_t word = ::gelf_getclass(elf) == ELFCLASS64 ? 8 : 4;
        for (std::size_t at = 0; bytes != nullptr && at + word <= data->d_size;
             at += word) {
          std::uint64_t value = 0;
          std::memcpy(&value, bytes + at, word);
          if (value == entry)
            return true;
        }
      }
    }
    return false;
  }

private:
  static constexpr GElf_Word zstd_compression = 2; // ELFCOMPRESS_ZSTD

  /// Why a compressed section's claimed size cannot be right; "" when it
  /// can. No compressed debug section holds more than max_compression_ratio
  /// times its bytes, and a zstd frame that says its size must say the
  /// same: claims beyond are a damaged or hostile file, refused before
  /// anything is allocated for them.
  static std::string claimed_size_problem(const GElf_Chdr& compression,
                                          const char* bytes,
                                          std::size_t compressed) {
    const std::uint64_t claimed = compression.ch_size;
    if (claimed / max_compression_ratio > compressed)
      return "claims " + std::to_string(claimed) + " bytes compressed in " +
             std::to_string(compressed) + ", more than " +
             std::to_string(max_compression_ratio) +
             " times as many (a damaged file?)";
    if (compression.ch_type != zstd_compression)
      return {};
    const unsigned long long content =
        ZSTD_getFrameContentSize(bytes, compressed);
    if (content == ZSTD_CONTENTSIZE_ERROR)
      return "is not zstd data (a damaged file?)";
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != claimed)
      return "claims " + std::to_string(claimed) +
             " bytes, and its zstd frame " + std::to_string(content) +
             " (a damaged file?)";
    return {};
  }

  std::string decompress_zstd(Elf_Scn* section, GElf_Shdr header,
                              const GElf_Chdr& compression, const char* bytes,
                              std::size_t compressed) {
    // Within the bound checked: not zero-filled, so only what is
    // decompressed is ever touched.
    std::unique_ptr<char[]> buffer(new char[compression.ch_size]);
    const std::size_t size =
        ZSTD_decompress(buffer.get(), compression.ch_size, bytes, compressed);
    if (ZSTD_isError(size) || size != compression.ch_size)
      return "cannot be decompressed (zstd)";
    // The section's data and header, as an uncompressed section's: libdw
    // reads them as they are (the file is mapped privately).
    Elf_Data* data = ::elf_getdata(section, nullptr);
    if (data == nullptr)
      return "cannot be read";
    data->d_buf = buffer.get();
    data->d_size = size;
    data->d_type = ELF_T_BYTE;
    data->d_align = compression.ch_addralign;
    header.sh_flags &= ~static_cast<GElf_Xword>(SHF_COMPRESSED);
    header.sh_size = size;
    header.sh_addralign = compression.ch_addralign;
    if (::gelf_update_shdr(section, &header) == 0)
      return "cannot be read";
    decompressed.push_back(std::move(buffer));
    return {};
  }
};

/// Before libdw opens a file itself (blocking, unbounded): "" when `path`
/// does not exist (libdw's open fails too) or is an ELF file cunumpy would
/// read; else what is wrong with it ("/b/x.dwo is a FIFO (named pipe)").
std::string libdw_file_problem(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0)
    return {};
  ElfFile file;
  std::string problem = file.open(path);
  if (problem.empty())
    if (std::string sections = file.prepare_sections(false); !sections.empty())
      problem = path + ": " + sections;
  return problem;
}

/// The CRC-32 of a file, as .gnu_debuglink names its debug file's.
bool file_crc(int fd, std::uint32_t& crc) {
  unsigned long value = ::crc32(0, nullptr, 0);
  unsigned char buffer[1 << 16];
  for (off_t offset = 0;;) {
    const ssize_t count = ::pread(fd, buffer, sizeof buffer, offset);
    if (count < 0)
      return false;
    if (count == 0)
      break;
    value = ::crc32(value, buffer, static_cast<uInt>(count));
    offset += count;
  }
  crc = static_cast<std::uint32_t>(value);
  return true;
}

/// Where debuginfod's client keeps what it downloaded: its own rule
/// ($DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
/// ~/.cache/debuginfod_client). cunumpy reads the cache, never the network.
std::string debuginfod_cache() {
  if (const char* path = std::getenv("DEBUGINFOD_CACHE_PATH"); path && *path)
    return path;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
    return std::string(cache) + "/debuginfod_client";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/debuginfod_client";
  return {};
}

std::string attribute_string(Dwarf_Die* die, int name) {
  Dwarf_Attribute attribute;
  if (::dwarf_attr_integrate(die, name, &attribute) == nullptr)
    return {};
  const char* text = ::dwarf_formstring(&attribute);
  return text != nullptr ? text : "";
}

/// The linkage name (mangled), else the name of a function or of an
/// inlined call's function, following abstract origins and specifications.
std::string function_name(Dwarf_Die* die) {
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    std::string text = attribute_string(die, name);
    if (!text.empty())
      return text;
  }
  return {};
}

} // namespace

struct DebugInfo::State {
  ElfFile module;
  std::unique_ptr<ElfFile> separate; ///< the separate debug file, if used
  Dwarf* dwarf = nullptr;
  /// The file libdw reads (the module's, or its separate debug file), as
  /// libdw names it: split DWARF files are found from there.
  std::string debug_path;

  struct Function {
    Dwarf_Addr low, high;
    Dwarf_Die die;
  };
  struct Unit {
    Dwarf_Die die;      ///< the unit's entry (a skeleton's for split DWARF)
    Dwarf_Die top{};    ///< where its functions are: the split unit's entry
    bool read = false;  ///< top and functions found
    bool split = false; ///< a skeleton whose split unit was found
    /// Functions defined inside class bodies are in `functions` too (see
    /// function_at).
    bool whole = false;
    std::vector<Function> functions; ///< sorted by low
  };
  struct Range {
    Dwarf_Addr low, high;
    std::size_t unit;
  };
  std::vector<Unit> units;
  std::vector<Range> ranges; ///< sorted by low
  bool split_problem_noted = false;
  /// The .dwp beside the file libdw reads, checked once: "" when libdw
  /// may open it.
  std::optional<std::string> package_problem;
  /// Tail calls by the hash of their callee's name (tail_calls_into),
  /// made at the first question.
  std::optional<std::unordered_map<std::uint64_t, std::vector<Dwarf_Addr>>>
      tail_calls;

  ~State() {
    if (dwarf != nullptr)
      ::dwarf_end(dwarf);
  }

  void index_units();
  void read_unit(Unit& unit, std::string& problem);
  /// Why libdw must not look for the split unit of `skeleton`: a file it
  /// would open fails cunumpy's checks. "" when it may look.
  std::string split_files_problem(Dwarf_Die& skeleton);
  const Function* function_at(Unit& unit, Dwarf_Addr address);
  /// The unit's functions, sorted: with those defined inside class bodies
  /// when `whole`.
  void collect_unit_functions(Unit& unit, bool whole);
  /// The unit whose ranges hold `address`, and in `low` where that range
  /// starts; null in none.
  Unit* unit_at(Dwarf_Addr address, Dwarf_Addr* low = nullptr);
  std::vector<DebugLocation> locations(Dwarf_Addr address,
                                       std::string& problem);
  void index_tail_calls(std::string& problem);
  const Function* function_holding(Dwarf_Addr address, std::string& problem);
  std::vector<std::uint64_t> tail_calls_into(Dwarf_Addr address,
                                             std::string& problem);
};

std::string DebugInfo::libdw_version() {
  const char* version = ::dwfl_version(nullptr);
  return version != nullptr ? version : "";
}

DebugInfo::DebugInfo(const std::string& path,
                     const std::string& loaded_build_id) {
  try {
    state_ = std::make_unique<State>();
    open(path, loaded_build_id);
  } catch (const std::bad_alloc&) {
    give_up("not enough memory to read its debug information");
  } catch (const std::exception&) {
    give_up("its debug information cannot be read");
  }
}

void DebugInfo::give_up(const char* why) noexcept {
  failed_ = true;
  state_.reset(); // what was read so far may be incomplete: none is used
  try {
    problem_ = why;
  } catch (...) {
    problem_.clear(); // no memory for the text: at least no other text
  }
}

void DebugInfo::open(const std::string& path,
                     const std::string& loaded_build_id) {
  ::elf_version(EV_CURRENT);
  ElfFile& module = state_->module;
  problem_ = module.open(path);
  if (!problem_.empty())
    return;
  if (!loaded_build_id.empty() && module.build_id != loaded_build_id) {
    problem_ = path + " is not the file that was loaded (its build id "
                      "differs: rebuilt since?)";
    return;
  }
  // The real path: a separate debug file is found beside the file itself.
  char* resolved = ::realpath(path.c_str(), nullptr);
  const std::string real = resolved != nullptr ? resolved : path;
  std::free(resolved);

  ElfFile* with_debug = &module;
  if (!module.has_debug_info()) {
    // A separate debug file: by build id (Debian's -dbgsym and Fedora's
    // -debuginfo packages), in debuginfod's cache, by .gnu_debuglink
    // (objcopy --add-gnu-debuglink), as GDB looks for them.
    std::vector<std::string> candidates;
    const std::string& id = module.build_id;
    if (id.size() > 2) {
      candidates.push_back("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" +
                           id.substr(2) + ".debug");
      if (std::string cache = debuginfod_cache(); !cache.empty())
        candidates.push_back(cache + "/" + id + "/debuginfo");
    }
    GElf_Word link_crc = 0;
    const char* link = ::dwelf_elf_gnu_debuglink(module.elf, &link_crc);
    const std::size_t by_link = candidates.size();
    if (link != nullptr && *link != '\0') {
      const std::string directory = directory_of(real);
      candidates.push_back(directory + "/" + link);
      candidates.push_back(directory + "/.debug/" + link);
      candidates.push_back("/usr/lib/debug" + directory + "/" + link);
    }
    if (candidates.empty()) {
      problem_ = "no debug information (and no build id or .gnu_debuglink "
                 "to find a separate debug file by)";
      return;
    }
    std::vector<std::string> refused;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const std::string& candidate = candidates[i];
      if (candidate == real || !exists(candidate))
        continue;
      auto file = std::make_unique<ElfFile>();
      if (std::string problem = file->open(candidate); !problem.empty()) {
        refused.push_back(problem);
        continue;
      }
      bool matches = false;
      if (!id.empty())
        matches = file->build_id == id;
      else if (i >= by_link) {
        std::uint32_t crc = 0;
        matches = file_crc(file->fd, crc) && crc == link_crc;
      }
      if (!matches) {
        refused.push_back(candidate + " is another build's");
        continue;
      }
      if (!file->has_debug_info()) {
        refused.push_back(candidate + " has no debug information");
        continue;
      }
      state_->separate = std::move(file);
      break;
    }
    if (state_->separate == nullptr) {
      problem_ = "no debug information, and no separate debug file at " +
                 joined(candidates);
      if (!refused.empty())
        problem_ += " (" + joined(refused) + ")";
      return;
    }
    with_debug = state_->separate.get();
  }
  problem_ = with_debug->prepare_sections(true);
  if (!problem_.empty())
    return;
  state_->debug_path = path_of(with_debug->fd);
  state_->dwarf = ::dwarf_begin_elf(with_debug->elf, DWARF_C_READ, nullptr);
  if (state_->dwarf == nullptr) {
    problem_ = "its debug information cannot be read (" +
               std::string(::dwarf_errmsg(-1)) + ")";
    return;
  }
  state_->index_units();
}

DebugInfo::~DebugInfo() = default;

void DebugInfo::State::index_units() {
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  std::uint8_t type = 0;
  Dwarf_Die die;
  while (::dwarf_get_units(dwarf, cu, &next, &version, &type, &die, nullptr) ==
         0) {
    cu = next;
    if (type != DW_UT_compile && type != DW_UT_skeleton &&
        type != DW_UT_partial)
      continue;
    const std::size_t index = units.size();
    Dwarf_Addr base = 0, low = 0, high = 0;
    bool covered = false;
    for (ptrdiff_t offset = 0;
         (offset = ::dwarf_ranges(&die, offset, &base, &low, &high)) > 0;) {
      if (high > low)
        ranges.push_back({low, high, index});
      covered = true;
    }
    if (covered)
      units.push_back({die, {}, false, false, false, {}});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.low < b.low; });
}

namespace {

/// Every function with code in the entries under `parent`: in namespaces,
/// functions (a lambda's, a local class's, in the function that has it)
/// and, with `classes`, the bodies of classes outside functions. GCC and
/// Clang put the code of such a class's member functions outside its body,
/// in an entry that names its declaration there: those bodies hold most of
/// the entries of a unit that includes Kokkos, and are read only for an
/// address no function outside them holds.
void collect_functions(Dwarf_Die* parent,
                       std::vector<DebugInfo::State::Function>& functions,
                       int depth, bool classes) {
  Dwarf_Die child;
  if (depth > max_depth || ::dwarf_child(parent, &child) != 0)
    return;
  do {
    switch (::dwarf_tag(&child)) {
    case DW_TAG_subprogram: {
      Dwarf_Addr base = 0, low = 0, high = 0;
      for (ptrdiff_t offset = 0;
           (offset = ::dwarf_ranges(&child, offset, &base, &low, &high)) > 0;)
        if (high > low)
          functions.push_back({low, high, child});
      collect_functions(&child, functions, depth + 1, true);
      break;
    }
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
      if (!classes)
        break;
      [[fallthrough]];
    case DW_TAG_namespace:
    case DW_TAG_lexical_block:
      collect_functions(&child, functions, depth + 1, classes);
      break;
    default:
      break;
    }
  } while (::dwarf_siblingof(&child, &child) == 0);
}

/// The row of the line table for `address`, in the unit's range that
/// starts at `range_low`: the last one at or before it, as addr2line takes it
/// when several rows share an address; null past a sequence's end, and
/// when no row of that range comes before it (a row before it is other
/// code's: libdw sorts an end of sequence before a row at its address, and
/// a function the linker discarded keeps its rows near address 0).
Dwarf_Line* line_row(Dwarf_Die* unit, Dwarf_Addr address,
                     Dwarf_Addr range_low) {
  Dwarf_Lines* lines = nullptr;
  std::size_t count = 0;
  if (::dwarf_getsrclines(unit, &lines, &count) != 0 || count == 0)
    return nullptr;
  const auto address_of = [&](std::size_t index) {
    Dwarf_Addr at = 0;
    ::dwarf_lineaddr(::dwarf_onesrcline(lines, index), &at);
    return at;
  };
  std::size_t low = 0, high = count; // the first row after `address`
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (address_of(middle) <= address)
      low = middle + 1;
    else
      high = middle;
  }
  if (low == 0 || address_of(low - 1) < range_low)
    return nullptr;
  Dwarf_Line* row = ::dwarf_onesrcline(lines, low - 1);
  bool end = false;
  if (::dwarf_lineendsequence(row, &end) != 0 || end)
    return nullptr;
  return row;
}

/// A name's key in the index of tail calls: names of C++ templates run to
/// kilobytes, and only equality matters.
std::uint64_t name_key(const std::string& name) {
  std::uint64_t hash = 1469598103934665603ull; // FNV-1a
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

using TailCalls = std::unordered_map<std::uint64_t, std::vector<Dwarf_Addr>>;

/// A call site entry that is a tail call: its callee's name and the
/// address of its jump (DWARF 5's, and GCC's DWARF 4 extension).
void add_tail_call(Dwarf_Die* call, TailCalls& calls) {
  Dwarf_Attribute attribute;
  bool tail = false;
  if ((::dwarf_attr(call, DW_AT_call_tail_call, &attribute) == nullptr &&
       ::dwarf_attr(call, DW_AT_GNU_tail_call, &attribute) == nullptr) ||
      ::dwarf_formflag(&attribute, &tail) != 0 || !tail)
    return;
  Dwarf_Addr after = 0;
  if ((::dwarf_attr(call, DW_AT_call_return_pc, &attribute) == nullptr &&
       ::dwarf_attr(call, DW_AT_low_pc, &attribute) == nullptr) ||
      ::dwarf_formaddr(&attribute, &after) != 0 || after == 0)
    return;
  Dwarf_Die callee;
  if ((::dwarf_attr(call, DW_AT_call_origin, &attribute) == nullptr &&
       ::dwarf_attr(call, DW_AT_abstract_origin, &attribute) == nullptr) ||
      ::dwarf_formref_die(&attribute, &callee) == nullptr)
    return;
  const std::string name = function_name(&callee);
  if (!name.empty())
    calls[name_key(name)].push_back(after - 1); // the jump's last byte
}

/// Every tail call under `parent`, in functions, their inlined calls and
/// blocks, and the namespaces and classes that hold functions.
void collect_tail_calls(Dwarf_Die* parent, TailCalls& calls, int depth) {
  Dwarf_Die child;
  if (depth > max_depth || ::dwarf_child(parent, &child) != 0)
    return;
  do {
    switch (::dwarf_tag(&child)) {
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
      add_tail_call(&child, calls);
      break;
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
      collect_tail_calls(&child, calls, depth + 1);
      break;
    default:
      break;
    }
  } while (::dwarf_siblingof(&child, &child) == 0);
}

} // namespace

void DebugInfo::State::read_unit(Unit& unit, std::string& problem) {
  unit.top = unit.die;
  unit.split = false;
  Dwarf_Half version = 0;
  std::uint8_t type = 0;
  if (::dwarf_cu_info(unit.die.cu, &version, &type, nullptr, nullptr, nullptr,
                      nullptr, nullptr) == 0 &&
      type == DW_UT_skeleton) {
    // libdw opens the split unit's file itself: only after cunumpy's checks.
    std::string refused = split_files_problem(unit.die);
    Dwarf_Die split;
    std::memset(&split, 0, sizeof split);
    if (refused.empty())
      ::dwarf_cu_info(unit.die.cu, &version, &type, nullptr, &split, nullptr,
                      nullptr, nullptr);
    if (split.cu != nullptr) {
      unit.top = split;
      unit.split = true;
    } else if (!split_problem_noted) {
      // The line table is the skeleton's: lines still resolve, inlined
      // calls are not expanded.
      split_problem_noted = true;
      std::string text;
      if (!refused.empty()) {
        text =
            "split DWARF: " + refused + ", so inlined calls are not expanded";
      } else {
        std::string name = attribute_string(&unit.die, DW_AT_dwo_name);
        if (name.empty())
          name = attribute_string(&unit.die, DW_AT_GNU_dwo_name);
        // Where libdw looked: the compiler's directory, relative to the
        // debug file's when it is relative itself.
        std::string directory = attribute_string(&unit.die, DW_AT_comp_dir);
        if (directory.empty() || directory.front() != '/')
          directory = joined_path(directory_of(debug_path), directory);
        if (name.empty() || name.front() != '/')
          name = joined_path(directory, name);
        text = "split DWARF: " + name +
               " not found, so inlined calls are not expanded";
        if (exists(debug_path + ".dwp"))
          text += "; " + debug_path +
                  ".dwp is a DWARF package, which libdw reads from elfutils "
                  "0.191 (this one is " +
                  libdw_version() + ")";
      }
      if (problem.empty())
        problem = text;
    }
  }
  collect_unit_functions(unit, false);
  unit.read = true;
}

void DebugInfo::State::collect_unit_functions(Unit& unit, bool whole) {
  unit.functions.clear();
  collect_functions(&unit.top, unit.functions, 0, whole);
  std::sort(unit.functions.begin(), unit.functions.end(),
            [](const Function& a, const Function& b) { return a.low < b.low; });
  unit.whole = whole;
}

std::string DebugInfo::State::split_files_problem(Dwarf_Die& skeleton) {
  // The files libdw_find_split_unit.c opens, in its order: a package
  // beside the file it reads (elfutils 0.191 on; checked whatever the
  // version), then the unit's .dwo by its name in that file's directory,
  // then in the compiler's directory (__libdw_filepath). A file replaced
  // between this check and libdw's open is not covered; the symbolizer
  // runs outside the recorder's mutex, so no event waits for it.
  if (!package_problem)
    package_problem =
        debug_path.empty() ? "" : libdw_file_problem(debug_path + ".dwp");
  if (!package_problem->empty())
    return *package_problem;
  Dwarf_Attribute attribute;
  const char* name = nullptr;
  if (::dwarf_attr(&skeleton, DW_AT_dwo_name, &attribute) != nullptr ||
      ::dwarf_attr(&skeleton, DW_AT_GNU_dwo_name, &attribute) != nullptr)
    name = ::dwarf_formstring(&attribute);
  if (name == nullptr || *name == '\0')
    return {};
  const char* compiler_directory = nullptr;
  if (::dwarf_attr(&skeleton, DW_AT_comp_dir, &attribute) != nullptr)
    compiler_directory = ::dwarf_formstring(&attribute);
  // libdw's directory of the file it reads ends with a slash.
  const std::string directory = directory_of(debug_path) + "/";
  const auto path_in = [&](const char* under) -> std::string {
    if (name[0] == '/')
      return name;
    if (under != nullptr && under[0] == '/')
      return joined_path(under, name);
    if (debug_path.empty())
      return {};
    return joined_path(joined_path(directory, under != nullptr ? under : ""),
                       name);
  };
  std::string problem = libdw_file_problem(path_in(nullptr));
  if (problem.empty() && compiler_directory != nullptr)
    problem = libdw_file_problem(path_in(compiler_directory));
  return problem;
}

const DebugInfo::State::Function*
DebugInfo::State::function_at(Unit& unit, Dwarf_Addr address) {
  auto it = std::upper_bound(
      unit.functions.begin(), unit.functions.end(), address,
      [](Dwarf_Addr a, const Function& f) { return a < f.low; });
  // The smallest range holding it: functions do not overlap, except for a
  // malformed file; look a few back for one that holds it.
  const Function* best = nullptr;
  for (int steps = 0; it != unit.functions.begin() && steps < 16; ++steps) {
    --it;
    if (address < it->high &&
        (best == nullptr || it->high - it->low < best->high - best->low))
      best = &*it;
  }
  if (best == nullptr && !unit.whole) {
    collect_unit_functions(unit, true); // a function inside a class body?
    return function_at(unit, address);
  }
  return best;
}

DebugInfo::State::Unit* DebugInfo::State::unit_at(Dwarf_Addr address,
                                                  Dwarf_Addr* low) {
  auto it = std::upper_bound(
      ranges.begin(), ranges.end(), address,
      [](Dwarf_Addr a, const State::Range& r) { return a < r.low; });
  for (int steps = 0; it != ranges.begin() && steps < 16; ++steps) {
    --it;
    if (address < it->high) {
      if (low != nullptr)
        *low = it->low;
      return &units[it->unit];
    }
  }
  return nullptr;
}

std::vector<DebugLocation> DebugInfo::locations(std::uint64_t address) {
  if (failed_ || state_->dwarf == nullptr)
    return {};
  try {
    return state_->locations(address, problem_);
  } catch (const std::bad_alloc&) {
    give_up("not enough memory to read its debug information");
  } catch (const std::exception&) {
    give_up("its debug information cannot be read");
  }
  return {};
}

std::vector<DebugLocation> DebugInfo::State::locations(Dwarf_Addr address,
                                                       std::string& problem) {
  std::vector<DebugLocation> result;
  Dwarf_Addr range_low = 0;
  Unit* found = unit_at(address, &range_low);
  if (found == nullptr)
    return result;
  Unit& unit = *found;
  if (!unit.read)
    read_unit(unit, problem);

  // Where the address is: the line table's row (the skeleton's for split
  // DWARF).
  DebugLocation innermost;
  if (Dwarf_Line* row = line_row(&unit.die, address, range_low)) {
    const char* file = ::dwarf_linesrc(row, nullptr, nullptr);
    int line = 0;
    ::dwarf_lineno(row, &line);
    innermost.file = file != nullptr ? file : "";
    innermost.line = line;
  }
  // The function, then the inlined calls it is in, outermost first.
  const Function* function = function_at(unit, address);
  std::vector<Dwarf_Die> inlined;
  if (function != nullptr) {
    Dwarf_Die scope = function->die;
    for (int depth = 0; depth < max_depth; ++depth) {
      Dwarf_Die child;
      bool deeper = false;
      if (::dwarf_child(&scope, &child) == 0) {
        do {
          const int tag = ::dwarf_tag(&child);
          if ((tag == DW_TAG_inlined_subroutine ||
               tag == DW_TAG_lexical_block) &&
              ::dwarf_haspc(&child, address) > 0) {
            if (tag == DW_TAG_inlined_subroutine)
              inlined.push_back(child);
            scope = child;
            deeper = true;
            break;
          }
        } while (::dwarf_siblingof(&child, &child) == 0);
      }
      if (!deeper)
        break;
    }
  }
  Dwarf_Die function_die;
  if (function != nullptr)
    function_die = function->die;
  const auto name_of = [&](std::size_t level) -> std::string {
    // level: how many inlined calls deep; 0 is the function itself.
    if (level > 0)
      return function_name(&inlined[level - 1]);
    return function != nullptr ? function_name(&function_die) : "";
  };
  innermost.function = name_of(inlined.size());
  result.push_back(std::move(innermost));
  if (inlined.empty())
    return result;
  Dwarf_Files* files = nullptr;
  std::size_t file_count = 0;
  if (::dwarf_getsrcfiles(&unit.top, &files, &file_count) != 0 &&
      ::dwarf_getsrcfiles(&unit.die, &files, &file_count) != 0)
    files = nullptr;
  for (std::size_t level = inlined.size(); level > 0; --level) {
    Dwarf_Die& call = inlined[level - 1];
    DebugLocation caller;
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (files != nullptr &&
        ::dwarf_formudata(::dwarf_attr(&call, DW_AT_call_file, &attribute),
                          &value) == 0 &&
        value < file_count) {
      const char* file = ::dwarf_filesrc(files, value, nullptr, nullptr);
      caller.file = file != nullptr ? file : "";
    }
    if (::dwarf_formudata(::dwarf_attr(&call, DW_AT_call_line, &attribute),
                          &value) == 0)
      caller.line = static_cast<int>(value);
    caller.function = name_of(level - 1);
    result.push_back(std::move(caller));
  }
  return result;
}

void DebugInfo::State::index_tail_calls(std::string& problem) {
  tail_calls.emplace();
  for (Unit& unit : units) {
    if (!unit.read)
      read_unit(unit, problem);
    collect_tail_calls(&unit.top, *tail_calls, 0);
  }
}

std::vector<std::uint64_t> DebugInfo::tail_calls_into(std::uint64_t address) {
  if (failed_ || state_->dwarf == nullptr)
    return {};
  try {
    return state_->tail_calls_into(address, problem_);
  } catch (const std::bad_alloc&) {
    give_up("not enough memory to read its debug information");
  } catch (const std::exception&) {
    give_up("its debug information cannot be read");
  }
  return {};
}

const DebugInfo::State::Function*
DebugInfo::State::function_holding(Dwarf_Addr address, std::string& problem) {
  Unit* unit = unit_at(address);
  if (unit == nullptr)
    return nullptr;
  if (!unit->read)
    read_unit(*unit, problem);
  return function_at(*unit, address);
}

std::vector<std::uint64_t>
DebugInfo::State::tail_calls_into(Dwarf_Addr address, std::string& problem) {
  const Function* function = function_holding(address, problem);
  if (function == nullptr)
    return {};
  Dwarf_Die die = function->die;
  const std::string name = function_name(&die);
  if (name.empty())
    return {};
  // Every unit's entries, once: only asked where no frame had a line.
  if (!tail_calls)
    index_tail_calls(problem);
  const auto found = tail_calls->find(name_key(name));
  if (found == tail_calls->end())
    return {};
  // The frame under the callee's is not a direct call of this module (it
  // would have had a line): the caller was called from another module or
  // through a pointer, or reached by a tail call itself.
  std::vector<std::uint64_t> jumps;
  for (const Dwarf_Addr jump : found->second) {
    const Function* caller = function_holding(jump, problem);
    if (caller == nullptr)
      continue;
    Dwarf_Die caller_die = caller->die;
    Dwarf_Addr entry = 0;
    if (::dwarf_entrypc(&caller_die, &entry) != 0)
      entry = caller->low;
    if (module.stores_or_exports(entry) ||
        tail_calls->count(name_key(function_name(&caller_die))) != 0)
      jumps.push_back(jump);
  }
  return jumps;
}

} // namespace cunumpy::Impl
