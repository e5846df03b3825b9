#ifndef CUNUMPY_TESTS_TEST_HELPERS_HPP
#define CUNUMPY_TESTS_TEST_HELPERS_HPP

#include <algorithm>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>
#include <cunumpy/testing/fake_device.hpp>

/// The Kokkos 4.6.99 development snapshot crashes when a default-constructed
/// View is copied or destroyed; tests of unallocated views skip there.
#if KOKKOS_VERSION == 40699
#define CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH()                              \
  GTEST_SKIP() << "the Kokkos 4.6.99 development snapshot crashes when a "     \
                  "default-constructed View is copied or destroyed"
#else
#define CUNUMPY_SKIP_IF_UNALLOCATED_VIEWS_CRASH() (void)0
#endif

/// 1 when the tests have a device distinct from the host: the fake device on
/// a Kokkos 3 host-only build, or the device of a device build. Tests that
/// copy to and from the device are compiled only then.
#if CUNUMPY_HAS_FAKE_DEVICE || defined(KOKKOS_ENABLE_CUDA) ||                  \
    defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL) ||               \
    defined(KOKKOS_ENABLE_OPENMPTARGET)
#define CUNUMPY_HAS_TEST_DEVICE 1
#else
#define CUNUMPY_HAS_TEST_DEVICE 0
#endif

namespace cunumpy_tests {

/// The device memory space the tests run against, written once and
/// instantiated per build: FakeDevice on a Kokkos 3 host-only build, the
/// default device memory space on a device build (CudaSpace on CUDA), and
/// HostSpace on a Kokkos 4 host-only build (CUNUMPY_HAS_TEST_DEVICE is 0).
/// Its views default to LayoutLeft on CUDA and HIP: tests that need
/// row-major views say Kokkos::LayoutRight.
using TestDevice = cunumpy::testing::example_device_space;

static_assert(CUNUMPY_HAS_TEST_DEVICE ==
                  !cunumpy::is_host_memory_space_v<TestDevice>,
              "CUNUMPY_HAS_TEST_DEVICE must say whether TestDevice is a "
              "device space");

/// True when TestDevice is the fake device: host memory underneath, whose
/// copies are done when they return.
#if CUNUMPY_HAS_FAKE_DEVICE
inline constexpr bool test_device_is_fake =
    std::is_same_v<TestDevice, cunumpy::testing::FakeDevice>;
#else
inline constexpr bool test_device_is_fake = false;
#endif

/// The name events give TestDevice: "FakeDevice", "Cuda", ...
inline std::string test_device_name() {
  return TestDevice::name();
}

/// Waits for all work on the device without a Kokkos Tools event (a Kokkos
/// fence would be recorded as a sync). The fake device needs no wait: its
/// copies and kernels are done when they return.
inline void fence_uncounted() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaDeviceSynchronize() != cudaSuccess)
    throw std::runtime_error("cunumpy_tests: cudaDeviceSynchronize failed");
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipDeviceSynchronize() != hipSuccess)
    throw std::runtime_error("cunumpy_tests: hipDeviceSynchronize failed");
#endif
}

/// Copies the contiguous view `src` into `dst` (same layout and span) without
/// Kokkos Tools events, so that what a test reads or sets does not change
/// what a counter in scope records. Kokkos::Impl::DeepCopy is the raw copy
/// under Kokkos::deep_copy, without its profiling hooks.
template <class Dst, class Src>
void copy_uncounted(const Dst& dst, const Src& src) {
  static_assert(
      std::is_same_v<typename Dst::array_layout, typename Src::array_layout> &&
          sizeof(typename Dst::value_type) == sizeof(typename Src::value_type),
      "cunumpy_tests::copy_uncounted copies bytes: same layout and "
      "element size");
  if (!dst.span_is_contiguous() || !src.span_is_contiguous() ||
      dst.span() != src.span())
    throw std::invalid_argument("cunumpy_tests::copy_uncounted: views must be "
                                "contiguous and of the same span");
  fence_uncounted();
  Kokkos::Impl::DeepCopy<typename Dst::memory_space,
                         typename Src::memory_space>(
      dst.data(), const_cast<typename Src::non_const_value_type*>(src.data()),
      src.span() * sizeof(typename Src::value_type));
  fence_uncounted();
}

/// A host copy of the contiguous view `view`, indexed like it, made and
/// freed without Kokkos Tools events: its memory is a std::vector, because
/// freeing a Kokkos host allocation fences on a device build (a sync).
/// Neither copyable nor movable.
template <class View> class HostCopy {
public:
  using value_type = typename View::non_const_value_type;
  using view_type = Kokkos::View<typename View::non_const_data_type,
                                 typename View::array_layout, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  explicit HostCopy(const View& view)
      : buffer_(view.span()), view_(buffer_.data(), view.layout()) {
    copy_uncounted(view_, view);
  }
  HostCopy(const HostCopy&) = delete;
  HostCopy& operator=(const HostCopy&) = delete;

  template <class... Indices> value_type& operator()(Indices... indices) const {
    return view_(indices...);
  }
  /// An unmanaged host view of the copy.
  const view_type& view() const { return view_; }

private:
  std::vector<value_type> buffer_;
  view_type view_;
};

