#include "stack_capture.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <link.h>
#include <mutex>
#include <string_view>
#include <unwind.h>
#include <vector>

namespace cunumpy::Impl {
namespace {

/// Frames kept after the first one outside the libraries: enough to get
/// past non-inlined Kokkos templates instantiated in the application.
constexpr int frames_after_first_caller = 4;

struct Module {
  std::uintptr_t begin;
  std::uintptr_t end;
  bool library;
};

bool is_library_module(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  const auto starts = [&](std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
  };
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // libkp_*: Kokkos Tools libraries (cunumpy's plugin, kokkos-tools).
  return lower.find("kokkos") != std::string::npos || starts("libcunumpy") ||
         starts("libkp_") || starts("_core.") || starts("libc.so") ||
         starts("libstdc++") || starts("libgcc_s") || starts("ld-linux") ||
         starts("libm.so") || starts("libpython") || starts("linux-vdso");
}

/// Address ranges of the loaded modules, sorted. Rebuilt (and the old table
/// kept alive: readers use it without a lock) when an address falls outside
/// every known module, i.e. after a library was loaded.
struct ModuleTable {
  std::vector<Module> modules;

  const Module* find(std::uintptr_t address) const {
    auto it = std::upper_bound(
        modules.begin(), modules.end(), address,
        [](std::uintptr_t a, const Module& m) { return a < m.begin; });
    if (it == modules.begin())
      return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
  }
};

int add_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* table = static_cast<ModuleTable*>(data);
  const bool library =
      is_library_module(info->dlpi_name != nullptr ? info->dlpi_name : "");
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0)
      continue;
    const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    table->modules.push_back({begin, begin + header.p_memsz, library});
  }
  return 0;
}

std::atomic<const ModuleTable*> current_table{nullptr};
std::mutex rebuild_mutex;
int rebuilds = 0;

const ModuleTable* rebuild() {
  std::lock_guard lock(rebuild_mutex);
  if (rebuilds > 256) // pathological dlopen churn: keep the last table
    return current_table.load(std::memory_order_acquire);
  ++rebuilds;
  auto* table = new ModuleTable(); // never freed: lock-free readers
  dl_iterate_phdr(&add_module, table);
  std::sort(table->modules.begin(), table->modules.end(),
            [](const Module& a, const Module& b) { return a.begin < b.begin; });
  current_table.store(table, std::memory_order_release);
  return table;
}

struct Walk {
  void** frames;
  int depth;
  int count = 0;
  int callers = 0;
  const ModuleTable* table;
};

_Unwind_Reason_Code visit(_Unwind_Context* context, void* data) {
  auto* walk = static_cast<Walk*>(data);
  const auto ip = static_cast<std::uintptr_t>(_Unwind_GetIP(context));
  if (ip == 0)
    return _URC_END_OF_STACK;
  walk->frames[walk->count++] = reinterpret_cast<void*>(ip);
  const Module* module = walk->table->find(ip - 1);
  if (module == nullptr) {
    walk->table = rebuild();
    module = walk->table->find(ip - 1);
  }
  if (module == nullptr || !module->library)
    ++walk->callers;
  if (walk->count >= walk->depth || walk->callers > frames_after_first_caller)
    return _URC_END_OF_STACK;
  return _URC_NO_REASON;
}

} // namespace

int capture_stack(void** frames, int depth) noexcept {
  if (depth <= 0)
    return 0;
  const ModuleTable* table = current_table.load(std::memory_order_acquire);
  if (table == nullptr)
    table = rebuild();
  Walk walk{frames, depth, 0, 0, table};
  _Unwind_Backtrace(&visit, &walk);
  return walk.count;
}

} // namespace cunumpy::Impl
