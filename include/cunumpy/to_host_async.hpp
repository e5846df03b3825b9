#ifndef CUNUMPY_TO_HOST_ASYNC_HPP
#define CUNUMPY_TO_HOST_ASYNC_HPP

#include <any>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/pin_memory.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>

namespace cunumpy {

template <class Result> class PendingHost;

namespace Impl {

struct PendingHostAccess;

/// A 64-byte block of page-locked memory that receives one scalar, taken
/// from a pool that only grows (it is freed at Kokkos::finalize), so that
/// reading a value per iteration allocates nothing once warm.
class PinnedScalarSlot {
public:
  static constexpr std::size_t capacity = 64;

  PinnedScalarSlot() = default;
  static PinnedScalarSlot acquire();
  PinnedScalarSlot(PinnedScalarSlot&& other) noexcept;
  PinnedScalarSlot& operator=(PinnedScalarSlot&& other) noexcept;
  PinnedScalarSlot(const PinnedScalarSlot&) = delete;
  PinnedScalarSlot& operator=(const PinnedScalarSlot&) = delete;
  ~PinnedScalarSlot() { release(); }

  void* data() const noexcept { return data_; }
  /// Gives the block back to the pool.
  void release() noexcept;

private:
  PinnedScalarSlot(void* data, std::uint64_t generation)
      : data_(data), generation_(generation) {}

  void* data_ = nullptr;
  std::uint64_t generation_ = 0;
};

/// The completion of the copies of one asynchronous read: a CUDA or HIP
/// event recorded after them, nothing for copies a host execution space made
/// at once, or an instance to fence on other device backends (which offer no
/// query).
class CopyCompletion {
public:
  /// Already complete.
  CopyCompletion() = default;
  /// Complete when `event` (a cudaEvent_t or hipEvent_t of the pool of
  /// generation `generation`) has happened.
  CopyCompletion(void* event, std::uint64_t generation)
      : event_(event), generation_(generation) {}
  /// Complete once `instance` is fenced.
  explicit CopyCompletion(const Kokkos::DefaultExecutionSpace& instance)
      : fence_(instance) {}
  CopyCompletion(CopyCompletion&& other) noexcept;
  CopyCompletion& operator=(CopyCompletion&& other) noexcept;
  CopyCompletion(const CopyCompletion&) = delete;
  CopyCompletion& operator=(const CopyCompletion&) = delete;
  ~CopyCompletion() { release(); }

  /// True once the copies have finished; never waits.
  bool ready() const;
  /// Waits until they have finished (the caller records the wait).
  void wait();

private:
  void release() const noexcept;

