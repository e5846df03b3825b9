#ifndef CUNUMPY_DEVICE_MIRROR_HPP
#define CUNUMPY_DEVICE_MIRROR_HPP

#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>
#include <cunumpy/synchronize.hpp>

namespace cunumpy {
namespace Impl {

[[noreturn]] void throw_not_contiguous(const char* function,
                                       const char* argument,
                                       const std::string& label);

} // namespace Impl

/// Pairs a host buffer owned by someone else (a vector a host library keeps
/// using, an MPI buffer) with a device copy, and makes the two transfers
/// between them explicit — Python's `DeviceMirror`.
///
///     cunumpy::DeviceMirror mirror(host_buffer); // one to_device copy
///     accumulate(mirror.device());               // kernels write here
///     mirror.to_host();   // into host_buffer, in place
///     ... CPU work changes host_buffer ...
///     mirror.to_device(); // before resuming GPU work
///
/// `HostView` is a contiguous LayoutLeft or LayoutRight view in a host memory
/// space (an unmanaged view of someone else's memory is typical); it is
/// never reallocated. `DeviceSpace` defaults to the device space of this
/// build; when that is a host space (a host-only build), device() is the
/// host view itself and both copies are no-ops that record nothing. Both
/// directions appear in counters and budgets, at the caller's line.
template <class HostView, class DeviceSpace = default_device_memory_space>
class DeviceMirror {
  static_assert(Kokkos::is_view<HostView>::value,
                "cunumpy::DeviceMirror: HostView must be a Kokkos::View");
  static_assert(is_host_memory_space_v<typename HostView::memory_space>,
                "cunumpy::DeviceMirror: the view it mirrors must be in a "
                "host memory space (it pairs host memory with a device copy)");
  static_assert(!std::is_const_v<typename HostView::value_type>,
                "cunumpy::DeviceMirror: the host view must not be const: "
                "to_host() writes into it");
  static_assert(
      std::is_same_v<typename HostView::array_layout, Kokkos::LayoutLeft> ||
          std::is_same_v<typename HostView::array_layout, Kokkos::LayoutRight>,
      "cunumpy::DeviceMirror: the host view must be LayoutLeft or "
      "LayoutRight, so that copies go in place without packing");

  using device_memory_space = typename DeviceSpace::memory_space;

public:
  /// False when the device space is a host space: nothing is ever copied.
  static constexpr bool copies = !is_host_memory_space_v<device_memory_space>;

  using host_view_type = HostView;
  using device_view_type = std::conditional_t<
      copies,
      Kokkos::View<typename HostView::data_type,
                   typename HostView::array_layout, device_memory_space>,
      HostView>;

  /// Allocates the device copy and copies `host` into it: one `to_device`
  /// (none when the device space is a host space, where device() is `host`).
  /// Throws std::invalid_argument for an unallocated or padded view.
  explicit DeviceMirror(const HostView& host,
                        SourceLocation where = SourceLocation::current())
      : host_(host), device_(device_copy_of(host, where)) {}

  /// The view kernels read and write: the device copy (the host view itself
  /// when the device space is a host space).
  const device_view_type& device() const noexcept { return device_; }
  /// The host view given at construction.
  const HostView& host() const noexcept { return host_; }

  /// Copies the device copy into the host view, in place: one blocking
  /// `to_host` (nothing when device() is the host view). The host data is
  /// ready when it returns.
  void to_host(SourceLocation where = SourceLocation::current()) const {
    if constexpr (copies)
      copy("DeviceMirror::to_host", host_, device_, where);
  }

  /// to_host() after waiting for the work queued on `producer` (as Python's
  /// `stream=`/`event=`): use it when the kernel that wrote device() ran on
  /// another execution-space instance. The wait is recorded as a `sync`.
  template <
      class ExecSpace,
      std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void to_host(const ExecSpace& producer,
               SourceLocation where = SourceLocation::current()) const {
    if constexpr (copies) {
      wait_for(producer, "DeviceMirror::to_host", where);
      copy("DeviceMirror::to_host", host_, device_, where);
    }
  }

  /// Copies the host view into the device copy after CPU work changed it:
  /// one blocking `to_device` (nothing when device() is the host view).
  void to_device(SourceLocation where = SourceLocation::current()) const {
    if constexpr (copies)
      copy("DeviceMirror::to_device", device_, host_, where);
  }

  /// to_device() after waiting for the work queued on `consumer`, which may
  /// still be reading the device copy. The wait is recorded as a `sync`.
  template <
      class ExecSpace,
      std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value, int> = 0>
  void to_device(const ExecSpace& consumer,
                 SourceLocation where = SourceLocation::current()) const {
    if constexpr (copies) {
      wait_for(consumer, "DeviceMirror::to_device", where);
      copy("DeviceMirror::to_device", device_, host_, where);
    }
  }

private:
  static device_view_type device_copy_of(const HostView& host,
                                         SourceLocation where) {
    Impl::require_allocated(host, "cunumpy::DeviceMirror", "host");
    if (!host.span_is_contiguous())
      Impl::throw_not_contiguous("cunumpy::DeviceMirror", "host", host.label());
    if constexpr (copies) {
      (void)Impl::allocation_bytes<typename device_view_type::value_type>(
          "cunumpy::DeviceMirror", "host", host);
      device_view_type device(
          Kokkos::view_alloc(Kokkos::WithoutInitializing,
                             std::string(host.label())),
          Impl::unpadded_layout<typename HostView::array_layout>(host));
      copy("DeviceMirror", device, host, where);
      return device;
    } else {
      return host;
    }
  }

  template <class Dst, class Src>
  static void copy(const char* api, const Dst& dst, const Src& src,
                   SourceLocation where) {
    Impl::ensure_hooks();
    const Impl::ArrayShape shape = Impl::shape_of(src);
    Impl::ApiScope scope(api, where, &shape);
    Impl::deep_copy_from(dst, src);
  }

  template <class ExecSpace>
  static void wait_for(const ExecSpace& instance, const char* api,
                       SourceLocation where) {
    Impl::ensure_hooks();
    Impl::SyncScope wait(api, where);
    Impl::fence_instance(instance, "cunumpy::DeviceMirror: wait for the "
                                   "instance given");
  }

  HostView host_;
  device_view_type device_;
};

} // namespace cunumpy

#endif
