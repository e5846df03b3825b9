// In-process Kokkos Tools hooks: installed on first use, they feed the
// recorder and forward every event to the callbacks that were installed
// before (a tool loaded through KOKKOS_TOOLS_LIBS, another in-process hook).

#include <atomic>
#include <mutex>
#include <stdexcept>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/recorder.hpp>

#include "recorder/recorder.hpp"

namespace cunumpy::Impl {
namespace {

namespace KT = Kokkos::Tools::Experimental;

KT::EventSet previous; // the callbacks we chain to; written once under lock

static_assert(sizeof(Kokkos::Tools::SpaceHandle::name) == 64,
              "feed:: reads space names as Kokkos' 64-byte arrays");

void on_begin_deep_copy(Kokkos::Tools::SpaceHandle dst, const char* dst_label,
                        const void* dst_ptr, Kokkos::Tools::SpaceHandle src,
                        const char* src_label, const void* src_ptr,
                        uint64_t size) {
  feed::begin_deep_copy(dst.name, dst_label, dst_ptr, src.name, src_label,
                        src_ptr, size);
  if (previous.begin_deep_copy != nullptr)
    previous.begin_deep_copy(dst, dst_label, dst_ptr, src, src_label, src_ptr,
                             size);
}

void on_end_deep_copy() {
  if (previous.end_deep_copy != nullptr)
    previous.end_deep_copy();
  feed::end_deep_copy();
}

void on_begin_fence(const char* name, uint32_t device_id, uint64_t* handle) {
  feed::begin_fence(name, device_id);
  // The handle belongs to the chained tool; ours is a per-thread stack.
  if (previous.begin_fence != nullptr)
    previous.begin_fence(name, device_id, handle);
}

void on_end_fence(uint64_t handle) {
  if (previous.end_fence != nullptr)
    previous.end_fence(handle);
  feed::end_fence();
}

void on_push_region(const char* name) {
  feed::push_region(name);
  if (previous.push_region != nullptr)
    previous.push_region(name);
}

void on_pop_region() {
  if (previous.pop_region != nullptr)
    previous.pop_region();
  feed::pop_region();
}

void on_dual_view_sync(const char* label, const void* const ptr,
                       bool to_device) {
  feed::dual_view_sync(label, ptr, to_device);
  if (previous.sync_dual_view != nullptr)
    previous.sync_dual_view(label, ptr, to_device);
}

void on_dual_view_modify(const char* label, const void* const ptr,
                         bool on_device) {
  feed::dual_view_modify(label, ptr, on_device);
  if (previous.modify_dual_view != nullptr)
    previous.modify_dual_view(label, ptr, on_device);
}

bool ours_installed() {
  return KT::get_callbacks().begin_deep_copy == &on_begin_deep_copy;
}

std::atomic<bool> installed{false};
std::mutex install_mutex;

} // namespace

void ensure_hooks() {
  if (installed.load(std::memory_order_acquire))
    return;
  std::lock_guard lock(install_mutex);
  if (installed.load(std::memory_order_relaxed))
    return;
  if (Recorder::instance().fed_by_plugin()) {
    installed.store(true, std::memory_order_release);
    return;
  }
  if (!Kokkos::is_initialized())
    throw std::runtime_error(
        "cunumpy: Kokkos is not initialized; call Kokkos::initialize (or "
        "create a Kokkos::ScopeGuard) before using cunumpy");
  if (!ours_installed()) {
    previous = KT::get_callbacks();
    KT::EventSet ours = previous;
    ours.begin_deep_copy = &on_begin_deep_copy;
    ours.end_deep_copy = &on_end_deep_copy;
    ours.begin_fence = &on_begin_fence;
    ours.end_fence = &on_end_fence;
    ours.push_region = &on_push_region;
    ours.pop_region = &on_pop_region;
    ours.sync_dual_view = &on_dual_view_sync;
    ours.modify_dual_view = &on_dual_view_modify;
    KT::set_callbacks(ours);
  }
  installed.store(true, std::memory_order_release);
}

} // namespace cunumpy::Impl
