#ifndef CUNUMPY_SRC_SUPPORT_IDENTITY_HPP
#define CUNUMPY_SRC_SUPPORT_IDENTITY_HPP

// One core per process. The plugin, the library and the Python module of
// any installs link the core by its soname (libcunumpy_core.so.MAJOR.MINOR),
// so the dynamic loader gives them all the one the process loaded first:
// one recorder, each copy counted once. They may use it only when it is the
// build they were compiled against: its identity (version and a digest of the
// headers they share: cmake/identity.cmake) is
// theirs. The check is made by each front end with its own code and the
// core's C entry point alone, which any core has, whatever its layout.
//
// A core of another version has another soname: the process then loads two
// cores, and the library finds the plugin that feeds the other one in
// Kokkos' table (src/kokkos/install.cpp).

#include <dlfcn.h>
#include <string>

#include "build_identity.hpp"

extern "C" {
/// This core's build identity, "0.1.0 <digest>". Weak where the front ends
/// link a shared core: one too old to have it leaves it null. A static
/// core is the front end's own build, linked in whole.
#ifdef CUNUMPY_SHARED_CORE
__attribute__((weak)) const char* cunumpy_core_identity() noexcept;
#else
const char* cunumpy_core_identity() noexcept;
#endif
}

namespace cunumpy::Impl {

/// The file of the module that holds `address`; "(unknown file)" when the
/// loader cannot tell.
inline std::string module_file(const void* address) {
  Dl_info info{};
  if (address != nullptr && ::dladdr(address, &info) != 0 &&
      info.dli_fname != nullptr && info.dli_fname[0] != '\0')
    return info.dli_fname;
  return "(unknown file)";
}

/// Empty when the core loaded in this process is the build the calling
/// front end was compiled against; else one line naming both files, both
/// identities and what to do. `front_end` names the caller ("the plugin",
/// "the Python module"), `self` is an address inside it.
inline std::string core_mismatch(const char* front_end, const void* self) {
  const char* const core =
      cunumpy_core_identity != nullptr ? cunumpy_core_identity() : nullptr;
  if (core != nullptr && std::string(core) == CUNUMPY_BUILD_IDENTITY)
    return {};
  const std::string core_file =
      cunumpy_core_identity != nullptr
          ? module_file(reinterpret_cast<const void*>(&cunumpy_core_identity))
          : std::string("an older cunumpy core");
  return std::string(front_end) + " " + module_file(self) + " (cunumpy " +
         CUNUMPY_BUILD_IDENTITY + ") was given the cunumpy core the process " +
         "loaded first, " + core_file + " (cunumpy " +
         (core != nullptr ? core : "of unknown identity") +
         "), another build: they cannot share one recorder; load the plugin " +
         "of the install the program's cunumpy comes from (`python -m " +
         "cunumpy.plugin` prints the pip install's), or install the same " +
         "cunumpy in both places";
}

} // namespace cunumpy::Impl

#endif
