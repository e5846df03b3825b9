#ifndef CUNUMPY_SRC_CALL_SITES_HPP
#define CUNUMPY_SRC_CALL_SITES_HPP

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <cunumpy/event.hpp>

namespace cunumpy::Impl {

/// One source-level frame of an address: inlined calls expand into several.
struct SourceFrame {
  std::string module;
  std::string file;
  int line = 0;
  std::string function;
};

/// True when a frame is never a call site: in a module of Kokkos, the
/// C/C++ runtime, Python or CUDA (by name; cunumpy's own modules are
/// skipped by identity before), in a Kokkos or cunumpy header or a system
/// header, or, without a file, in a function of their namespaces.
bool is_library_frame(const SourceFrame& frame);

struct DebugLocation;

/// Finds the call site of a stack of return addresses: the first source
/// location outside the libraries. Modules are read (debug_info.hpp) only
/// when a frame in them is not a library's; a module without debug
/// information gives module+offset. Reads files: never called under the
/// recorder's mutex (Recorder::symbolize). Not thread-safe.
class Symbolizer {
public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  struct Site {
    /// The first location outside the libraries with a file and line.
    std::optional<CallSite> with_line;
    /// Else the first one outside the libraries: a file without a line, or
    /// module+0xOFFSET.
    std::optional<CallSite> without_line;
    /// "module: why" when the site given lacks a line or its inlined calls.
    std::string problem;
  };
  /// A module whose debug information cannot be read (a hostile file, no
  /// memory) gives module+offset and its problem; what throws here (no
  /// memory outside a module's reading) leaves the modules read so far as
  /// they were.
  Site site(const void* const* frames, std::size_t count);

private:
  struct Module;
  Module* module_of(std::uintptr_t pc);
  /// Takes the locations of one frame: true when one gave the site a line.
  bool take(Module& module, std::uint64_t address,
            std::vector<DebugLocation>& locations, Site& site);
  /// Where no frame outside the libraries had a line: the outermost frame
  /// of a module that is not a library's may have been reached by a tail
  /// call, which left no frame of its caller; follows the one tail call
  /// into its function, when there is one.
  void follow_tail_calls(Module& module, std::uint64_t address, Site& site);

  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;
  std::vector<Module*> recent_; ///< found since the modules last changed
  std::uint64_t generation_ = 0;
};

/// Call sites by id. A site is either known (file, line and function given by
/// a cunumpy call or a front end) or a captured stack, symbolized once, by
/// a read (Recorder::symbolize, outside the recorder's mutex), into the
/// first frame outside Kokkos, cunumpy and the system libraries. Id 0 is
/// the unknown site. Not thread-safe; the recorder's mutex guards it.
class SiteTable {
public:
  SiteTable();

  std::uint32_t known(std::string_view file, int line,
                      std::string_view function);
  /// `fallback` (a known site, or 0) is used when no frame of the stack has
  /// a file and line, e.g. a Python line for C++ code without debug
  /// information.
  std::uint32_t stack(const void* const* frames, int count,
                      std::uint32_t fallback);

  /// The site of `id`. A stack not symbolized yet (captured while a read
  /// symbolized the others, or whose symbolization failed) gives its
  /// fallback, else the unknown site with a problem saying so; it is
  /// symbolized at the next read.
  const CallSite& resolve(std::uint32_t id);

  /// A stack to symbolize: its id and return addresses.
  struct Stack {
    std::uint32_t id;
    std::vector<const void*> frames;
  };
  /// The stacks interned and not yet symbolized, oldest first.
  std::vector<Stack> unsymbolized();
  /// Keeps what the symbolizer found for the stack of `id` (once).
  void symbolized(std::uint32_t id, Symbolizer::Site site);

  /// Why sites resolved so far lack a line, or their inlined calls, once
  /// per module: "legacy_app: no debug information, and no separate debug
  /// file at ...". Reports print them after their sites.
  const std::vector<std::string>& problems() const noexcept {
    return problems_;
  }

  std::size_t size() const noexcept { return entries_.size(); }

private:
  struct Entry {
    std::vector<const void*> frames; // empty for known sites
    std::uint32_t fallback = 0;
    std::optional<CallSite> resolved;
  };

  std::deque<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t> known_index_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> stack_index_;
  std::uint32_t last_stack_ = 0; ///< the id stack() returned last, 0: none
  std::uint32_t last_known_ = 0; ///< the id known() found last, 0: none
  std::string last_known_key_;   ///< ... and its key
  std::string known_key_;        ///< known()'s key, its memory reused
  std::size_t first_unsymbolized_ = 1; ///< entries before it are resolved
  CallSite not_symbolized_;            ///< resolve's site for those
  std::vector<std::string> problems_;
};

} // namespace cunumpy::Impl

#endif
