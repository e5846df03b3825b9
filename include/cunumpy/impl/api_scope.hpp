#ifndef CUNUMPY_IMPL_API_SCOPE_HPP
#define CUNUMPY_IMPL_API_SCOPE_HPP

// The part of the recorder that inline front-end code needs: installing the
// Kokkos Tools hooks and attributing the events a cunumpy call causes to the
// caller. The recorder itself lives in src/core.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <cunumpy/event.hpp>
#include <cunumpy/source_location.hpp>

namespace Kokkos {
template <class T> struct complex;
}

namespace cunumpy::Impl {

class Recorder;

/// The recorder, for the library's entry points (the public functions and
/// objects a program calls without a context), which hand it on.
Recorder& library_recorder() noexcept;

/// Installs cunumpy's Kokkos Tools callbacks the first time it is called,
/// keeping the callbacks installed before (a tool loaded through
/// KOKKOS_TOOLS_LIBS, another in-process hook) and forwarding every event to
/// them. Does nothing when the cunumpy plugin already feeds the recorder, or
/// in a program without cunumpy's Kokkos-facing library (libcunumpy), which
/// is what installs them. Returns the recorder they feed. Throws
/// std::runtime_error when Kokkos is not initialized.
Recorder& ensure_hooks();

/// How the in-process hooks are installed: registered by the Kokkos-facing
/// library when it is loaded (the core links no Kokkos).
using HookInstaller = void (*)(Recorder& recorder);
void set_hook_installer(HookInstaller installer) noexcept;

/// Marks the module (shared library, Python extension, Kokkos tool) whose
/// code or data holds `address` as one of cunumpy's: its frames are never
/// a call site, whatever its file is called. Each of cunumpy's modules
/// notes itself when loaded, with an address no other module can hold
/// (the core knows its own). A module linked into the program itself is
/// never skipped: the program's frames are the call sites.
void note_own_module(const void* address) noexcept;

/// The most dimensions an array of cunumpy's has (Kokkos views have 8).
inline constexpr int max_rank = 8;

/// Shape and element type of an array, for event descriptions.
struct ArrayShape {
  int rank = 0;
  std::size_t extents[max_rank] = {};
  const char* dtype = "unknown";
};

/// "(100000,)", "()", "(3, 4)": the shape as Python writes a tuple.
std::string shape_string(const ArrayShape& shape);

/// The NumPy name of an element type: "float64", "int32", "complex128"...
template <class T> constexpr const char* dtype_name() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return "bool";
  } else if constexpr (std::is_integral_v<U>) {
    constexpr bool s = std::is_signed_v<U>;
    switch (sizeof(U)) {
    case 1:
      return s ? "int8" : "uint8";
    case 2:
      return s ? "int16" : "uint16";
    case 4:
      return s ? "int32" : "uint32";
    default:
      return s ? "int64" : "uint64";
    }
  } else if constexpr (std::is_same_v<U, float>) {
    return "float32";
  } else if constexpr (std::is_same_v<U, double>) {
    return "float64";
  } else if constexpr (std::is_same_v<U, std::complex<float>> ||
                       std::is_same_v<U, Kokkos::complex<float>>) {
    return "complex64";
  } else if constexpr (std::is_same_v<U, std::complex<double>> ||
                       std::is_same_v<U, Kokkos::complex<double>>) {
    return "complex128";
  } else {
    return "unknown";
  }
}

/// While alive, the events this thread causes are attributed to a cunumpy
/// call: its caller's file and line, and a description such as
/// "to_device(shape=(100000,), dtype=float64)". Scopes nest: an inner scope
/// keeps the outer scope's call site (the user's line) and its own
/// description. With `async`, the copies inside are recorded as copies the
/// host did not wait for, whatever the Kokkos version reports.
class ApiScope {
public:
  ApiScope(std::string_view api, SourceLocation where,
           const ArrayShape* shape = nullptr, bool async = false);
  /// For front ends that know the caller's location as text (Python), with
  /// the description made by the front end.
  ApiScope(std::string_view description, std::string_view file, int line,
           std::string_view function, bool async = false);
  /// A scope that a recording of the run (CUNUMPY_RECORD) holds as the
  /// call it is part of (a SyncScope, a marker), not as a scope of its own.
  struct Unrecorded {};
  ApiScope(std::string_view description, std::string_view file, int line,
           std::string_view function, bool async, Unrecorded);
  ~ApiScope();

  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

  /// The innermost scope of the calling thread, or null.
  static ApiScope* current() noexcept;

  /// What the call is, as reports show it: "to_device(shape=(3,),
  /// dtype=float64)".
  const std::string& description() const noexcept { return description_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  const std::string& function() const noexcept { return function_; }
  bool async() const noexcept { return async_; }

  /// Recorder cache: interned ids of the call site and description.
  std::uint32_t site_id = 0;
  std::uint32_t description_id = 0;
  /// Set by SyncScope: the fences inside are one wait, recorded once (a
  /// global fence reports one fence per execution space), implicit when the
  /// scope says so.
  bool single_sync = false;
  bool sync_recorded = false;
  bool implicit_sync = false;

private:
  void enter();

  ApiScope* outer_ = nullptr;
  bool recorded_ = false; ///< its start is in the recording
  std::string description_;
  std::string file_;
  int line_ = 0;
  std::string function_;
  bool async_ = false;
};

/// Records a marker event (`kernel_conversion`, `fallback`) with no bytes,
/// described by `description`.
void record_marker(EventKind kind, std::string_view description,
                   SourceLocation where);

/// "api(shape=(3, 4), dtype=float64)", or "api()" without a shape: how
/// reports describe a cunumpy call, in every front end.
std::string describe_call(std::string_view api, const ArrayShape* shape);

/// A front end's guess at the caller when no cunumpy call is active (the
/// Python module gives the current Python line). Called on the thread of
/// the event, without locks; returns false when it knows nothing.
using SiteProvider = bool (*)(std::string& file, int& line,
                              std::string& function);
void set_site_provider(SiteProvider provider) noexcept;
SiteProvider site_provider() noexcept;

/// Debug-sync mode on (nested: one `false` per `true`): the host waits for
/// the device after every Kokkos kernel, and each wait is recorded as an
/// implicit sync named after the kernel (CUNUMPY_DEBUG_SYNC=1 turns it on
/// for the whole run).
void set_debug_sync(bool on) noexcept;

/// While alive, a host wait the scope stands for (`synchronize()`, the wait of
/// an async result) is recorded once: from the Kokkos fence event when the
/// Kokkos version reports fences, else by the scope itself when it ends.
class SyncScope {
public:
  SyncScope(std::string_view api, SourceLocation where, bool implicit = false);
  /// For front ends that know the caller's location as text, with the
  /// description made by the front end ("api()" for the one above).
  SyncScope(std::string_view description, std::string_view file, int line,
            std::string_view function, bool implicit);
  ~SyncScope();

  SyncScope(const SyncScope&) = delete;
  SyncScope& operator=(const SyncScope&) = delete;

private:
  void start();

  ApiScope api_;
  std::uint64_t fences_before_;
  double start_;
  bool implicit_;
  bool recorded_ = false; ///< its start is in the recording
};

} // namespace cunumpy::Impl

#endif
