#include "call_sites/call_sites.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#ifdef CUNUMPY_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "call_sites/modules.hpp"
#include "support/environment.hpp"

namespace cunumpy::Impl {
namespace {

std::string demangle(const char* name) {
  if (name == nullptr)
    return {};
  int status = 0;
  char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || readable == nullptr)
    return name;
  std::string result(readable);
  std::free(readable);
  return result;
}

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::uint64_t hash_frames(const void* const* frames, int count) {
  std::uint64_t hash = 1469598103934665603ull; // FNV-1a over the addresses
  for (int i = 0; i < count; ++i) {
    auto value = reinterpret_cast<std::uintptr_t>(frames[i]);
    hash ^= value;
    hash *= 1099511628211ull;
  }
  return hash;
}

} // namespace

bool is_library_frame(const SourceFrame& frame) {
  if (frame.library || is_library_module_name(frame.module))
    return true;
  const std::string_view file = frame.file;
  if (!file.empty()) {
    const std::string_view name = basename_of(file);
    if (starts_with(name, "Kokkos") || contains(file, "/include/cunumpy/") ||
        starts_with(file, "/usr/include/") || contains(file, "/desul/") ||
        contains(file, "/mdspan/") || contains(file, "/pybind11/"))
      return true;
    return false;
  }
  // No line information: judge by the function's namespace.
  const std::string_view function = frame.function;
  return starts_with(function, "Kokkos::") ||
         starts_with(function, "cunumpy::") || starts_with(function, "std::") ||
         starts_with(function, "KokkosBlas::") ||
         starts_with(function, "KokkosSparse::") ||
         starts_with(function, "pybind11::");
}

SiteTable::SiteTable() : symbolizer_(std::make_unique<Symbolizer>()) {
  entries_.emplace_back(); // id 0: unknown
  entries_.front().resolved = CallSite{};
}

SiteTable::~SiteTable() = default;

std::uint32_t SiteTable::known(std::string_view file, int line,
                               std::string_view function) {
  std::string key;
  key.reserve(file.size() + function.size() + 16);
  key.append(file).append(1, '\0').append(std::to_string(line));
  key.append(1, '\0').append(function);
  auto found = known_index_.find(key);
  if (found != known_index_.end())
    return found->second;
  const auto id = static_cast<std::uint32_t>(entries_.size());
  Entry& entry = entries_.emplace_back();
  entry.resolved = CallSite{std::string(file), line,
                            demangle(std::string(function).c_str())};
  known_index_.emplace(std::move(key), id);
  return id;
}

std::uint32_t SiteTable::stack(const void* const* frames, int count,
                               std::uint32_t fallback) {
  if (count <= 0)
    return fallback;
  // A loop copies from the same line again and again: the last stack first.
  if (last_stack_ != 0) {
    const Entry& last = entries_[last_stack_];
    if (last.fallback == fallback &&
        last.frames.size() == static_cast<std::size_t>(count) &&
        std::equal(last.frames.begin(), last.frames.end(), frames))
      return last_stack_;
  }
  const std::uint64_t hash =
      hash_frames(frames, count) ^ (std::uint64_t(fallback) << 1);
  auto range = stack_index_.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it) {
    const Entry& entry = entries_[it->second];
    if (entry.fallback == fallback &&
        entry.frames.size() == static_cast<std::size_t>(count) &&
        std::equal(entry.frames.begin(), entry.frames.end(), frames))
      return last_stack_ = it->second;
  }
  const auto id = static_cast<std::uint32_t>(entries_.size());
  Entry& entry = entries_.emplace_back();
  entry.frames.assign(frames, frames + count);
  entry.fallback = fallback;
  stack_index_.emplace(hash, id);
  return last_stack_ = id;
}

const CallSite& SiteTable::resolve(std::uint32_t id) {
  if (id >= entries_.size())
    id = 0;
  Entry& entry = entries_[id];
  if (!entry.resolved)
    entry.resolved = symbolize(entry);
  return *entry.resolved;
}

CallSite SiteTable::symbolize(const Entry& entry) {
  // The first source frame outside the libraries, preferring one with a
  // line; else the fallback site; else the first frame with a module.
  std::optional<SourceFrame> without_line;
  for (std::size_t i = 0; i < entry.frames.size(); ++i) {
    for (SourceFrame& frame : symbolizer_->frames(entry.frames[i])) {
      if (is_library_frame(frame))
        continue;
      if (frame.line > 0)
        return CallSite{frame.file, frame.line, frame.function};
      if (!without_line)
        without_line = std::move(frame);
    }
  }
  if (entry.fallback != 0)
    return resolve(entry.fallback);
  if (without_line) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%zx",
                  static_cast<std::size_t>(without_line->offset));
    std::string file =
        without_line->file.empty()
            ? std::string(basename_of(without_line->module)) + offset
            : without_line->file;
    return CallSite{std::move(file), 0, without_line->function};
  }
  return CallSite{};
}

