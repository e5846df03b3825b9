#include "call_sites/modules.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cstring>
#include <elf.h>
#include <unistd.h>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::Impl {
namespace {

/// An address of the core's own code: the core is one of cunumpy's modules
/// wherever it is loaded, without noting itself.
void core_marker() {}

/// Addresses inside the modules that noted themselves; a module notes
/// itself once, so a few slots are enough (the Kokkos-facing library, the
/// plugin, the Python module).
constexpr int max_own = 8;
/// Plain words read and written atomically (__atomic builtins): an array
/// of std::atomic gets a dynamic initializer in sanitizer builds, and the
/// libraries note themselves from their own static initializers.
std::uintptr_t own_addresses[max_own] = {};
std::atomic<int> own_count{0};

bool holds(const dl_phdr_info& info, std::uintptr_t address) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    const std::uintptr_t low = info.dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && address >= low &&
        address - low < segment.p_memsz)
      return true;
  }
  return false;
}

bool is_main_program(const dl_phdr_info& info) {
  return info.dlpi_name == nullptr || info.dlpi_name[0] == '\0';
}

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// The GNU build-id note of a loaded module, in hex; empty without one.
std::string build_id_of(const dl_phdr_info& info) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    if (segment.p_type != PT_NOTE)
      continue;
    const std::size_t align = segment.p_align == 8 ? 8 : 4;
    const auto round = [align](std::size_t n) {
      return (n + align - 1) / align * align;
    };
    const char* note =
        reinterpret_cast<const char*>(info.dlpi_addr + segment.p_vaddr);
    const char* const end = note + segment.p_memsz;
    while (end - note >= static_cast<std::ptrdiff_t>(sizeof(ElfW(Nhdr)))) {
      ElfW(Nhdr) header;
      std::memcpy(&header, note, sizeof header);
      const char* name = note + sizeof header;
      const char* description = name + round(header.n_namesz);
      const char* next = description + round(header.n_descsz);
      if (next > end || next <= note)
        break;
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && header.n_descsz > 0 &&
          header.n_descsz <= 64) {
        std::string id;
        for (std::size_t b = 0; b < header.n_descsz; ++b) {
          const auto byte = static_cast<unsigned char>(description[b]);
          id += digits[byte >> 4];
          id += digits[byte & 15];
        }
        return id;
      }
      note = next;
    }
  }
  return {};
}

} // namespace

void note_own_module(const void* address) noexcept {
  const auto value = reinterpret_cast<std::uintptr_t>(address);
  const int count =
      std::min(own_count.load(std::memory_order_acquire), max_own);
  for (int i = 0; i < count; ++i)
    if (__atomic_load_n(&own_addresses[i], __ATOMIC_RELAXED) == value)
      return;
  const int slot = own_count.fetch_add(1, std::memory_order_acq_rel);
  if (slot < max_own)
    __atomic_store_n(&own_addresses[slot], value, __ATOMIC_RELEASE);
}

bool is_own_module(const dl_phdr_info& info) noexcept {
  if (is_main_program(info))
    return false;
  if (holds(info, reinterpret_cast<std::uintptr_t>(&core_marker)))
    return true;
  const int count =
      std::min(own_count.load(std::memory_order_acquire), max_own);
  for (int i = 0; i < count; ++i) {
    const std::uintptr_t address =
        __atomic_load_n(&own_addresses[i], __ATOMIC_ACQUIRE);
    if (address != 0 && holds(info, address))
      return true;
  }
  return false;
}

bool is_library_module_name(std::string_view path) noexcept {
  const std::string_view name = basename_of(path);
  const auto starts = [name](std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
  };
  const auto has_kokkos = [name] {
    static constexpr std::string_view kokkos = "kokkos";
    return std::search(name.begin(), name.end(), kokkos.begin(), kokkos.end(),
                       [](char a, char b) {
                         return std::tolower(static_cast<unsigned char>(a)) ==
                                b;
                       }) != name.end();
  };
  // Kokkos, Kokkos Kernels, Trilinos' Kokkos, Kokkos Tools libraries.
  if (has_kokkos() || starts("libkp_"))
    return true;
  for (std::string_view runtime :
       {"libc.so",    "libc-",        "libstdc++",   "libgcc_s",  "ld-linux",
        "linux-vdso", "libm.so",      "libpthread",  "libdl.so",  "libpython",
        "libgomp",    "python3",      "libcuda.so",  "libcudart", "libcupti",
        "libcublas",  "libcusparse",  "libcusolver", "libcufft",  "libcurand",
        "libnccl",    "libnvToolsExt"})
    if (starts(runtime))
      return true;
  return name == "python";
}

bool is_library_module(const dl_phdr_info& info) noexcept {
  return is_own_module(info) ||
         is_library_module_name(info.dlpi_name != nullptr ? info.dlpi_name
                                                          : "");
}

std::uint64_t modules_generation() noexcept {
  std::uint64_t generation = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        *static_cast<std::uint64_t*>(data) = info->dlpi_adds + info->dlpi_subs;
        return 1;
      },
      &generation);
  return generation + std::uint64_t(own_count.load(std::memory_order_acquire));
}

bool find_module(std::uintptr_t address, LoadedModule& module) {
  struct Search {
    std::uintptr_t address;
    LoadedModule* module;
    bool main_program = false;
    bool found = false;
  } search{address, &module};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        if (!holds(*info, search->address))
          return 0;
        search->found = true;
        search->main_program = is_main_program(*info);
        LoadedModule& found = *search->module;
        found.path = search->main_program ? "/proc/self/exe" : info->dlpi_name;
        found.bias = info->dlpi_addr;
        found.begin = ~std::uintptr_t(0);
        found.end = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD)
            continue;
          const std::uintptr_t low = info->dlpi_addr + segment.p_vaddr;
          found.begin = std::min(found.begin, low);
          found.end = std::max(found.end, low + segment.p_memsz);
        }
        found.build_id = build_id_of(*info);
        found.library = is_library_module(*info);
        return 1;
      },
      &search);
  if (!search.found)
    return false;
  module.name = std::string(basename_of(module.path));
  if (search.main_program) {
    char target[PATH_MAX];
    const ssize_t length = ::readlink("/proc/self/exe", target, sizeof target);
    if (length > 0)
      module.name = std::string(
          basename_of(std::string_view(target, std::size_t(length))));
  }
  return true;
}

} // namespace cunumpy::Impl