  mutable void* event_ = nullptr;
  std::uint64_t generation_ = 0;
  std::optional<Kokkos::DefaultExecutionSpace> fence_;
};

/// Starts an asynchronous copy that must see the work queued so far on
/// `producer`, and returns the instance to queue it on: on CUDA and HIP an
/// instance of cunumpy's own on a non-blocking stream, made to wait for an
/// event recorded on the producer's stream (the host does not wait); on
/// other backends the producer itself, whose queue orders the copy.
Kokkos::DefaultExecutionSpace
begin_async_copy(const Kokkos::DefaultExecutionSpace& producer);

/// Ends it: work queued later on `producer` waits for the copies queued on
/// `copier` (so it may overwrite their source), and the returned completion
/// tells when they have finished.
CopyCompletion end_async_copy(const Kokkos::DefaultExecutionSpace& producer,
                              const Kokkos::DefaultExecutionSpace& copier);

/// Kokkos::deep_copy(exec, dst, src) for any source (see copy_source).
template <class ExecSpace, class Dst, class Src>
void deep_copy_on(const ExecSpace& exec, const Dst& dst, const Src& src) {
  Kokkos::deep_copy(exec, dst, copy_source(src));
}

/// True for execution spaces that run on the host (Serial, OpenMP, the
/// fake device's): their copies are done when deep_copy returns.
template <class ExecSpace>
inline constexpr bool is_host_execution_space_v =
    is_host_memory_space_v<typename ExecSpace::memory_space>;

/// `view` as a contiguous view of its own memory space in the kept layout:
/// the view itself, an alias of a strided view that is row-major contiguous,
/// or a packed copy queued on `exec` (a device_copy).
template <class ExecSpace, class View>
auto contiguous_on(const ExecSpace& exec, const View& view) {
  using Layout = typename View::array_layout;
  if constexpr (!std::is_same_v<Layout, Kokkos::LayoutStride>) {
    return view;
  } else {
    using Packed =
        Kokkos::View<typename View::const_data_type, Kokkos::LayoutRight,
                     typename View::memory_space>;
    const auto layout = unpadded_layout<Kokkos::LayoutRight>(view);
    if (is_row_major_contiguous(view)) {
      using Alias =
          Kokkos::View<typename View::const_data_type, Kokkos::LayoutRight,
                       typename View::memory_space,
                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      return Packed(Alias(view.data(), layout));
    }
    typename Packed::non_const_type packed(
        Kokkos::view_alloc(Kokkos::WithoutInitializing,
                           std::string(view.label())),
        layout);
    deep_copy_on(exec, packed, view);
    return Packed(packed);
  }
}

/// Queues the copy of the contiguous `src` into the host view `dst` after the
/// work queued so far on `producer`, without waiting; returns its completion.
/// Must run inside an asynchronous ApiScope.
template <class ExecSpace, class Dst, class Src>
CopyCompletion queue_copy_to_host(const ExecSpace& producer, const Dst& dst,
                                  const Src& src) {
  if constexpr (is_host_execution_space_v<ExecSpace>) {
    // The fake device: the copy is done when deep_copy returns.
    deep_copy_on(producer, dst, src);
    return CopyCompletion();
  } else {
    static_assert(std::is_same_v<ExecSpace, Kokkos::DefaultExecutionSpace>,
                  "cunumpy: asynchronous copies to the host are made from "
                  "views of Kokkos::DefaultExecutionSpace or of a host "
                  "execution space");
    const Kokkos::DefaultExecutionSpace copier = begin_async_copy(producer);
    deep_copy_on(copier, dst, src);
    return end_async_copy(producer, copier);
  }
}

template <class View>
inline constexpr bool is_device_view_v =
    !is_host_memory_space_v<typename View::memory_space>;

/// What to_host_async(view).result() returns: the value of a rank-0 view, the
/// view itself when it already is on the host, else a pinned host view.
template <class View>
using async_result_t = std::conditional_t<
    View::rank == 0, typename View::non_const_value_type,
    std::conditional_t<is_device_view_v<View>, pinned_view_t<View>, View>>;

template <class ExecSpace, class View>
void check_producer(const ExecSpace&, const View&) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "cunumpy: 'producer' must be a Kokkos execution space "
                "instance");
  static_assert(!is_device_view_v<View> ||
                    std::is_same_v<ExecSpace, typename View::execution_space>,
                "cunumpy: 'producer' must be an instance of the view's "
                "execution space");
}

} // namespace Impl

/// The result of an asynchronous copy to the host (to_host_async,
/// HostStaging::copy): ready() asks whether the copy has finished without
/// waiting, result() returns the host value and waits only if it has not.
///
/// `Result` is the element type for a rank-0 view, else a host view. Holding
/// a PendingHost keeps the source and the host buffer alive. Move-only.
template <class Result> class PendingHost {
public:
  using result_type = Result;

  PendingHost(PendingHost&&) noexcept = default;
  PendingHost& operator=(PendingHost&&) noexcept = default;
  PendingHost(const PendingHost&) = delete;
  PendingHost& operator=(const PendingHost&) = delete;

  /// True once the copy has finished: result() will not wait. Never waits.
  /// Always true on host backends and on the fake device, whose copies are
  /// made at once.
  bool ready() const { return completion_.ready(); }

  /// The host value: the element of a rank-0 view, else a host view (for
  /// HostStaging, one of its reused buffers). Waits if the copy has not
  /// finished yet; that wait is recorded as a `sync` event at the caller's
  /// line.
  Result result(SourceLocation where = SourceLocation::current()) {
    if (!completion_.ready()) {
      Impl::SyncScope wait("PendingHost::result", where);
      completion_.wait();
    }
    if constexpr (!Kokkos::is_view<Result>::value) {
      if (slot_.data() != nullptr) {
        result_ = *static_cast<const Result*>(slot_.data());
        slot_.release();
      }
    }
    return result_;
  }

private:
  friend struct Impl::PendingHostAccess;

  // The result is given at construction: a default-constructed View is
  // broken in the Kokkos 4.6.99 development snapshot (with GCC 12).
  explicit PendingHost(const Result& result) : result_(result) {}

  Impl::CopyCompletion completion_;
  std::any keep_alive_;
  Result result_;
  Impl::PinnedScalarSlot slot_;
};

