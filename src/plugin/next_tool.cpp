#include "next_tool.hpp"

#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/environment.hpp"
#include "support/excerpt.hpp"
#include "support/file_kind.hpp"
#include "tools/callbacks.hpp"

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

/// The value of `--name=value` among the program's arguments, as Kokkos
/// reads them (the last one counts).
std::string command_line_value(const std::vector<std::string>& arguments,
                               const std::string& name) {
  std::string value;
  const std::string prefix = name + "=";
  for (const std::string& argument : arguments)
    if (argument.compare(0, prefix.size(), prefix) == 0)
      value = argument.substr(prefix.size());
  return value;
}

std::vector<std::string> program_arguments() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> arguments;
  for (std::string argument; std::getline(file, argument, '\0');)
    arguments.push_back(argument);
  return arguments;
}

std::string own_path(const void* self) {
  Dl_info info{};
  if (::dladdr(self, &info) == 0 || info.dli_fname == nullptr)
    return {};
  return info.dli_fname;
}

/// Whether `entry` of a tools list is the file at `path`.
bool names_file(const std::string& entry, const std::string& path) {
  std::error_code error;
  return !path.empty() && std::filesystem::equivalent(entry, path, error) &&
         !error;
}

} // namespace

std::vector<std::vector<std::string>> tool_lists() {
  std::vector<std::vector<std::string>> lists;
  const std::vector<std::string> arguments = program_arguments();
  for (const char* option : {"--kokkos-tools-libs", "--kokkos-tools-library"}) {
    const std::string value = command_line_value(arguments, option);
    if (!value.empty())
      lists.push_back(split_list(value));
  }
  const auto tools_libs = Impl::environment("KOKKOS_TOOLS_LIBS");
  const auto profile_library = Impl::environment("KOKKOS_PROFILE_LIBRARY");
  if (profile_library && tools_libs && *profile_library != *tools_libs) {
    // Only a Kokkos older than 3.7 runs with two different lists, and it
    // reads KOKKOS_PROFILE_LIBRARY.
    lists.push_back(split_list(*profile_library));
  } else {
    for (const auto& value : {tools_libs, profile_library})
      if (value)
        lists.push_back(split_list(*value));
  }
  return lists;
}

std::vector<std::string>
entries_after_self(const std::vector<std::vector<std::string>>& lists,
                   const void* self) {
  const std::string path = own_path(self);
  for (const auto& list : lists)
    for (std::size_t i = 0; i < list.size(); ++i)
      if (names_file(list[i], path))
        return {list.begin() + static_cast<long>(i) + 1, list.end()};
  // Loaded under a name none of the lists gives (a link in another
  // directory, a name relative to another directory): taken to be the first
  // entry of the first list.
  if (lists.empty() || lists.front().size() < 2)
    return {};
  return {lists.front().begin() + 1, lists.front().end()};
}

NextTool load_next_tool(const std::vector<std::string>& entries,
                        const void* self) {
  const std::string path = own_path(self);
  for (const std::string& entry : entries) {
    // dlopen of a FIFO would block Kokkos::initialize until a writer came.
    if (const std::string problem = Impl::library_file_problem(entry);
        !problem.empty()) {
      Impl::warn("cannot load the next Kokkos tool '" +
                 Impl::excerpt(entry, 256) + "': it " + problem +
                 "; running without it");
      return {};
    }
    void* handle = ::dlopen(entry.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      Impl::warn("cannot load the next Kokkos tool '" +
                 Impl::excerpt(entry, 256) +
                 "': " + (error != nullptr ? error : "unknown error") +
                 "; running without it");
      return {};
    }
    // Another libkp_cunumpy (this file again, or a copy of it under another
    // name) would record every event a second time.
    if (names_file(entry, path) ||
        ::dlsym(handle, "kokkosp_cunumpy_plugin") != nullptr) {
      Impl::warn("the Kokkos tools list names libkp_cunumpy twice ('" + entry +
                 "'); loading it once");
      ::dlclose(handle);
      continue;
    }
    // The handle stays open until the process ends, as Kokkos keeps tools.
    return {entry, Impl::tools::library_callbacks(handle)};
  }
  return {};
}

} // namespace cunumpy::plugin
