#include "call_sites/call_sites.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <dlfcn.h>
#include <string>
#include <utility>
#include <vector>

#include "call_sites/debug_info.hpp"
#include "call_sites/modules.hpp"

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

/// A Kokkos or cunumpy header, a system header: never a call site.
bool is_library_file(std::string_view file) {
  return starts_with(basename_of(file), "Kokkos") ||
         contains(file, "/include/cunumpy/") ||
         starts_with(file, "/usr/include/") || contains(file, "/desul/") ||
         contains(file, "/mdspan/") || contains(file, "/pybind11/");
}

/// Whether a location in a module that is not a library's is still never a
/// call site: in a library file; without a file, in a function of their
/// namespaces.
bool is_library_location(std::string_view file, std::string_view function) {
  if (!file.empty())
    return is_library_file(file);
  return starts_with(function, "Kokkos::") ||
         starts_with(function, "cunumpy::") || starts_with(function, "std::") ||
         starts_with(function, "KokkosBlas::") ||
         starts_with(function, "KokkosSparse::") ||
         starts_with(function, "pybind11::");
}

/// The name the dynamic linker has for the function at `pc` (exported
/// functions only, checked to hold it); empty when none.
std::string dynamic_symbol(std::uintptr_t pc) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(pc), &info) == 0)
    return {};
  return demangle(info.dli_sname);
}

} // namespace

bool is_library_frame(const SourceFrame& frame) {
  return is_library_module_name(frame.module) ||
         is_library_location(frame.file, frame.function);
}

SiteTable::SiteTable() {
  entries_.emplace_back(); // id 0: unknown
  entries_.front().resolved = CallSite{};
  not_symbolized_.problem =
      "stacks not symbolized for this report (captured while it was made, "
      "or their symbolization failed or was interrupted)";
}

std::uint32_t SiteTable::known(std::string_view file, int line,
                               std::string_view function) {
  std::string& key = known_key_; // reused: no allocation per call
  key.clear();
  key.append(file).append(1, '\0').append(std::to_string(line));
  key.append(1, '\0').append(function);
  // A loop's events come from the same line again and again.
  if (last_known_ != 0 && key == last_known_key_)
    return last_known_;
  auto found = known_index_.find(key);
  if (found != known_index_.end()) {
    last_known_key_ = key;
    return last_known_ = found->second;
  }
  const auto id = static_cast<std::uint32_t>(entries_.size());
  Entry& entry = entries_.emplace_back();
  entry.resolved = CallSite{std::string(file),
                            line,
                            demangle(std::string(function).c_str()),
                            {},
                            {},
                            {}};
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
  const Entry& entry = entries_[id];
  if (entry.resolved)
    return *entry.resolved;
  if (entry.fallback != 0)
    return resolve(entry.fallback);
  if (std::find(problems_.begin(), problems_.end(), not_symbolized_.problem) ==
      problems_.end())
    problems_.push_back(not_symbolized_.problem);
  return not_symbolized_;
}

std::vector<SiteTable::Stack> SiteTable::unsymbolized() {
  while (first_unsymbolized_ < entries_.size() &&
         entries_[first_unsymbolized_].resolved)
    ++first_unsymbolized_;
  std::vector<Stack> stacks;
  for (std::size_t id = first_unsymbolized_; id < entries_.size(); ++id)
    if (!entries_[id].resolved)
      stacks.push_back({static_cast<std::uint32_t>(id), entries_[id].frames});
  return stacks;
}

/// "workload.py:17 in step": a Python line beside a native one.
static std::string python_text(const CallSite& site) {
  std::string text = site.file + ":" + std::to_string(site.line);
  if (!site.function.empty())
    text += " in " + site.function;
  return text;
}

void SiteTable::symbolized(std::uint32_t id, Symbolizer::Site site) {
  if (id >= entries_.size() || entries_[id].resolved)
    return;
  Entry& entry = entries_[id];
  // The first source frame outside the libraries with a line, beside the
  // Python line when there is one; else the fallback site (a Python line)
  // with the native frame under it; else the first frame outside them.
  if (!site.problem.empty() && std::find(problems_.begin(), problems_.end(),
                                         site.problem) == problems_.end())
    problems_.push_back(site.problem);
  if (site.with_line) {
    site.with_line->problem = site.problem;
    if (entry.fallback != 0)
      site.with_line->python = python_text(resolve(entry.fallback));
    entry.resolved = std::move(*site.with_line);
  } else if (entry.fallback != 0) {
    CallSite fallback = resolve(entry.fallback);
    if (site.without_line) {
      fallback.native = std::move(site.without_line->file);
      fallback.problem = std::move(site.problem);
    }
    entry.resolved = std::move(fallback);
  } else if (site.without_line) {
    site.without_line->problem = std::move(site.problem);
    entry.resolved = std::move(*site.without_line);
  } else {
    CallSite unknown;
    unknown.problem = std::move(site.problem);
    entry.resolved = std::move(unknown);
  }
}

