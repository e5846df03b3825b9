#include "kokkos_table.hpp"

#include <atomic>
#include <dlfcn.h>
#include <functional>

namespace cunumpy::plugin {
namespace {

namespace kokkosp = Impl::kokkosp;

/// Kokkos::push_finalize_hook (C++, Itanium ABI): std::function<void()> by
/// value.
constexpr const char* push_finalize_hook_symbol =
    "_ZN6Kokkos18push_finalize_hookESt8functionIFvvEE";
using PushFinalizeHook = void (*)(std::function<void()>);

// The functions found: one Kokkos per plugin (TableAccess holds plain
// function pointers).
std::atomic<kokkosp::GetCallbacks> found_get{nullptr};
std::atomic<kokkosp::SetCallbacks> found_set{nullptr};
std::atomic<kokkosp::IsInitialized> found_is_initialized{nullptr};
std::atomic<PushFinalizeHook> found_push_hook{nullptr};
std::atomic<const bool*> finalized_flag{nullptr};

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

bool kokkos_runs() {
  return kokkos_state() != KokkosState::stopped;
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

Impl::tools::TableAccess find_kokkos(const void* caller, std::string& library,
                                     const bool* finalized) {
  finalized_flag.store(finalized, std::memory_order_release);
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
        module = module_of(get, &path);
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
  found_is_initialized.store(reinterpret_cast<kokkosp::IsInitialized>(lookup_in(
                                 module, path, kokkosp::is_initialized_symbol)),
                             std::memory_order_release);
  found_push_hook.store(reinterpret_cast<PushFinalizeHook>(
                            lookup_in(module, path, push_finalize_hook_symbol)),
                        std::memory_order_release);
  library = path;
  return {&get_table, &set_table, &kokkos_runs};
}

bool push_kokkos_finalize_hook(void (*hook)()) {
  const auto push = found_push_hook.load(std::memory_order_acquire);
  if (push == nullptr)
    return false;
  push(std::function<void()>(hook));
  return true;
}

KokkosState kokkos_state() {
  if (const auto is_initialized =
          found_is_initialized.load(std::memory_order_acquire))
    return is_initialized() ? KokkosState::running : KokkosState::stopped;
  const bool* finalized = finalized_flag.load(std::memory_order_acquire);
  return finalized != nullptr && *finalized ? KokkosState::stopped
                                            : KokkosState::unknown;
}

} // namespace cunumpy::plugin
