#ifndef CUNUMPY_HOST_CALL_HPP
#define CUNUMPY_HOST_CALL_HPP

#include <cstddef>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include <cunumpy/event.hpp>
#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/impl/view_utilities.hpp>
#include <cunumpy/source_location.hpp>
#include <cunumpy/spaces.hpp>

namespace cunumpy {
namespace Impl {

template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

/// True for an argument that is a Kokkos::View outside host memory.
template <class T, class = void> struct is_device_view_arg : std::false_type {};
template <class T>
struct is_device_view_arg<
    T, std::enable_if_t<Kokkos::is_view<remove_cvref_t<T>>::value>>
    : std::bool_constant<
          !is_host_memory_space_v<typename remove_cvref_t<T>::memory_space>> {};
template <class T>
inline constexpr bool is_device_view_arg_v = is_device_view_arg<T>::value;

/// The memory space of the first device view among `Args`, else `Default`.
template <class Default, class... Args> struct first_device_space {
  using type = Default;
};
template <class Default, class First, class... Rest>
struct first_device_space<Default, First, Rest...> {
  template <class T, bool device> struct space_of {
    using type = typename first_device_space<Default, Rest...>::type;
  };
  template <class T> struct space_of<T, true> {
    using type = typename remove_cvref_t<T>::memory_space;
  };
  using type = typename space_of<First, is_device_view_arg_v<First>>::type;
};

template <class T> struct is_tuple_like : std::false_type {};
template <class... T>
struct is_tuple_like<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

/// A std::pair when `Like` is one, else a std::tuple, of `elements`.
template <class Like, class... Elements> auto rebuild(Elements&&... elements) {
  if constexpr (sizeof...(Elements) == 2 &&
                std::is_same_v<Like, std::pair<std::tuple_element_t<0, Like>,
                                               std::tuple_element_t<1, Like>>>)
    return std::make_pair(std::forward<Elements>(elements)...);
  else
    return std::make_tuple(std::forward<Elements>(elements)...);
}

/// Where the views of one host call come from and go back to, and what the
/// copies are called in reports: "host_call(shape=(100,), dtype=float64)".
struct HostCallSite {
  const char* api;
  /// The function named in errors: "cunumpy::host_call", "cunumpy::Kernel".
  const char* function;
  SourceLocation where;
};

/// The host form of an argument: a recorded host copy of a device view,
/// else the argument itself.
template <class Arg>
decltype(auto) host_argument(const HostCallSite& site, Arg&& arg) {
  if constexpr (is_device_view_arg_v<Arg>) {
    require_allocated(arg, site.function, "argument");
    const ArrayShape shape = shape_of(arg);
    ApiScope scope(site.api, site.where, &shape);
    return copy_into<Kokkos::HostSpace>(arg, site.function, "argument");
  } else {
    return std::forward<Arg>(arg);
  }
}

/// Element `I` of the converted arguments, passed on as an lvalue for host
/// copies and with its own value category otherwise.
template <std::size_t I, class Tuple> decltype(auto) pass(Tuple& converted) {
  using Element = std::tuple_element_t<I, Tuple>;
  if constexpr (std::is_reference_v<Element>)
    return static_cast<Element>(std::get<I>(converted));
  else
    return (std::get<I>(converted));
}

template <class F, class Tuple, std::size_t... I>
decltype(auto) invoke_converted(F& f, Tuple& converted,
                                std::index_sequence<I...>) {
  return std::invoke(f, pass<I>(converted)...);
}

/// A host view returned by the host function, copied to `Space` (recorded);
/// tuples and pairs element by element; anything else as it is.
template <class Space, class Result>
auto result_to(const HostCallSite& site, Result&& result) {
  using R = remove_cvref_t<Result>;
  if constexpr (Kokkos::is_view<R>::value) {
    if constexpr (is_host_memory_space_v<typename R::memory_space> &&
                  !is_host_memory_space_v<Space>) {
      const ArrayShape shape = shape_of(result);
      ApiScope scope(site.api, site.where, &shape);
      return copy_into<Space>(result, site.function, "result");
    } else {
      return R(result);
    }
  } else if constexpr (is_tuple_like<R>::value) {
    return std::apply(
        [&](auto&&... elements) {
          return rebuild<R>(result_to<Space>(
              site, std::forward<decltype(elements)>(elements))...);
        },
        std::forward<Result>(result));
  } else {
    return R(std::forward<Result>(result));
  }
}

/// Copies the host copy `host` of a kernel argument back into the device
/// view `device`, in place: one to_device (and a device_copy when `device`
/// is strided or padded).
template <class Device, class Host>
void write_back(const HostCallSite& site, const Device& device,
                const Host& host) {
  const ArrayShape shape = shape_of(host);
  ApiScope scope(site.api, site.where, &shape);
  if constexpr (std::is_same_v<typename Device::array_layout,
                               typename Host::array_layout>) {
    if (device.span_is_contiguous()) {
      Kokkos::deep_copy(device, host);
      return;
    }
  }
  Kokkos::deep_copy(device, copy_into<typename Device::memory_space>(
                                host, site.function, "argument"));
}

template <class Originals, class Converted, std::size_t... I>
void write_back_all(const HostCallSite& site, Originals& originals,
                    Converted& converted, std::index_sequence<I...>) {
  auto one = [&](auto index) {
    constexpr std::size_t i = decltype(index)::value;
    using Arg = std::tuple_element_t<i, Originals>;
    if constexpr (is_device_view_arg_v<Arg>) {
      using View = remove_cvref_t<Arg>;
      if constexpr (!std::is_const_v<typename View::value_type>)
        write_back(site, std::get<i>(originals), std::get<i>(converted));
    }
  };
  (one(std::integral_constant<std::size_t, I>{}), ...);
}

/// Runs `f` on the host: device views among `args` are copied to the host
/// (and, for kernels, back into the device views afterwards), view results
/// go to the memory space of the first device argument, else to
/// `DefaultSpace`. For a kernel, records `kernel_conversion` when a device
/// view was converted, and copies device views back after the call.
template <class DefaultSpace, class F, class... Args>
auto run_on_host(const HostCallSite& site, bool kernel, F& f, Args&&... args) {
  constexpr bool any_device = (is_device_view_arg_v<Args> || ...);
  using Target =
      typename first_device_space<typename DefaultSpace::memory_space,
                                  Args...>::type;
  if constexpr (!any_device && is_host_memory_space_v<Target>) {
    return std::invoke(f, std::forward<Args>(args)...);
  } else {
    ensure_hooks();
    if (kernel && any_device)
      record_marker(EventKind::kernel_conversion, std::string(site.api) + "()",
                    site.where);
    auto originals = std::forward_as_tuple(args...);
    std::tuple<decltype(host_argument(site, std::forward<Args>(args)))...>
        converted{host_argument(site, std::forward<Args>(args))...};
    constexpr auto indices = std::index_sequence_for<Args...>{};
    using Result = decltype(invoke_converted(f, converted, indices));
    if constexpr (std::is_void_v<Result>) {
      invoke_converted(f, converted, indices);
      if (kernel)
        write_back_all(site, originals, converted, indices);
    } else {
      decltype(auto) result = invoke_converted(f, converted, indices);
      if (kernel)
        write_back_all(site, originals, converted, indices);
      return result_to<Target>(site, std::forward<Result>(result));
    }
  }
}

} // namespace Impl

/// host_call with the caller's location first, for any number of arguments
/// (and for front ends that know the location themselves).
template <class F, class... Args>
auto host_call_at(SourceLocation where, F&& f, Args&&... args) {
  return Impl::run_on_host<default_device_memory_space>(
      Impl::HostCallSite{"host_call", "cunumpy::host_call", where}, false, f,
      std::forward<Args>(args)...);
}

/// Calls the host-only function `f` (a file reader, a spline of a host
/// library) with arguments of either side — Python's `xp.host_call`.
///
/// Device views among the arguments are copied to the host (one `to_host`
/// each; LayoutLeft kept, else LayoutRight) and `f` receives the host
/// copies; other arguments are passed on as they are. View results of `f`
/// (also inside a std::tuple or std::pair) are copied to the memory space of
/// the first device argument, or to the default device space when there is
/// none (one `to_device` each; none on a host-only build). Every copy is
/// recorded at the caller's line, once per call; arguments are not copied
/// back (a Kernel does that). Use it for set-up and diagnostics, not in a
/// time loop.
///
///     auto values = cunumpy::host_call(spline, x); // x, values on the device
///
/// C++ cannot default a parameter after a pack, so host_call takes up to six
/// arguments before its location; use host_call_at(where, f, args...) for
/// more.
template <class F>
auto host_call(F&& f, SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f));
}
template <class F, class A1>
auto host_call(F&& f, A1&& a1,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1));
}
template <class F, class A1, class A2>
auto host_call(F&& f, A1&& a1, A2&& a2,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1),
                      std::forward<A2>(a2));
}
template <class F, class A1, class A2, class A3>
auto host_call(F&& f, A1&& a1, A2&& a2, A3&& a3,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1),
                      std::forward<A2>(a2), std::forward<A3>(a3));
}
template <class F, class A1, class A2, class A3, class A4>
auto host_call(F&& f, A1&& a1, A2&& a2, A3&& a3, A4&& a4,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1),
                      std::forward<A2>(a2), std::forward<A3>(a3),
                      std::forward<A4>(a4));
}
template <class F, class A1, class A2, class A3, class A4, class A5>
auto host_call(F&& f, A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1),
                      std::forward<A2>(a2), std::forward<A3>(a3),
                      std::forward<A4>(a4), std::forward<A5>(a5));
}
template <class F, class A1, class A2, class A3, class A4, class A5, class A6>
auto host_call(F&& f, A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, A6&& a6,
               SourceLocation where = SourceLocation::current()) {
  return host_call_at(where, std::forward<F>(f), std::forward<A1>(a1),
                      std::forward<A2>(a2), std::forward<A3>(a3),
                      std::forward<A4>(a4), std::forward<A5>(a5),
                      std::forward<A6>(a6));
}

