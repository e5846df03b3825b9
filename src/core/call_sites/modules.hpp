#ifndef CUNUMPY_SRC_CALL_SITES_MODULES_HPP
#define CUNUMPY_SRC_CALL_SITES_MODULES_HPP

// The modules (executable, shared libraries) loaded in the process, as the
// dynamic loader lists them, and which of them are libraries whose frames
// are never a call site: cunumpy's own, recognized by identity (a module
// holding an address of cunumpy's code), and Kokkos', the C/C++ runtimes',
// Python's and CUDA's, by name.

#include <cstdint>
#include <link.h>
#include <string>
#include <string_view>

namespace cunumpy::Impl {

/// Whether `info` is one of cunumpy's modules: the core's, and those that
/// noted themselves (note_own_module). Never the main program: a static
/// link puts cunumpy into the program, whose frames are call sites.
bool is_own_module(const dl_phdr_info& info) noexcept;

/// Whether a module's file name is that of a library whose frames are
/// never a call site: Kokkos' (and Kokkos Tools libraries', libkp_*), the
/// C/C++ runtimes', Python's, CUDA's (a copy CUDA's record reports is
/// captured in CUPTI's callback, under them).
bool is_library_module_name(std::string_view path) noexcept;

/// is_own_module, or is_library_module_name of its file.
bool is_library_module(const dl_phdr_info& info) noexcept;

/// Changes whenever a library is loaded or unloaded (dl_iterate_phdr's
/// counters) or a module notes itself as cunumpy's: what was decided
/// from the list of modules must be decided again. About 10 ns.
std::uint64_t modules_generation() noexcept;

/// The module that holds a code address.
struct LoadedModule {
  std::string path;         ///< as loaded; "/proc/self/exe" for the program
  std::string name;         ///< the file's name, for module+offset sites
  std::uintptr_t bias = 0;  ///< load address minus link-time address
  std::uintptr_t begin = 0; ///< its loaded segments' span
  std::uintptr_t end = 0;
  std::string build_id; ///< its GNU build-id note in memory, in hex
  bool library = false; ///< is_library_module
};

/// The module holding `address`; false when none does.
bool find_module(std::uintptr_t address, LoadedModule& module);

} // namespace cunumpy::Impl

#endif
