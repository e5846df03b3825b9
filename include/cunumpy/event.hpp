#ifndef CUNUMPY_EVENT_HPP
#define CUNUMPY_EVENT_HPP

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cunumpy/impl/kokkos_layer.hpp>

namespace cunumpy {

/// What an event is. `to_host`, `to_device` and `device_copy` are physical
/// copies; `kernel_conversion` and `fallback` are markers without bytes;
/// `sync` is a host wait, counted apart from the transfers; `migration` is
/// unified memory that CUDA moved between host and device on its own (page
/// faults, evictions, prefetches), counted in bytes apart from the
/// transfers (docs/cuda.md); `kokkos_own` is a copy CUDA's record shows
/// Kokkos making on its own, inside a kernel launch, a reduction or an
/// allocation (lock arrays, launch parameters, a view's header): reported
/// with its bytes and call site, not a transfer of the program's, checked by
/// a budget only where a rule allows it with limits.
enum class EventKind : std::uint8_t {
  to_host,
  to_device,
  device_copy,
  kernel_conversion,
  fallback,
  sync,
  migration,
  kokkos_own,
};

inline constexpr std::size_t event_kind_count = 8;

/// Every kind, in the order reports list them.
inline constexpr std::array<EventKind, event_kind_count> all_event_kinds = {
    EventKind::to_host,   EventKind::to_device,   EventKind::kernel_conversion,
    EventKind::fallback,  EventKind::device_copy, EventKind::sync,
    EventKind::migration, EventKind::kokkos_own};

/// The name of `kind` as it appears in reports and rule files: "to_host".
std::string_view to_string(EventKind kind) noexcept;

/// The kind named `name` ("to_host", ...), or nothing for an unknown name.
std::optional<EventKind> parse_event_kind(std::string_view name) noexcept;

/// True for the kinds that move bytes: to_host, to_device, device_copy.
constexpr bool is_copy(EventKind kind) noexcept {
  return kind == EventKind::to_host || kind == EventKind::to_device ||
         kind == EventKind::device_copy;
}

/// True for the kinds whose bytes reports and limits count: the copies, the
/// unified-memory migrations and Kokkos' own copies.
constexpr bool moves_bytes(EventKind kind) noexcept {
  return is_copy(kind) || kind == EventKind::migration ||
         kind == EventKind::kokkos_own;
}

/// True for the kinds the program's transfers are, as total() and the first
/// line of every report count them: to_host, to_device, kernel_conversion,
/// fallback, device_copy. Not sync, migration, kokkos_own.
constexpr bool is_transfer(EventKind kind) noexcept {
  return kind != EventKind::sync && kind != EventKind::migration &&
         kind != EventKind::kokkos_own;
}

/// True for the kinds assert_no_transfers rejects (in C++, GoogleTest and
/// Python): data moved between host and device (to_host, to_device,
/// migration) and host code run on the device backend (kernel_conversion,
/// fallback). Not device_copy (device-only), sync, kokkos_own.
constexpr bool is_host_device_transfer(EventKind kind) noexcept {
  return kind == EventKind::migration ||
         (is_transfer(kind) && kind != EventKind::device_copy);
}

/// The memory a copy read or wrote, as CUDA's record of the copy names it;
/// `unknown` without that record.
enum class MemoryKind : std::uint8_t {
  unknown,
  pageable,
  pinned,
  device,
  managed,
  array,
};

/// "unknown", "pageable", "pinned", "device", "managed" or "array".
std::string_view to_string(MemoryKind kind) noexcept;

/// Where an event was caused: the caller of a cunumpy function, or the first
/// stack frame outside Kokkos, cunumpy and the system libraries for a raw
/// Kokkos call. `line` is 0 when no debug information was found; `file` then
/// names the module and offset.
struct CallSite {
  std::string file;
  int line = 0;
  std::string function;
  /// The Python line that called into the native code of `file:line`
  /// ("workload.py:17 in step"), when Python drove it and the native frame
  /// has a line of its own; else empty.
  std::string python;
  /// The native frame under a Python line given as `file:line` (a module
  /// and offset, "_flow.cpython-311-x86_64-linux-gnu.so+0x10118b", in a
  /// build without debug information); else empty.
  std::string native;
  /// Why the site has no line, or may name a caller of the line (inlined
  /// calls not expanded): "legacy_app: no debug information, and no
  /// separate debug file at ..."; empty when nothing was missing.
  std::string problem;

  bool known() const noexcept { return !file.empty(); }
  /// "file:line", "file" without a line, "<unknown>" when not known; then
  /// " (from <python>)" or " (in <native>)" when set.
  std::string str() const;
};

/// One recorded event.
struct Event {
  EventKind kind = EventKind::to_host;
  /// Bytes moved (0 for markers and syncs).
  std::uint64_t nbytes = 0;
  /// What caused it: "to_device(shape=(100000,), dtype=float64)" for a
  /// cunumpy call, `deep_copy("label", nbytes=800)` for a raw Kokkos copy.
  std::string what;
  /// The Kokkos label of the source view (of the fence for syncs).
  std::string label;
  std::string src_space;
  std::string dst_space;
  CallSite site;
  /// The host waited for it (copies followed by their fence, every sync).
  bool blocking = true;
  /// A copy the host did not wait for (shown `[async]`).
  bool async = false;
  /// A wait the program did not ask for, e.g. a scalar read (`[implicit]`).
  bool implicit = false;
  /// Small integer naming the host thread that caused it.
  std::uint32_t thread = 0;
  /// Seconds since cunumpy started recording, and the event's duration.
  double timestamp = 0.0;
  double duration = 0.0;
  /// Who reported it: "kokkos" for Kokkos Tools and cunumpy's own calls;
  /// the name of another source for an event only it saw, such as "cuda"
  /// for CUDA's own record of the process (a raw cudaMemcpy, a copy inside
  /// cuBLAS, a migration). A Kokkos copy that CUDA's record describes stays
  /// "kokkos", with the fields below filled in.
  std::string source = "kokkos";
  /// The memory kinds of a copy, from CUDA's record of it.
  MemoryKind src_memory = MemoryKind::unknown;
  MemoryKind dst_memory = MemoryKind::unknown;
  /// Seconds the copy took on the device, from CUDA's record; 0 when no
  /// record described it.
  double device_duration = 0.0;
};

} // namespace cunumpy

#endif