/// Marks a Kernel that has only a host version.
struct NoDeviceVersion {};

/// A named kernel with a host version and, optionally, a device version,
/// that records the markers of the Python API when it runs its host version
/// where a device is expected:
///
/// - `fallback`: the device space is a device (a device backend) and the
///   kernel has no device version, so its host version runs instead;
/// - `kernel_conversion`: the host version was called with device views,
///   which are copied to the host, and back into the same device views
///   afterwards (non-const views; one to_host and one to_device each, also
///   recorded). View results go to the space of the first device argument,
///   else to `DeviceSpace`.
///
/// With a device version on a device backend, the device version is called
/// with the arguments as they are and nothing is recorded; on a host backend
/// with host views, the host version likewise. assert_no_transfers rejects
/// both markers. Markers are named "<name>()" in reports.
///
///     cunumpy::Kernel push("push", push_on_host, push_on_device);
///     push(particles, dt);
///     cunumpy::HostKernel spline("spline", spline_on_host); // host only
///
/// Call with up to six arguments, or call_at(where, args...).
template <class HostVersion, class DeviceVersion = NoDeviceVersion,
          class DeviceSpace = default_device_memory_space>
class Kernel {
public:
  static constexpr bool has_device_version =
      !std::is_same_v<DeviceVersion, NoDeviceVersion>;
  /// True when `DeviceSpace` is a device, where the host version is a
  /// fallback.
  static constexpr bool on_device_backend =
      !is_host_memory_space_v<typename DeviceSpace::memory_space>;

