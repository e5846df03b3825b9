#ifndef CUNUMPY_SRC_CUDA_CUDA_RECORDS_HPP
#define CUNUMPY_SRC_CUDA_CUDA_RECORDS_HPP

// What CUDA's own record of the process gives cunumpy, as plain structs: the
// API calls CUPTI's callbacks report on the calling thread, and the records
// of its activity buffers (copies, unified-memory counters). The CUPTI
// collector (cupti_collector.cpp) fills them from CUPTI's structs; the
// attribution unit (attribution.hpp) and the tests take them as they are.
// No CUDA header is needed to use them.

#include <cstdint>

#include <cunumpy/event.hpp>

namespace cunumpy::Impl::cuda {

/// Which way a copy goes, as cudaMemcpyKind and CUPTI's copy kinds say.
enum class CopyDirection : std::uint8_t {
  unknown,
  host_to_device,
  device_to_host,
  device_to_device, ///< on one device, or between two (peer)
  host_to_host,
};

/// The kind of a copy in that direction: nothing for host to host (not a
/// transfer) or an unknown direction.
inline bool kind_of(CopyDirection direction, EventKind& kind) noexcept {
  switch (direction) {
  case CopyDirection::host_to_device:
    kind = EventKind::to_device;
    return true;
  case CopyDirection::device_to_host:
    kind = EventKind::to_host;
    return true;
  case CopyDirection::device_to_device:
    kind = EventKind::device_copy;
    return true;
  default:
    return false;
  }
}

/// What a CUDA API call of interest does.
enum class CallFamily : std::uint8_t {
  copy,     ///< cudaMemcpy*, cuMemcpy*
  prefetch, ///< cudaMemPrefetchAsync: asks CUDA to migrate managed memory
  wait,     ///< cudaDeviceSynchronize, cudaStreamSynchronize, ...
};

/// A CUDA API call, at its entry, as CUPTI's callback reports it on the
/// thread that makes it.
struct ApiCall {
  const char* name = ""; ///< "cudaMemcpyAsync" (static storage)
  CallFamily family = CallFamily::copy;
  bool driver = false;      ///< a driver API function (cuMemcpy*)
  bool synchronous = false; ///< the call returns when the copy is done
  CopyDirection direction = CopyDirection::unknown;
  std::uint64_t bytes = 0; ///< 0 when the arguments do not say
  /// Where a copy writes and reads, when the arguments say (null for a
  /// symbol, an array, a wait).
  const void* dst = nullptr;
  const void* src = nullptr;
  std::uint32_t correlation = 0;
};

/// CUDA's record of one copy (CUPTI_ACTIVITY_KIND_MEMCPY). `correlation` is
/// the driver call's, `runtime_correlation` the runtime call's (0 when the
/// copy was made through the driver API).
struct CopyRecord {
  std::uint32_t correlation = 0;
  std::uint32_t runtime_correlation = 0;
  CopyDirection direction = CopyDirection::unknown;
  MemoryKind src = MemoryKind::unknown;
  MemoryKind dst = MemoryKind::unknown;
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0; ///< 0 and 0: not timed
  std::uint64_t end_ns = 0;
};

/// What a unified-memory counter record counts.
enum class UnifiedMemoryCounter : std::uint8_t {
  bytes_to_device,
  bytes_to_host,
  bytes_device_to_device,
  gpu_page_fault,
  cpu_page_fault,
  thrashing,
  throttling,
  remote_map,
};

/// Why CUDA migrated the bytes of a transfer record.
enum class MigrationCause : std::uint8_t {
  unknown,
  user,            ///< cudaMemPrefetchAsync
  coherence,       ///< a page fault
  prefetch,        ///< the driver's speculative prefetch
  eviction,        ///< evicted to make room on the device
  access_counters, ///< frequently accessed pages moved
};

/// CUDA's record of unified memory (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_
/// COUNTER): bytes migrated, or one page fault, thrashing, throttling or
/// remote map.
struct UnifiedMemoryRecord {
  UnifiedMemoryCounter counter = UnifiedMemoryCounter::bytes_to_device;
  MigrationCause cause = MigrationCause::unknown;
  std::uint64_t value = 0; ///< bytes for the transfer counters
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0; ///< 0 for the counters without an end
};

/// CUDA's timestamps (nanoseconds) on the recorder's clock (seconds): the
/// collector has CUPTI take its timestamps from that clock when it can
/// (then `ns_origin` and `seconds_origin` are 0), else it maps one reading
/// of each taken together.
struct TimeMapping {
  std::uint64_t ns_origin = 0;
  double seconds_origin = 0.0;