namespace Impl {

/// Builds PendingHost objects (their constructor is private).
struct PendingHostAccess {
  /// A result that is there already: `value` is the host value or view.
  template <class Result>
  static PendingHost<Result> ready(const Result& value) {
    return PendingHost<Result>(value);
  }

  /// Starts the asynchronous copy of the device view `view` into the host
  /// view `dst`, after the work queued on `producer`. Must run inside an
  /// asynchronous ApiScope.
  template <class Result, class ExecSpace, class View, class Dst>
  static PendingHost<Result> start(const ExecSpace& producer, const View& view,
                                   const Dst& dst, PinnedScalarSlot slot) {
    PendingHost<Result> pending = [&] {
      if constexpr (Kokkos::is_view<Result>::value)
        return PendingHost<Result>(dst);
      else
        return PendingHost<Result>(Result());
    }();
    const auto source = contiguous_on(producer, view);
    pending.completion_ = queue_copy_to_host(producer, dst, source);
    // Freeing the source before the copy ran would make the host wait.
    pending.keep_alive_ = std::make_pair(view, source);
    pending.slot_ = std::move(slot);
    return pending;
  }
};

} // namespace Impl

/// Starts copying `view` to the host and returns at once — Python's
/// `xp.to_host_async`. The copy runs after the work queued so far on
/// `producer` (default: the default instance of the view's execution space),
/// on an execution-space instance of its own (its own stream on CUDA and
/// HIP), into page-locked host memory; work queued later on the producer
/// waits for the copy, so it may overwrite `view`.
///
/// One device-to-host copy, recorded as a non-blocking `to_host` (shown
/// `[async]`) at the caller's line; a strided view is packed on the device
/// first (a `device_copy`). A view already in a host memory space is not
/// copied and records nothing. On the fake device the copy is made at once
/// and still recorded. For large arrays copied repeatedly (snapshots) use
/// HostStaging, which reuses its buffers. Throws std::invalid_argument for
/// an unallocated view.
///
///     auto pending = cunumpy::to_host_async(residual_norm); // rank 0
///     ... queue the next iteration ...
///     if (pending.result() < tol) break;  // waits only if not yet copied
template <class ExecSpace, class View,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               Kokkos::is_view<View>::value,
                           int> = 0>
PendingHost<Impl::async_result_t<View>>
to_host_async(const ExecSpace& producer, const View& view,
              SourceLocation where = SourceLocation::current()) {
  using Result = Impl::async_result_t<View>;
  Impl::check_producer(producer, view);
  Impl::require_allocated(view, "cunumpy::to_host_async", "view");
  if constexpr (!Impl::is_device_view_v<View>) {
    if constexpr (View::rank == 0)
      return Impl::PendingHostAccess::ready<Result>(view());
    else
      return Impl::PendingHostAccess::ready<Result>(view);
  } else {
    (void)Impl::allocation_bytes<typename View::non_const_value_type>(
        "cunumpy::to_host_async", "view", view);
    Impl::ensure_hooks();
    const Impl::ArrayShape shape = Impl::shape_of(view);
    Impl::ApiScope scope("to_host_async", where, &shape, /*async=*/true);
    if constexpr (View::rank == 0) {
      static_assert(sizeof(Result) <= Impl::PinnedScalarSlot::capacity &&
                        alignof(Result) <= Impl::PinnedScalarSlot::capacity,
                    "cunumpy::to_host_async: the element type of a rank-0 "
                    "view must fit in 64 bytes; copy a rank-1 view instead");
      auto slot = Impl::PinnedScalarSlot::acquire();
      Kokkos::View<Result, pinned_memory_space,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          dst(static_cast<Result*>(slot.data()));
      return Impl::PendingHostAccess::start<Result>(producer, view, dst,
                                                    std::move(slot));
    } else {
      Result dst(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                    std::string(view.label())),
                 Impl::unpadded_layout<typename Result::array_layout>(view));
      return Impl::PendingHostAccess::start<Result>(producer, view, dst, {});
    }
  }
}

/// to_host_async after the work queued on the default instance of the view's
/// execution space.
template <class View, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
PendingHost<Impl::async_result_t<View>>
to_host_async(const View& view,
              SourceLocation where = SourceLocation::current()) {
  return to_host_async(typename View::execution_space(), view, where);
}

} // namespace cunumpy

#endif