  Kernel(std::string name, HostVersion host_version,
         DeviceVersion device_version = {})
      : name_(std::move(name)), host_(std::move(host_version)),
        device_(std::move(device_version)) {}

  const std::string& name() const noexcept { return name_; }

  /// Runs the kernel with the caller's location given explicitly.
  template <class... Args>
  auto call_at(SourceLocation where, Args&&... args) const {
    if constexpr (on_device_backend && has_device_version) {
      return std::invoke(device_, std::forward<Args>(args)...);
    } else {
      if constexpr (on_device_backend) {
        Impl::ensure_hooks();
        Impl::record_marker(EventKind::fallback, name_ + "()", where);
      }
      return Impl::run_on_host<DeviceSpace>(
          Impl::HostCallSite{name_.c_str(), "cunumpy::Kernel", where}, true,
          host_, std::forward<Args>(args)...);
    }
  }

  auto operator()(SourceLocation where = SourceLocation::current()) const {
    return call_at(where);
  }
  template <class A1>
  auto operator()(A1&& a1,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1));
  }
  template <class A1, class A2>
  auto operator()(A1&& a1, A2&& a2,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1), std::forward<A2>(a2));
  }
  template <class A1, class A2, class A3>
  auto operator()(A1&& a1, A2&& a2, A3&& a3,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1), std::forward<A2>(a2),
                   std::forward<A3>(a3));
  }
  template <class A1, class A2, class A3, class A4>
  auto operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1), std::forward<A2>(a2),
                   std::forward<A3>(a3), std::forward<A4>(a4));
  }
  template <class A1, class A2, class A3, class A4, class A5>
  auto operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1), std::forward<A2>(a2),
                   std::forward<A3>(a3), std::forward<A4>(a4),
                   std::forward<A5>(a5));
  }
  template <class A1, class A2, class A3, class A4, class A5, class A6>
  auto operator()(A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5, A6&& a6,
                  SourceLocation where = SourceLocation::current()) const {
    return call_at(where, std::forward<A1>(a1), std::forward<A2>(a2),
                   std::forward<A3>(a3), std::forward<A4>(a4),
                   std::forward<A5>(a5), std::forward<A6>(a6));
  }

