#ifndef CUNUMPY_CUDA_VIEW_HPP
#define CUNUMPY_CUDA_VIEW_HPP

#include <cstdint>
#include <string>

namespace cunumpy::profiling {

/// Whether cunumpy sees CUDA's own record of the process (CUPTI): the
/// copies Kokkos does not report (a raw cudaMemcpy, cuBLAS, Thrust,
/// CUDA-aware MPI), the waits, and unified-memory migrations. Built when
/// CMake found the CUDA toolkit, on by default, off with CUNUMPY_CUPTI=0;
/// CUDA allows one CUPTI user per process, so under Nsight Systems or
/// another CUPTI user it is off, and `reason` says so.
struct CudaView {
  /// CUDA's record of copies and waits is collected.
  bool on = false;
  /// Why not, in one sentence ("" when on).
  std::string reason;
  /// Unified-memory counters (migrations, page faults) are collected.
  bool unified_memory = false;
  /// Why not ("" when they are).
  std::string unified_memory_reason;
  /// CUDA's copy records received, and how many described an event.
  std::uint64_t copy_records = 0;
  std::uint64_t described = 0;
  /// Copy records of copies no event waited for (made while nothing
  /// counted), or that came after their event had gone on without them.
  std::uint64_t unmatched = 0;
  std::uint64_t too_late = 0;
  /// Events that went on without CUDA's record (no memory kinds, no time
  /// on the device).
  std::uint64_t without_record = 0;
  /// Unified-memory records received, and the bytes they migrated.
  std::uint64_t migration_records = 0;
  std::uint64_t migrated_bytes = 0;
  /// Records CUDA dropped (its buffers were full).
  std::uint64_t dropped_records = 0;
};

/// What cunumpy sees of CUDA's record now.
CudaView cuda_view();

} // namespace cunumpy::profiling

#endif