/// Module and symbol names from the dynamic linker: what a build without
/// libdw, or a process where it cannot be loaded, knows of an address.
static std::vector<SourceFrame> dladdr_frames(const void* return_address) {
  std::vector<SourceFrame> result;
  Dl_info info{};
  const void* pc = static_cast<const char*>(return_address) - 1;
  if (dladdr(pc, &info) == 0)
    return result;
  SourceFrame frame;
  frame.module = info.dli_fname != nullptr ? info.dli_fname : "";
  frame.function = demangle(info.dli_sname);
  frame.offset = reinterpret_cast<std::uintptr_t>(pc) -
                 reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  LoadedModule loaded;
  frame.library = find_module(reinterpret_cast<std::uintptr_t>(pc), loaded) &&
                  loaded.library;
  result.push_back(std::move(frame));
  return result;
}

#ifdef CUNUMPY_HAVE_LIBDW

namespace {

/// elfutils' libdw, loaded at the first address symbolized: a process
/// that resolves no call site never maps it and its libraries (libelf,
/// libz, liblzma, libbz2: about 0.3 ms a process), and one where it is
/// missing still runs, with module+offset sites and one note.
struct Libdw {
#define CUNUMPY_LIBDW_FUNCTIONS(X)                                             \
  X(dwarf_attr)                                                                \
  X(dwarf_attr_integrate)                                                      \
  X(dwarf_child)                                                               \
  X(dwarf_dieoffset)                                                           \
  X(dwarf_filesrc)                                                             \
  X(dwarf_formstring)                                                          \
  X(dwarf_formudata)                                                           \
  X(dwarf_getsrcfiles)                                                         \
  X(dwarf_hasattr)                                                             \
  X(dwarf_haschildren)                                                         \
  X(dwarf_haspc)                                                               \
  X(dwarf_ranges)                                                              \
  X(dwarf_siblingof)                                                           \
  X(dwarf_tag)                                                                 \
  X(dwfl_addrmodule)                                                           \
  X(dwfl_begin)                                                                \
  X(dwfl_end)                                                                  \
  X(dwfl_lineinfo)                                                             \
  X(dwfl_linux_proc_find_elf)                                                  \
  X(dwfl_linux_proc_report)                                                    \
  X(dwfl_module_addrdie)                                                       \
  X(dwfl_module_addrname)                                                      \
  X(dwfl_module_getsrc)                                                        \
  X(dwfl_module_info)                                                          \
  X(dwfl_report_begin)                                                         \
  X(dwfl_report_end)                                                           \
  X(dwfl_standard_find_debuginfo)
#define CUNUMPY_LIBDW_POINTER(name) decltype(&::name) name = nullptr;
  CUNUMPY_LIBDW_FUNCTIONS(CUNUMPY_LIBDW_POINTER)
#undef CUNUMPY_LIBDW_POINTER
  std::string error; ///< why it could not be loaded; empty when loaded
};

const Libdw& libdw() {
  static const Libdw loaded = [] {
    Libdw table;
    void* handle = ::dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      table.error = why != nullptr ? why : "libdw.so.1 not found";
      return table;
    }
#define CUNUMPY_LIBDW_LOAD(name)                                               \
  table.name = reinterpret_cast<decltype(&::name)>(::dlsym(handle, #name));    \
  if (table.name == nullptr && table.error.empty())                            \
    table.error = "libdw.so.1 has no " #name;
    CUNUMPY_LIBDW_FUNCTIONS(CUNUMPY_LIBDW_LOAD)
#undef CUNUMPY_LIBDW_LOAD
    if (!table.error.empty())
      warn("note: " + table.error +
           "; call sites are shown as module+offset (install elfutils' "
           "libdw, Debian: libdw1)");
    return table;
  }();
  return loaded;
}

} // namespace

namespace {

/// The functions (and inlined calls) inside `parent` containing `pc`,
/// outermost first, appended to `chain`: a walk that enters only the
/// scopes whose ranges contain `pc`.
bool containing_scopes(Dwarf_Die* parent, Dwarf_Addr pc,
                       std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (libdw().dwarf_child(parent, &child) != 0)
    return false;
  do {
    const int tag = libdw().dwarf_tag(&child);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      // Declarations and abstract instances have no ranges: never pc's.
      if (libdw().dwarf_haspc(&child, pc) == 1) {
        chain.push_back(child);
        containing_scopes(&child, pc, chain);
        return true;
      }
    } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
               tag == DW_TAG_catch_block) {
      if (libdw().dwarf_haschildren(&child) > 0 &&
          containing_scopes(&child, pc, chain))
        return true;
    }
  } while (libdw().dwarf_siblingof(&child, &child) == 0);
  return false;
}

