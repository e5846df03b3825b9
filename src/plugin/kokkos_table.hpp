#ifndef CUNUMPY_PLUGIN_KOKKOS_TABLE_HPP
#define CUNUMPY_PLUGIN_KOKKOS_TABLE_HPP

// The table of callbacks of the Kokkos that loaded the plugin, reached
// without linking any Kokkos: its functions are looked up by name in the
// library that called kokkosp_init_library (a shared libkokkoscore, or a
// program or Python extension with Kokkos linked in that exports them).
// Another Kokkos of the same process (a second application module, a
// system Kokkos) is never taken for it.

#include <string>

#include "tools/callbacks.hpp"

namespace cunumpy::plugin {

/// Finds Kokkos' table functions for the Kokkos whose code contains
/// `caller` (the return address of kokkosp_init_library). When `caller` is
/// another tool (one that loaded this plugin and forwards to it), the
/// process' first Kokkos is taken if its table holds that tool's
/// kokkosp_init_library. Returns the access (empty when not found) and, in
/// `library`, the file it was found in, or the caller's when not found.
Impl::tools::TableAccess find_kokkos_table(const void* caller,
                                           std::string& library);

} // namespace cunumpy::plugin

#endif
