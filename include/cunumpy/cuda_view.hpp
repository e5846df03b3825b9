#ifndef CUNUMPY_CUDA_VIEW_HPP
#define CUNUMPY_CUDA_VIEW_HPP

#include <cstdint>
#include <string>
#include <string_view>

namespace cunumpy::profiling {

/// Where the CUDA view stands: `not_built` (cunumpy was built without the
/// CUDA toolkit), `not_started` (nothing has used cunumpy yet), `off`
/// (CUNUMPY_CUPTI=0), `unavailable` (no CUDA driver, no libcupti, CUPTI
/// taken by another tool, ...: `reason` says which) or `on`.
enum class CudaViewState : std::uint8_t {
  not_built,
  not_started,
  off,
  unavailable,
  on,
};

/// "not built", "not started", "off", "unavailable" or "on".
std::string_view to_string(CudaViewState state) noexcept;

/// Whether cunumpy sees CUDA's own record of the process (CUPTI): the
/// copies Kokkos does not report (a raw cudaMemcpy, cuBLAS, Thrust,
/// CUDA-aware MPI), the waits, and unified-memory migrations. Built when
/// CMake found the CUDA toolkit, on by default, off with CUNUMPY_CUPTI=0;
/// CUDA allows one CUPTI user per process, so under Nsight Systems or
/// another CUPTI user it is off, and `reason` says so.
struct CudaView {
  /// cunumpy was built with the CUPTI collector (CMake found the CUDA
  /// toolkit).
  bool built = false;
  CudaViewState state = CudaViewState::not_started;
  /// CUDA's record of copies and waits is collected (state is `on`).
  bool on = false;
  /// Why not, in one sentence ("" when on).
  std::string reason;
  /// Unified-memory counters (migrations, page faults) are collected: they
  /// start at the program's first managed allocation.
  bool unified_memory = false;
  /// Why not ("" when they are).
  std::string unified_memory_reason;
  /// Why the migrations of the managed memory the program allocated cannot
  /// be seen ("" when they can, or none was allocated): then a budget's
  /// rules on migrations checked nothing (Limit::migrations_unseen).
  std::string migrations_unseen;
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

/// The line reports show: "CUDA view: on", "CUDA view: off
/// (CUNUMPY_CUPTI=0)", "CUDA view: unavailable: <reason>", "CUDA view: not
/// built (...)".
std::string cuda_view_line(const CudaView& view);

} // namespace cunumpy::profiling

#endif