/// The functions of one compilation unit with their address ranges, read
/// once per unit: where an address's scopes are looked for. Only functions
/// defined in the unit and its namespaces are indexed (a class holds only
/// declarations, an abstract inline instance has no addresses); the inlined
/// calls and blocks inside the one function that contains an address are
/// read when it is looked up. A unit that includes Kokkos has tens of
/// thousands of inlined calls, and a program a few call sites in it: an
/// index of every inlined call, or dwarf_getscopes (a walk of the whole
/// tree per address), cost milliseconds.
class ScopeIndex {
public:
  explicit ScopeIndex(Dwarf_Die* unit) {
    index(unit);
    std::sort(
        functions_.begin(), functions_.end(),
        [](const Function& a, const Function& b) { return a.low < b.low; });
  }

  /// The scopes containing `pc`, innermost first.
  std::vector<Dwarf_Die> chain(Dwarf_Addr pc) const {
    auto it = std::upper_bound(
        functions_.begin(), functions_.end(), pc,
        [](Dwarf_Addr address, const Function& f) { return address < f.low; });
    while (it != functions_.begin()) {
      --it;
      if (pc < it->high) {
        std::vector<Dwarf_Die> chain{it->die};
        Dwarf_Die die = it->die;
        containing_scopes(&die, pc, chain);
        return {chain.rbegin(), chain.rend()};
      }
      if (pc - it->low >= longest_)
        break; // no function starting earlier reaches pc
    }
    return {};
  }

private:
  struct Function {
    Dwarf_Addr low;
    Dwarf_Addr high;
    Dwarf_Die die;
  };
  std::vector<Function> functions_;
  Dwarf_Addr longest_ = 0; // the longest range

  void index(Dwarf_Die* parent) {
    Dwarf_Die child;
    if (libdw().dwarf_child(parent, &child) != 0)
      return;
    do {
      const int tag = libdw().dwarf_tag(&child);
      if (tag == DW_TAG_subprogram) {
        if (!libdw().dwarf_hasattr(&child, DW_AT_low_pc) &&
            !libdw().dwarf_hasattr(&child, DW_AT_ranges))
          continue; // a declaration or an abstract instance
        Dwarf_Addr base = 0;
        Dwarf_Addr low = 0;
        Dwarf_Addr high = 0;
        for (ptrdiff_t offset = 0;
             (offset = libdw().dwarf_ranges(&child, offset, &base, &low,
                                            &high)) > 0;) {
          functions_.push_back({low, high, child});
          longest_ = std::max(longest_, high - low);
        }
      } else if ((tag == DW_TAG_namespace || tag == DW_TAG_compile_unit ||
                  tag == DW_TAG_partial_unit) &&
                 libdw().dwarf_haschildren(&child) > 0) {
        index(&child);
      }
    } while (libdw().dwarf_siblingof(&child, &child) == 0);
  }
};

} // namespace

struct Symbolizer::State {
  Dwfl_Callbacks callbacks{};
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;
  bool reported = false;
  std::map<std::pair<Dwfl_Module*, Dwarf_Off>, ScopeIndex> scope_indexes;

  ~State() {
    if (dwfl != nullptr)
      libdw().dwfl_end(dwfl);
  }

  /// libdw, loaded and set up at the first address. False when it cannot
  /// be (the dynamic linker's names then).
  bool begin() {
    if (!reported) {
      reported = true;
      if (!libdw().error.empty())
        return false;
      callbacks.find_elf = libdw().dwfl_linux_proc_find_elf;
      callbacks.find_debuginfo = libdw().dwfl_standard_find_debuginfo;
      callbacks.debuginfo_path = &debuginfo_path;
      report();
    }
    return dwfl != nullptr;
  }

  // (Re)reads the modules mapped into this process; called again when an
  // address falls in a library loaded after the last report.
  void report() {
    scope_indexes.clear(); // modules may go
    if (dwfl == nullptr)
      dwfl = libdw().dwfl_begin(&callbacks);
    if (dwfl == nullptr)
      return;
    libdw().dwfl_report_begin(dwfl);
    libdw().dwfl_linux_proc_report(dwfl, getpid());
    libdw().dwfl_report_end(dwfl, nullptr, nullptr);
  }

