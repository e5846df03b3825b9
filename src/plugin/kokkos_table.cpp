#include "kokkos_table.hpp"

#include <atomic>
#include <dlfcn.h>

namespace cunumpy::plugin {
namespace {

namespace kokkosp = Impl::kokkosp;

// The functions found: one Kokkos per plugin (TableAccess holds plain
// function pointers).
std::atomic<kokkosp::GetCallbacks> found_get{nullptr};
std::atomic<kokkosp::SetCallbacks> found_set{nullptr};

bool get_table(kokkosp::EventSet& table) {
  const auto get = found_get.load(std::memory_order_acquire);
  if (get == nullptr)
    return false;
  table = get();
  return true;
}

bool set_table(const kokkosp::EventSet& table) {
  const auto set = found_set.load(std::memory_order_acquire);
  if (set == nullptr)
    return false;
  set(table);
  return true;
}

/// The base address of the module that holds `address` (null if none).
const void* module_of(const void* address, std::string* path = nullptr) {
  Dl_info info{};
  if (address == nullptr || ::dladdr(address, &info) == 0)
    return nullptr;
  if (path != nullptr && info.dli_fname != nullptr)
    *path = info.dli_fname;
  return info.dli_fbase;
}

/// `symbol` as `module` exports it, or null: a function of the same name in
/// another module (another Kokkos) is refused.
void* lookup_in(const void* module, const std::string& path,
                const char* symbol) {
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr)
    handle = ::dlopen(nullptr, RTLD_LAZY); // the program itself
  if (handle == nullptr)
    return nullptr;
  void* function = ::dlsym(handle, symbol);
  ::dlclose(handle);
  return function != nullptr && module_of(function) == module ? function
                                                              : nullptr;
}

} // namespace

Impl::tools::TableAccess find_kokkos_table(const void* caller,
                                           std::string& library) {
  std::string path;
  const void* module = module_of(caller, &path);
  void* get = nullptr;
  void* set = nullptr;
  if (module != nullptr) {
    get = lookup_in(module, path, kokkosp::get_callbacks_symbol);
    set = lookup_in(module, path, kokkosp::set_callbacks_symbol);
  }
  void* tool_init = module != nullptr
                        ? lookup_in(module, path, "kokkosp_init_library")
                        : nullptr;
  if ((get == nullptr || set == nullptr) && tool_init != nullptr) {
    // Called by another tool: the Kokkos whose table holds that tool.
    get = ::dlsym(RTLD_DEFAULT, kokkosp::get_callbacks_symbol);
    set = ::dlsym(RTLD_DEFAULT, kokkosp::set_callbacks_symbol);
    if (get != nullptr && set != nullptr) {
      const kokkosp::EventSet table =
          reinterpret_cast<kokkosp::GetCallbacks>(get)();
      if (reinterpret_cast<const void*>(table.init) != tool_init)
        get = set = nullptr;
      else
        module_of(get, &path);
    }
  }
  if (get == nullptr || set == nullptr) {
    library = path.empty() ? "an unknown module" : path;
    return {};
  }
  found_get.store(reinterpret_cast<kokkosp::GetCallbacks>(get),
                  std::memory_order_release);
  found_set.store(reinterpret_cast<kokkosp::SetCallbacks>(set),
                  std::memory_order_release);
  library = path;
  return {&get_table, &set_table};
}

} // namespace cunumpy::plugin
