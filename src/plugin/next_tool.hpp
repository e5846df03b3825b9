#ifndef CUNUMPY_PLUGIN_NEXT_TOOL_HPP
#define CUNUMPY_PLUGIN_NEXT_TOOL_HPP

// The Kokkos Tools library after libkp_cunumpy in the ';'-separated list of
// tools Kokkos was given: Kokkos loads only the first entry, so the plugin
// loads the next one, and every event goes on to it through the one event
// path (src/core/tools).

#include <cstdint>
#include <string>
#include <vector>

#include "tools/kokkosp.hpp"

namespace cunumpy::plugin {

namespace kokkosp = Impl::kokkosp;

/// The next tool: its path and the callbacks it exports (null for those it
/// does not).
struct NextTool {
  std::string path;
  kokkosp::EventSet callbacks{};

  bool loaded() const noexcept { return !path.empty(); }
};

/// The lists of tools Kokkos may have loaded this library from, in the
/// order Kokkos reads them: the command line (--kokkos-tools-libs=,
/// --kokkos-tools-library=, from /proc/self/cmdline), then the environment.
/// Kokkos from 3.7 reads KOKKOS_TOOLS_LIBS and KOKKOS_PROFILE_LIBRARY and
/// stops when both are set and differ; older Kokkos reads only
/// KOKKOS_PROFILE_LIBRARY, so two different lists mean that one.
std::vector<std::vector<std::string>> tool_lists();

/// The entries after this library in the first list of `lists` that names
/// it; `self` is an address inside this library. A list that does not name
/// it (loaded under another name) is taken to start with it. Empty when
/// there is no next tool.
std::vector<std::string>
entries_after_self(const std::vector<std::vector<std::string>>& lists,
                   const void* self);

/// Loads the first tool of `entries` that is not libkp_cunumpy again (any
/// copy of it: those are skipped with one line). Prints one line and
/// returns an empty NextTool when one cannot be loaded.
NextTool load_next_tool(const std::vector<std::string>& entries,
                        const void* self);

} // namespace cunumpy::plugin

#endif