/// A module a frame is in, read once: its debug information, when the file
/// is the code loaded.
struct Symbolizer::Module {
  LoadedModule loaded;
  std::unique_ptr<DebugInfo> debug; ///< null for a library's module
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::Module* Symbolizer::module_of(std::uintptr_t pc) {
  // The modules of the last frames, while no library was loaded or
  // unloaded since: no walk of the loader's list, no build id read.
  const std::uint64_t generation = modules_generation();
  if (generation != generation_) {
    recent_.clear();
    generation_ = generation;
  }
  for (Module* module : recent_)
    if (pc >= module->loaded.begin && pc < module->loaded.end)
      return module;
  LoadedModule loaded;
  if (!find_module(pc, loaded))
    return nullptr;
  // A module loaded again (at another address, or rebuilt) is another.
  std::string key =
      loaded.path + '\0' + std::to_string(loaded.bias) + '\0' + loaded.build_id;
  auto found = modules_.find(key);
  if (found == modules_.end()) {
    // Made whole before it is kept: an exception here keeps nothing.
    auto module = std::make_unique<Module>();
    module->loaded = std::move(loaded);
    // Kokkos', cunumpy's, the runtimes': never read. DebugInfo says, and
    // does not throw, what it could not read.
    if (!module->loaded.library)
      module->debug = std::make_unique<DebugInfo>(module->loaded.path,
                                                  module->loaded.build_id);
    found = modules_.emplace(std::move(key), std::move(module)).first;
  }
  recent_.push_back(found->second.get());
  return found->second.get();
}

bool Symbolizer::take(Module& module, std::uint64_t address,
                      std::vector<DebugLocation>& locations, Site& site) {
  if (locations.empty())
    locations.emplace_back(); // no debug information: module+offset
  const std::uintptr_t pc = address + module.loaded.bias;
  for (DebugLocation& location : locations) {
    // The function's name only where it decides or is shown.
    std::optional<std::string> function;
    const auto name = [&]() -> const std::string& {
      if (!function) {
        function = demangle(location.function.c_str());
        if (function->empty() && &location == &locations.front())
          function = dynamic_symbol(pc);
      }
      return *function;
    };
    if (is_library_location(location.file, location.file.empty() ? name() : ""))
      continue;
    // Why the site's module lacks lines, or their inlined calls.
    const std::string& problem = module.debug->problem();
    if (location.line > 0) {
      site.with_line =
          CallSite{location.file, location.line, name(), {}, {}, {}};
      site.problem.clear();
      if (!problem.empty())
        site.problem = module.loaded.name + ": " + problem;
      return true;
    }
    if (!site.without_line) {
      if (!problem.empty())
        site.problem = module.loaded.name + ": " + problem;
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx",
                    static_cast<unsigned long long>(address));
      site.without_line = CallSite{
          location.file.empty() ? module.loaded.name + offset : location.file,
          0,
          name(),
          {},
          {},
          {}};
    }
  }
  return false;
}

void Symbolizer::follow_tail_calls(Module& module, std::uint64_t address,
                                   Site& site) {
  // A function that ends by calling another may jump to it instead: the
  // callee returns to its caller's caller, and no stack holds the line of
  // the call (a std::thread's lambda whose last statement is the copy,
  // built with -O2, jumps to Kokkos::deep_copy). The tail calls into the
  // function in the module's debug information say where it came from
  // when one alone can have; a few in a row (the caller a library's
  // template reached by a tail call too).
  for (int hop = 0; hop < 4; ++hop) {
    const std::vector<std::uint64_t> jumps =
        module.debug->tail_calls_into(address);
    if (jumps.size() != 1) {
      if (jumps.size() > 1 && site.problem.empty())
        site.problem = module.loaded.name +
                       ": a tail call left no frame of "
                       "the caller, and one of " +
                       std::to_string(jumps.size()) + " places made it";
      return;
    }
    address = jumps.front();
    std::vector<DebugLocation> locations = module.debug->locations(address);
    if (locations.empty())
      return;
    if (take(module, address, locations, site)) {
      if (site.problem.empty())
        site.problem = module.loaded.name +
                       ": a tail call left no frame of "
                       "the caller; the line is the one tail call that can "
                       "have made it";
      return;
    }
  }
}

Symbolizer::Site Symbolizer::site(const void* const* frames,
                                  std::size_t count) {
  Site site;
  Module* outermost = nullptr; // of the frames in a module not a library's
  std::uint64_t outermost_address = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (frames[i] == nullptr)
      continue;
    // A return address points after the call; look up the call itself.
    const std::uintptr_t pc = reinterpret_cast<std::uintptr_t>(frames[i]) - 1;
    Module* module = module_of(pc);
    if (module == nullptr || module->loaded.library)
      continue;
    const std::uint64_t address = pc - module->loaded.bias;
    std::vector<DebugLocation> locations = module->debug->locations(address);
    if (take(*module, address, locations, site))
      return site;
    outermost = module;
    outermost_address = address;
  }
  if (outermost != nullptr && !site.without_line)
    follow_tail_calls(*outermost, outermost_address, site);
  return site;
}

} // namespace cunumpy::Impl