  double seconds(std::uint64_t ns) const noexcept {
    return seconds_origin +
           (static_cast<double>(ns) - static_cast<double>(ns_origin)) * 1e-9;
  }
};

/// The names of the records' values in a recording (CUNUMPY_RECORD): the
/// collector writes them, a replay reads them back (from_name).
inline const char* name_of(CopyDirection direction) noexcept {
  switch (direction) {
  case CopyDirection::host_to_device:
    return "h2d";
  case CopyDirection::device_to_host:
    return "d2h";
  case CopyDirection::device_to_device:
    return "d2d";
  case CopyDirection::host_to_host:
    return "h2h";
  case CopyDirection::unknown:
    break;
  }
  return "unknown";
}
inline const char* name_of(CallFamily family) noexcept {
  switch (family) {
  case CallFamily::copy:
    return "copy";
  case CallFamily::prefetch:
    return "prefetch";
  case CallFamily::wait:
    break;
  }
  return "wait";
}
inline const char* name_of(MemoryKind kind) noexcept {
  switch (kind) {
  case MemoryKind::pageable:
    return "pageable";
  case MemoryKind::pinned:
    return "pinned";
  case MemoryKind::device:
    return "device";
  case MemoryKind::managed:
    return "managed";
  case MemoryKind::array:
    return "array";
  case MemoryKind::unknown:
    break;
  }
  return "unknown";
}
inline const char* name_of(UnifiedMemoryCounter counter) noexcept {
  switch (counter) {
  case UnifiedMemoryCounter::bytes_to_device:
    return "bytes_to_device";
  case UnifiedMemoryCounter::bytes_to_host:
    return "bytes_to_host";
  case UnifiedMemoryCounter::bytes_device_to_device:
    return "bytes_device_to_device";
  case UnifiedMemoryCounter::gpu_page_fault:
    return "gpu_page_fault";
  case UnifiedMemoryCounter::cpu_page_fault:
    return "cpu_page_fault";
  case UnifiedMemoryCounter::thrashing:
    return "thrashing";
  case UnifiedMemoryCounter::throttling:
    return "throttling";
  case UnifiedMemoryCounter::remote_map:
    break;
  }
  return "remote_map";
}
inline const char* name_of(MigrationCause cause) noexcept {
  switch (cause) {
  case MigrationCause::user:
    return "user";
  case MigrationCause::coherence:
    return "coherence";
  case MigrationCause::prefetch:
    return "prefetch";
  case MigrationCause::eviction:
    return "eviction";
  case MigrationCause::access_counters:
    return "access_counters";
  case MigrationCause::unknown:
    break;
  }
  return "unknown";
}

/// The value of `Enum` named `name` (name_of), for values up to `last`;
/// false for a name none has.
template <class Enum>
bool from_name(const char* name, Enum last, Enum& value) noexcept {
  for (unsigned i = 0; i <= static_cast<unsigned>(last); ++i) {
    const auto candidate = static_cast<Enum>(i);
    const char* text = name_of(candidate);
    unsigned j = 0;
    while (text[j] != '\0' && text[j] == name[j])
      ++j;
    if (text[j] == '\0' && name[j] == '\0') {
      value = candidate;
      return true;
    }
  }
  return false;
}

} // namespace cunumpy::Impl::cuda

#endif