private:
  std::string name_;
  HostVersion host_;
  DeviceVersion device_;
};

template <class HostVersion>
Kernel(std::string, HostVersion) -> Kernel<HostVersion>;
template <class HostVersion, class DeviceVersion>
Kernel(std::string, HostVersion, DeviceVersion)
    -> Kernel<HostVersion, DeviceVersion>;

/// A host-compiled kernel (Python's PyccelKernel): it never claims a
/// device version, so it is no `fallback`; called with device views it
/// records `kernel_conversion` and copies them there and back. With host
/// views it just runs.
template <class HostVersion>
class HostKernel
    : public Kernel<HostVersion, NoDeviceVersion, Kokkos::HostSpace> {
public:
  HostKernel(std::string name, HostVersion host_version)
      : Kernel<HostVersion, NoDeviceVersion, Kokkos::HostSpace>(
            std::move(name), std::move(host_version)) {}
};

template <class HostVersion>
HostKernel(std::string, HostVersion) -> HostKernel<HostVersion>;

/// A Kernel for the device space `DeviceSpace` (e.g. the fake device of the
/// tests): make_kernel<Space>("name", host_version[, device_version]).
template <class DeviceSpace = default_device_memory_space, class HostVersion>
Kernel<HostVersion, NoDeviceVersion, DeviceSpace>
make_kernel(std::string name, HostVersion host_version) {
  return {std::move(name), std::move(host_version)};
}
template <class DeviceSpace = default_device_memory_space, class HostVersion,
          class DeviceVersion>
Kernel<HostVersion, DeviceVersion, DeviceSpace>
make_kernel(std::string name, HostVersion host_version,
            DeviceVersion device_version) {
  return {std::move(name), std::move(host_version), std::move(device_version)};
}

} // namespace cunumpy

#endif