/// A HostCopy of `view`.
template <class View> HostCopy<View> host_copy_uncounted(const View& view) {
  return HostCopy<View>(view);
}

/// `view(indices...)`, read on the host without Kokkos Tools events.
template <class View, class... Indices>
typename View::non_const_value_type peek(const View& view, Indices... indices) {
  return HostCopy<View>(view)(indices...);
}

/// Sets `view(indices...)` to `value` from the host without Kokkos Tools
/// events.
template <class View, class... Indices>
void poke(const View& view, typename View::const_value_type& value,
          Indices... indices) {
  HostCopy<View> host(view);
  host(indices...) = value;
  copy_uncounted(view, host.view());
}

/// The events of `counter` other than syncs. On a device Kokkos also waits
/// when it allocates device memory (it fences after writing the allocation's
/// header) and before it frees host memory: syncs next to the transfers a
/// test is about. The fake device never waits: there `counter` must hold no
/// sync at all.
inline std::vector<cunumpy::Event>
events_without_syncs(const cunumpy::profiling::TransferCounter& counter) {
  if constexpr (test_device_is_fake) {
    EXPECT_EQ(counter.syncs(), 0u) << counter.report();
  }
  std::vector<cunumpy::Event> events = counter.events();
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const cunumpy::Event& event) {
                                return event.kind == cunumpy::EventKind::sync;
                              }),
               events.end());
  return events;
}

/// The message of the `Exception` that `action` throws; a test failure, and
/// an empty message, when it throws none.
template <class Exception, class Action>
std::string message_of(Action&& action) {
  try {
    action();
  } catch (const Exception& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return {};
}

/// Whether `text` contains `part`; the failure message shows both.
inline ::testing::AssertionResult contains(std::string_view text,
                                           std::string_view part) {
  if (text.find(part) != std::string_view::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << part << "\" is not in \"" << text << "\"";
}

/// A text report without the seconds at the end of its first line
/// ("cunumpy transfer report: <program> (rank 0, pid N), 0.123 s"): two
/// reports of one run differ there only.
inline std::string without_elapsed(std::string text) {
  const std::size_t end = text.find('\n');
  const std::size_t comma = text.rfind("), ", end);
  if (text.rfind("cunumpy transfer report: ", 0) == 0 &&
      comma != std::string::npos)
    text.erase(comma + 1, end - comma - 1);
  return text;
}

/// "this_file.cpp:LINE", the way reports name a call site.
inline std::string site(const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

/// Unmanaged views of `data` in `Space` with extents that no allocation can
/// have, as a wrong shape given to an unmanaged view makes them: `cube`,
/// 2^22 x 2^22 x 2^22 doubles (2^66 elements: size() wraps around to 0;
/// Kokkos 3 keeps the extents of views of rank 2 and more in 32 bits);
/// `odd`, 2^61 + 1 doubles (the count fits in 64 bits, its bytes do not);
/// `half`, 2^60 doubles (2^63 bytes: fits in 64 bits, in no allocation).
template <class Space> struct OverflowingViews {
  template <class Data>
  using Unmanaged = Kokkos::View<Data, Kokkos::LayoutRight, Space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr std::size_t two_to(int power) {
    return std::size_t(1) << power;
  }
  explicit OverflowingViews(double* data)
      : cube(data, two_to(22), two_to(22), two_to(22)),
        odd(data, two_to(61) + 1), half(data, two_to(60)) {}

  Unmanaged<double***> cube;
  Unmanaged<double*> odd;
  Unmanaged<double*> half;
  static constexpr const char* cube_shape =
      "shape (4194304, 4194304, 4194304) of float64, whose size in "
      "bytes overflows 64 bits; nothing was allocated";
  static constexpr const char* odd_shape =
      "shape (2305843009213693953,) of float64, whose size in bytes overflows "
      "64 bits; nothing was allocated";
  static constexpr const char* half_shape =
      "shape (1152921504606846976,) of float64, more than the "
      "9223372036854775807 bytes an allocation can have; nothing was "
      "allocated";
};

/// A host view of `n` doubles holding 0, 1, 2, ...
inline Kokkos::View<double*, Kokkos::HostSpace>
iota_host(int n, const char* label = "h") {
  Kokkos::View<double*, Kokkos::HostSpace> view(std::string(label), n);
  for (int i = 0; i < n; ++i)
    view(i) = i;
  return view;
}

} // namespace cunumpy_tests

#endif
