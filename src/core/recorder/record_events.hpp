#ifndef CUNUMPY_SRC_RECORDER_FEED_HPP
#define CUNUMPY_SRC_RECORDER_FEED_HPP

// The entry points of Kokkos Tools events into the recorder, called by the
// one Kokkos Tools event path (src/core/tools) whoever loaded cunumpy, with
// the recorder the front end connected it to (tools::connect). None
// of them throws: what cannot be recorded is counted as lost. Space names
// are those of Kokkos' SpaceHandle: 64 readable bytes, terminated unless 64
// characters long.

#include <cstdint>
#include <string>

namespace cunumpy::Impl {
class Recorder;
struct ThreadState;
} // namespace cunumpy::Impl

namespace cunumpy::Impl::record {

void begin_deep_copy(Recorder& recorder, const char* dst_space,
                     const char* dst_label, const void* dst_ptr,
                     const char* src_space, const char* src_label,
                     const void* src_ptr, std::uint64_t size) noexcept;
void end_deep_copy(Recorder& recorder) noexcept;
/// Ends the copies `thread` has in flight, innermost first, as their ends
/// would have: the thread ends between a copy's begin and its end (exit
/// from a signal handler, an exception out of the thread). A copy whose
/// begin was not recorded whole is counted as lost.
void end_copies_in_flight(Recorder& recorder, ThreadState& thread) noexcept;
/// The same for the calling thread, when it has a state in `recorder`.
void end_copies_in_flight(Recorder& recorder) noexcept;
void begin_fence(Recorder& recorder, const char* name,
                 std::uint32_t device_id) noexcept;
void end_fence(Recorder& recorder) noexcept;
void push_region(Recorder& recorder, const char* name) noexcept;
void pop_region(Recorder& recorder) noexcept;
/// An explicit phase (TransferBudget::phase) opens on the calling thread:
/// a region of the one tree that no Kokkos tool sees. Returns the token
/// that closes it; throws only std::bad_alloc.
std::uint64_t open_phase(Recorder& recorder, const std::string& name);
void close_phase(Recorder& recorder, std::uint64_t token) noexcept;
void dual_view_sync(Recorder& recorder, const char* label, const void* ptr,
                    bool to_device) noexcept;
void dual_view_modify(Recorder& recorder, const char* label, const void* ptr,
                      bool on_device) noexcept;
/// An allocation (or, `freed`, a deallocation) in memory space `space`:
/// recorded only while a sink wants allocations, and only in host spaces.
void allocation(Recorder& recorder, const char* space, const void* ptr,
                std::uint64_t size, bool freed) noexcept;
/// Kernels (parallel_for, _reduce, _scan): recorded only while a sink
/// wants them (Recorder::want_kernels).
void begin_kernel(Recorder& recorder, const char* name,
                  std::uint32_t device_id) noexcept;
void end_kernel(Recorder& recorder) noexcept;

} // namespace cunumpy::Impl::record

#endif
