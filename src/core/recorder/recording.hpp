#ifndef CUNUMPY_SRC_RECORDER_RECORDING_HPP
#define CUNUMPY_SRC_RECORDER_RECORDING_HPP

// A recording of the run's input as it reached cunumpy (CUNUMPY_RECORD):
// every Kokkos Tools callback at the plugin's entry points, every CUDA API
// callback the CUPTI collector follows and every activity buffer it
// receives, in the order they arrived, each on one line of JSON (the format
// is in docs/cuda.md#recording-a-run). tests/tools/cunumpy_replay feeds a
// recording to the plugin again on a machine without a GPU.
//
// One file per process, written as lines arrive under a mutex of its own
// (never taken under the recorder's); bounded by a size limit, past which
// the file says it was cut. Off (the default), nothing here runs: the
// plugin's entry points call through the same table as without it, and the
// collector's hooks are one predictable branch each.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cunumpy::Impl {
class Recorder;
}

namespace cunumpy::Impl::recording {

/// The version of the format, in the first line ("version").
inline constexpr int format_version = 1;

extern std::atomic<bool> on;

/// Whether a recording is being written: one relaxed load.
inline bool active() noexcept {
  return on.load(std::memory_order_relaxed);
}

/// What the first line says besides the format: the settings that change
/// counts and verdicts (variable, value), and the rule file's text.
struct Header {
  std::vector<std::pair<std::string, std::string>> settings;
  std::optional<std::string> budget; ///< the rule file's text
  std::string budget_name;           ///< its path, as the user gave it
};

/// Starts recording into `path`, a file the caller checked it may write,
/// of at most `limit` bytes: writes the first line. False with `error`
/// (the file cannot be made) otherwise. Once per process.
bool start(Recorder& recorder, const std::string& path, std::uint64_t limit,
           const Header& header, std::string& error);

/// Ends the recording with its last line ("end": the run's input is whole)
/// and closes the file. Nothing from a signal handler that interrupted a
/// line or an input being carried out (Inside): the file then has no end
/// line, and a replay refuses it.
void finish() noexcept;

/// One line: `event` with the fields added, written by write() with the
/// time, the thread and its depth. Pointers are written as the ids the
/// recording gives them (see pointer()).
class Line {
public:
  explicit Line(std::string_view event);
  Line& text(std::string_view name, std::string_view value);
  /// A C string, or null.
  Line& text(std::string_view name, const char* value);
  Line& number(std::string_view name, std::uint64_t value);
  Line& boolean(std::string_view name, bool value);
  /// A time on the recorder's clock (seconds since it started).
  Line& seconds(std::string_view name, double value);
  /// An address, as "a<N>+<offset>" inside the allocation N Kokkos
  /// reported (allocation()), else "p<N>" (the N-th other address seen),
  /// or null.
  Line& pointer(std::string_view name, const void* value);
  /// The address of an allocation Kokkos reports (`freed`: its end):
  /// "a<N>+0", and from now on (until freed) the addresses inside it are
  /// written relative to it.
  Line& allocation(std::string_view name, const void* base, std::uint64_t size,
                   bool freed);
  /// JSON text as it is (an array of records).
  Line& json(std::string_view name, std::string_view value);
  /// Writes the line, unless the recording has stopped. Never throws.
  void write() noexcept;

private:
  friend struct Sink;
  struct Pointer {
    std::size_t at; ///< where its text goes in body_
    const void* value;
    std::uint64_t size = 0;
    int allocation = 0; ///< 0: an address, 1: allocated, -1: freed
  };
  void key(std::string_view name);
  std::string_view event_;
  std::string body_;
  std::vector<Pointer> pointers_;
};

/// JSON text of an object's members, for records inside a line
/// (Line::json): `{"a":1,"b":"x"}`.
class Object {
public:
  Object& text(std::string_view name, std::string_view value);
  Object& number(std::string_view name, std::uint64_t value);
  /// A time on the recorder's clock, null for none.
  Object& seconds(std::string_view name, std::optional<double> value);
  std::string take();

private:
  void key(std::string_view name);
  std::string text_ = "{";
};

/// While alive, the lines this thread writes are nested in the call or
/// marker written before it (a Kokkos callback, a flush of CUDA's buffers,
/// the fence a tool asked Kokkos for): their depth is one more. A replay
/// makes them again from inside that call.
class Nested {
public:
  Nested() noexcept;
  ~Nested();
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;
};

/// While alive, this thread carries out the input of the line it just
/// wrote (a Kokkos callback, a CUDA callback, a buffer of CUDA's records, a
/// call of cunumpy's library). A process that ends meanwhile, from a
/// signal handler, ends in the middle of it: finish() then writes no end
/// line, since a replay would carry that input out whole.
class Inside {
public:
  Inside() noexcept;
  ~Inside();
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

} // namespace cunumpy::Impl::recording

#endif
