#include "next_tool.hpp"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <sstream>
#include <vector>

#include "support/environment.hpp"

namespace cunumpy::plugin {
namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> entries;
  std::stringstream stream(list);
  for (std::string entry; std::getline(stream, entry, ';');)
    if (!entry.empty())
      entries.push_back(entry);
  return entries;
}

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved)
                                                       : path;
}

std::string own_path(const void* self) {
  Dl_info info{};
  if (::dladdr(self, &info) == 0 || info.dli_fname == nullptr)
    return {};
  return real_path(info.dli_fname);
}

template <class Function>
void lookup(void* handle, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(handle, name));
}

} // namespace

std::string next_tool_path(const void* self) {
  const std::string self_path = own_path(self);
  std::vector<std::string> first_list;
  for (const char* variable : {"KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"}) {
    const auto value = Impl::environment(variable);
    if (!value)
      continue;
    const auto entries = split_list(*value);
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (real_path(entries[i]) == self_path)
        return i + 1 < entries.size() ? entries[i + 1] : std::string();
    if (first_list.empty())
      first_list = entries;
  }
  // Loaded under another name (a symbolic link, --kokkos-tools-libs): this
  // library is taken to be the first entry.
  return first_list.size() > 1 ? first_list[1] : std::string();
}

NextTool load_next_tool(const std::string& path, const void* self) {
  NextTool tool;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    Impl::warn("cannot load the next Kokkos tool '" + path +
               "': " + (error != nullptr ? error : "unknown error") +
               "; running without it");
    return tool;
  }
  lookup(handle, "kokkosp_init_library", tool.init);
  if (reinterpret_cast<const void*>(tool.init) == self) {
    Impl::warn("the Kokkos tools list names libkp_cunumpy twice ('" + path +
               "'); loading it once");
    return NextTool{};
  }
  tool.path = path;
  lookup(handle, "kokkosp_finalize_library", tool.finalize);
  lookup(handle, "kokkosp_parse_args", tool.parse_args);
  lookup(handle, "kokkosp_print_help", tool.print_help);
  lookup(handle, "kokkosp_begin_parallel_for", tool.begin_parallel_for);
  lookup(handle, "kokkosp_end_parallel_for", tool.end_parallel_for);
  lookup(handle, "kokkosp_begin_parallel_reduce", tool.begin_parallel_reduce);
  lookup(handle, "kokkosp_end_parallel_reduce", tool.end_parallel_reduce);
  lookup(handle, "kokkosp_begin_parallel_scan", tool.begin_parallel_scan);
  lookup(handle, "kokkosp_end_parallel_scan", tool.end_parallel_scan);
  lookup(handle, "kokkosp_push_profile_region", tool.push_region);
  lookup(handle, "kokkosp_pop_profile_region", tool.pop_region);
  lookup(handle, "kokkosp_allocate_data", tool.allocate_data);
  lookup(handle, "kokkosp_deallocate_data", tool.deallocate_data);
  lookup(handle, "kokkosp_create_profile_section", tool.create_profile_section);
  lookup(handle, "kokkosp_start_profile_section", tool.start_profile_section);
  lookup(handle, "kokkosp_stop_profile_section", tool.stop_profile_section);
  lookup(handle, "kokkosp_destroy_profile_section",
         tool.destroy_profile_section);
  lookup(handle, "kokkosp_profile_event", tool.profile_event);
  lookup(handle, "kokkosp_begin_deep_copy", tool.begin_deep_copy);
  lookup(handle, "kokkosp_end_deep_copy", tool.end_deep_copy);
  lookup(handle, "kokkosp_begin_fence", tool.begin_fence);
  lookup(handle, "kokkosp_end_fence", tool.end_fence);
  lookup(handle, "kokkosp_dual_view_sync", tool.sync_dual_view);
  lookup(handle, "kokkosp_dual_view_modify", tool.modify_dual_view);
  lookup(handle, "kokkosp_declare_metadata", tool.declare_metadata);
  lookup(handle, "kokkosp_provide_tool_programming_interface",
         tool.provide_tool_programming_interface);
  lookup(handle, "kokkosp_request_tool_settings", tool.request_tool_settings);
  // The handle stays open until the process ends, as Kokkos keeps tools.
  return tool;
}

} // namespace cunumpy::plugin
