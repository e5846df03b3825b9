#ifndef CUNUMPY_HOST_STAGING_HPP
#define CUNUMPY_HOST_STAGING_HPP

#include <any>
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/pin_memory.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>
#include <cunumpy/to_host_async.hpp>

namespace cunumpy {

/// Reusable page-locked host buffers for large arrays copied to the host
/// repeatedly, such as output snapshots — Python's `memory.HostStaging`.
///
///     cunumpy::HostStaging staging;
///     for (int step = 0; step < n_steps; ++step) {
///       advance(state);
///       if (step % 100 == 0) {
///         auto snapshot = staging.copy(state); // returns at once
///         ... queue more work ...
///         write_output(snapshot.result());     // waits if not yet copied
///       }
///     }
///
/// copy() is to_host_async into a buffer of the staging: the first copy of a
/// shape allocates a pinned buffer, later copies of that shape reuse it once
/// nobody holds it any more (the PendingHost and every view result() gave
/// out are gone), so a steady loop allocates nothing. A buffer still held
/// is never overwritten: the copy gets a second buffer. Not thread-safe;
/// buffers are freed with the staging (or clear()), before Kokkos::finalize.
class HostStaging {
public:
  HostStaging() = default;
  HostStaging(HostStaging&&) noexcept = default;
  HostStaging& operator=(HostStaging&&) noexcept = default;
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  /// Starts copying the device view `view` into a staging buffer after the
  /// work queued so far on `producer`, and returns at once; result() is the
  /// buffer (a pinned host view, LayoutLeft kept, else LayoutRight).
  ///
  /// One device-to-host copy, recorded as a non-blocking `to_host` (`[async]`)
  /// at the caller's line (a strided view is packed on the device first: a
  /// `device_copy`). A host view is returned as is, without a copy or an
  /// event, as to_host does. Throws std::invalid_argument for an unallocated
  /// view.
  template <class ExecSpace, class View,
            std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                                 Kokkos::is_view<View>::value,
                             int> = 0>
  PendingHost<Impl::async_result_t<View>>
  copy(const ExecSpace& producer, const View& view,
       SourceLocation where = SourceLocation::current()) {
    static_assert(View::rank > 0, "cunumpy::HostStaging::copy: use "
                                  "to_host_async to read a rank-0 view");
    using Result = Impl::async_result_t<View>;
    Impl::check_producer(producer, view);
    Impl::require_allocated(view, "cunumpy::HostStaging::copy", "view");
    if constexpr (!Impl::is_device_view_v<View>) {
      return Impl::PendingHostAccess::ready<Result>(view);
    } else {
      (void)Impl::allocation_bytes<typename Result::value_type>(
          "cunumpy::HostStaging::copy", "view", view);
      Impl::ensure_hooks();
      const Impl::ArrayShape shape = Impl::shape_of(view);
      Impl::ApiScope scope("HostStaging::copy", where, &shape,
                           /*async=*/true);
      const Result buffer = buffer_for<Result>(view);
      return Impl::PendingHostAccess::start<Result>(producer, view, buffer, {});
    }
  }

  /// copy() after the work queued on the default instance of the view's
  /// execution space.
  template <class View, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
  PendingHost<Impl::async_result_t<View>>
  copy(const View& view, SourceLocation where = SourceLocation::current()) {
    return copy(typename View::execution_space(), view, where);
  }

  /// Number of buffers held.
  std::size_t buffers() const noexcept { return buffers_.size(); }
  /// Number of buffers allocated since construction (or clear()).
  std::size_t allocations() const noexcept { return allocations_; }
  /// Bytes of pinned memory held.
  std::size_t bytes() const noexcept {
    std::size_t total = 0;
    for (const Buffer& buffer : buffers_)
      total += buffer.bytes;
    return total;
  }
  /// Lets go of every buffer (views given out stay valid).
  void clear() noexcept {
    buffers_.clear();
    allocations_ = 0;
  }

private:
  struct Buffer {
    std::type_index type;
    std::array<std::size_t, 8> extents;
    std::size_t bytes;
    std::any view;
  };

  /// A free buffer of type `Result` with the extents of `view`, or a new one.
  template <class Result, class View> Result buffer_for(const View& view) {
    std::array<std::size_t, 8> extents{};
    for (int i = 0; i < static_cast<int>(View::rank); ++i)
      extents[i] = view.extent(i);
    const std::type_index type(typeid(Result));
    for (Buffer& buffer : buffers_) {
      if (buffer.type != type || buffer.extents != extents)
        continue;
      const Result& held = std::any_cast<const Result&>(buffer.view);
      if (held.use_count() == 1) // only the staging holds it
        return held;
    }
    Result fresh(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                    "cunumpy::HostStaging(" +
                                        std::string(view.label()) + ")"),
                 Impl::unpadded_layout<typename Result::array_layout>(view));
    buffers_.push_back(
        Buffer{type, extents,
               fresh.span() * sizeof(typename Result::value_type), fresh});
    ++allocations_;
    return fresh;
  }

  std::vector<Buffer> buffers_;
  std::size_t allocations_ = 0;
};

} // namespace cunumpy

#endif