  /// The scopes of `unit` containing `pc`, innermost first.
  std::vector<Dwarf_Die> scopes(Dwfl_Module* module, Dwarf_Die* unit,
                                Dwarf_Addr pc) {
    const auto key = std::make_pair(module, libdw().dwarf_dieoffset(unit));
    auto it = scope_indexes.find(key);
    if (it == scope_indexes.end())
      it = scope_indexes.emplace(key, ScopeIndex(unit)).first;
    return it->second.chain(pc);
  }
};

namespace {

const char* die_name(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    if (libdw().dwarf_attr_integrate(die, name, &attribute) != nullptr) {
      if (const char* text = libdw().dwarf_formstring(&attribute))
        return text;
    }
  }
  return nullptr;
}

std::string function_name(Dwarf_Die* die) {
  const char* name = die_name(die);
  return name != nullptr ? demangle(name) : std::string();
}

} // namespace

std::vector<SourceFrame> Symbolizer::frames(const void* return_address) {
  std::vector<SourceFrame> result;
  if (state_ == nullptr)
    state_ = std::make_unique<State>();
  if (return_address == nullptr)
    return result;
  // A return address points after the call; look up the call itself.
  const auto pc = reinterpret_cast<Dwarf_Addr>(return_address) - 1;
  if (!state_->begin())
    return dladdr_frames(return_address);
  Dwfl_Module* module = libdw().dwfl_addrmodule(state_->dwfl, pc);
  if (module == nullptr) {
    state_->report();
    module = libdw().dwfl_addrmodule(state_->dwfl, pc);
  }
  if (module == nullptr)
    return result;

  Dwarf_Addr module_start = 0;
  const char* module_name =
      libdw().dwfl_module_info(module, nullptr, &module_start, nullptr, nullptr,
                               nullptr, nullptr, nullptr);
  SourceFrame current;
  current.module = module_name != nullptr ? module_name : "";
  current.offset = static_cast<std::uintptr_t>(pc - module_start);
  LoadedModule loaded;
  current.library = find_module(pc, loaded) && loaded.library;
  if (is_library_frame(current)) {
    // Kokkos, cunumpy, the runtimes: never the call site, so their debug
    // information (cunumpy's own is large) is not even read.
    result.push_back(std::move(current));
    return result;
  }
  current.function = demangle(libdw().dwfl_module_addrname(module, pc));

  if (Dwfl_Line* line = libdw().dwfl_module_getsrc(module, pc)) {
    int line_number = 0;
    const char* file = libdw().dwfl_lineinfo(line, nullptr, &line_number,
                                             nullptr, nullptr, nullptr);
    if (file != nullptr) {
      current.file = file;
      current.line = line_number;
    }
  }

  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = libdw().dwfl_module_addrdie(module, pc, &bias);
  // Innermost first: the inlined calls, then the function they are in.
  std::vector<Dwarf_Die> scopes;
  if (cu != nullptr)
    scopes = state_->scopes(module, cu, pc - bias);
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (cu != nullptr)
    libdw().dwarf_getsrcfiles(cu, &files, &file_count);

  for (Dwarf_Die& die : scopes) {
    Dwarf_Die* scope = &die;
    const int tag = libdw().dwarf_tag(scope);
    if (tag == DW_TAG_inlined_subroutine) {
      // `current` is inside the inlined function; its call site is the
      // location in the caller.
      std::string name = function_name(scope);
      if (!name.empty())
        current.function = std::move(name);
      result.push_back(current);
      Dwarf_Attribute attribute;
      Dwarf_Word value = 0;
      if (files != nullptr &&
          libdw().dwarf_formudata(
              libdw().dwarf_attr(scope, DW_AT_call_file, &attribute), &value) ==
              0) {
        const char* file =
            libdw().dwarf_filesrc(files, value, nullptr, nullptr);
        current.file = file != nullptr ? file : "";
      }
      if (libdw().dwarf_formudata(
              libdw().dwarf_attr(scope, DW_AT_call_line, &attribute), &value) ==
          0)
        current.line = static_cast<int>(value);
      current.function.clear();
    } else if (tag == DW_TAG_subprogram) {
      std::string name = function_name(scope);
      if (!name.empty())
        current.function = std::move(name);
      break;
    }
  }
  if (current.function.empty())
    current.function = demangle(libdw().dwfl_module_addrname(module, pc));
  result.push_back(std::move(current));
  return result;
}

#else // without libdw: module and symbol names from the dynamic linker

struct Symbolizer::State {};

std::vector<SourceFrame> Symbolizer::frames(const void* return_address) {
  return dladdr_frames(return_address);
}

#endif

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

} // namespace cunumpy::Impl
