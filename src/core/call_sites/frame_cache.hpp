#ifndef CUNUMPY_SRC_CALL_SITES_FRAME_CACHE_HPP
#define CUNUMPY_SRC_CALL_SITES_FRAME_CACHE_HPP

// The source frames of return addresses, kept on disk between runs by the
// build id of the module they are in: a program run again (a test suite,
// a job's ranks, a parameter scan) finds its call sites without reading
// its debug information, the largest part of cunumpy's cost per process.
// A build id names one build of a module's code, so what was read from
// its debug information once holds for every run of it. Guarded by the
// recorder's mutex, as the site table that owns it.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cunumpy::Impl {

struct SourceFrame;

class FrameCache {
public:
  /// The directory CUNUMPY_SITE_CACHE names; "0" or "off": none; unset:
  /// $XDG_CACHE_HOME/cunumpy, else $HOME/.cache/cunumpy.
  struct Location {
    std::string directory; ///< empty: no cache
    bool asked = false;    ///< named by CUNUMPY_SITE_CACHE
  };
  static Location from_environment();

  explicit FrameCache(Location location);

  /// The frames kept for `offset` (the address minus the start of the
  /// module's lowest segment) of the module with build id `build_id`; null
  /// when none are.
  const std::vector<SourceFrame>* find(const std::string& build_id,
                                       std::uintptr_t offset);
  /// Keeps `frames` for the next runs: those of a library (skipped when
  /// looking for a call site) or with a line (frames without one are read
  /// again, in case debug information was installed since).
  void store(const std::string& build_id, std::uintptr_t offset,
             const std::vector<SourceFrame>& frames);
  /// Writes the frames stored since the files were read, merged with what
  /// other processes wrote meanwhile; each file replaced whole (written
  /// aside, then renamed), so a reader never sees half of one. Never
  /// throws; a cache that cannot be written is left as it was.
  void save() noexcept;

  /// Entries kept per module at most.
  static constexpr std::size_t max_entries = 1u << 16;

private:
  using Entries = std::unordered_map<std::uintptr_t, std::vector<SourceFrame>>;
  struct File {
    Entries entries;
    bool dirty = false;
  };

  bool usable();
  std::string path_of(const std::string& build_id) const;
  File& file(const std::string& build_id);
  /// Adds the entries of the file at `path` that are not in `entries`:
  /// none unless it is a whole file of the format for `build_id`.
  static void read(const std::string& path, const std::string& build_id,
                   Entries& entries) noexcept;
  static void read_file(const std::string& path, const std::string& build_id,
                        Entries& entries);

  Location location_;
  int usable_ = -1; ///< -1: not checked yet
  std::unordered_map<std::string, File> files_;
};

} // namespace cunumpy::Impl

#endif
