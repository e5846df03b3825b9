#ifndef CUNUMPY_PLUGIN_KOKKOS_TABLE_HPP
#define CUNUMPY_PLUGIN_KOKKOS_TABLE_HPP

// The Kokkos that loaded the plugin, reached without linking any Kokkos:
// its functions are looked up by name in the library that called
// kokkosp_init_library (a shared libkokkoscore, or a program or Python
// extension with Kokkos linked in that exports them). Another Kokkos of the
// same process (a second application module, a system Kokkos) is never
// taken for it. A Kokkos linked in without exporting its functions (most
// static builds) gives none of them: the plugin then cannot watch its table
// nor see its later sessions, and says so in the report.

#include <string>

#include "tools/callbacks.hpp"

namespace cunumpy::plugin {

/// Finds the functions of the Kokkos whose code contains `caller` (the
/// return address of kokkosp_init_library). When `caller` is another tool
/// (one that loaded this plugin and forwards to it), the process' first
/// Kokkos is taken if its table holds that tool's kokkosp_init_library.
/// Returns the access to its table (empty when not found) and, in
/// `library`, the file it was found in, or the caller's when not found.
/// `finalized` tells the access's `running` that Kokkos finalized, when it
/// does not export is_initialized.
Impl::tools::TableAccess find_kokkos(const void* caller, std::string& library,
                                     const bool* finalized);

/// Kokkos::push_finalize_hook of that Kokkos: `hook` runs at the start of
/// its next Kokkos::finalize. False when it does not export it.
bool push_kokkos_finalize_hook(void (*hook)());

/// Kokkos::is_initialized of that Kokkos; `unknown` when not exported.
enum class KokkosState { running, stopped, unknown };
KokkosState kokkos_state();

} // namespace cunumpy::plugin

#endif
