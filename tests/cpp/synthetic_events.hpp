#ifndef CUNUMPY_TESTS_SYNTHETIC_EVENTS_HPP
#define CUNUMPY_TESTS_SYNTHETIC_EVENTS_HPP

// Kokkos Tools events made by a test, through Kokkos' public tools API
// (Kokkos::Tools::beginDeepCopy, beginFence, syncDualView, ...): the calls
// Kokkos' own deep_copy, fence and DualView make. They go through Kokkos'
// table of callbacks into cunumpy's, exactly as Kokkos' events do, so the
// counting, blocking, sync, region and budget rules are tested on every
// Kokkos, with or without a device. Kokkos core tests its tools layer the
// same way (core/unit_test/tools/include/ToolTestingUtilities.hpp).
//
// The events are what Kokkos 4 reports for the operation named; on Kokkos
// 3, which reports no fences, the same events are still delivered, and the
// rules of the Kokkos cunumpy was built against apply to them.

#include <cstdint>
#include <initializer_list>
#include <string>

#include <Kokkos_Core.hpp>

namespace cunumpy_tests::synthetic {

/// Whether the Kokkos of this build reports fences to tools, and fences a
/// blocking deep_copy inside its begin/end pair (Kokkos 4). Then a copy
/// blocks the host iff a fence came inside it; on Kokkos 3 every copy
/// blocks, except cunumpy's own asynchronous copies.
inline constexpr bool kokkos_reports_fences =
    KOKKOSP_INTERFACE_VERSION >= 20210623; // Kokkos 3.5 and later

/// An allocation in a device memory space, as a GPU build makes at its
/// start: tells cunumpy that the program has a device (without one, no copy
/// could be a transfer, and budgets check nothing).
inline void device_allocation() {
  static char memory[8];
  const auto space = Kokkos::Profiling::make_space_handle("Cuda");
  Kokkos::Tools::allocateData(space, "device", memory, sizeof memory);
  Kokkos::Tools::deallocateData(space, "device", memory, sizeof memory);
}

/// Whether a copy waits for its end: Kokkos 4 fences a blocking
/// deep_copy(dst, src) inside its begin/end pair; deep_copy(exec, dst, src)
/// has no fence.
enum class Fence { none, inside };

/// Execution space types as Kokkos 4 encodes them in the top 8 bits of a
/// device id (Kokkos::Tools::Experimental::DeviceType).
enum class ExecutionSpace : std::uint32_t {
  serial = 0,
  openmp = 1,
  cuda = 2,
  hip = 3,
  openmp_target = 4,
  hpx = 5,
  threads = 6,
  sycl = 7,
};

/// The device id of a fence of `instance` of an execution space of `type`.
constexpr std::uint32_t instance_id(ExecutionSpace type,
                                    std::uint32_t instance = 1) {
  return (static_cast<std::uint32_t>(type) << 24) | instance;
}

/// The device id of one execution space's part of a global fence
/// (Kokkos::fence): the low 24 bits are 0.
constexpr std::uint32_t global_id(ExecutionSpace type) {
  return static_cast<std::uint32_t>(type) << 24;
}

/// The fence Kokkos 4 makes inside a blocking deep_copy.
inline constexpr const char* post_copy_fence =
    "Kokkos::deep_copy: copy between contiguous views, post deep copy fence";
/// What Kokkos 4 names a Kokkos::fence() without a name.
inline constexpr const char* unnamed_global_fence =
    "Kokkos::fence: Unnamed Global Fence";

/// Addresses the events carry (never read): distinct, stable, and with
/// room for a header before the data, as a Kokkos allocation has.
inline char* fake_memory(int index) {
  static char memory[8][1024];
  return memory[index] + 256;
}

/// A fence of `device_id`, reported as Kokkos reports one: begin, end.
inline void fence(const std::string& name,
                  std::uint32_t device_id = instance_id(ExecutionSpace::cuda)) {
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence(name, device_id, &handle);
  Kokkos::Tools::endFence(handle);
}

/// A global fence as Kokkos 4 reports it: one fence per execution space, in
/// a row, all of the same name.
inline void global_fence(const std::string& name,
                         std::initializer_list<ExecutionSpace> spaces = {
                             ExecutionSpace::serial, ExecutionSpace::cuda}) {
  for (ExecutionSpace space : spaces)
    fence(name, global_id(space));
}

/// The begin of a deep copy of `nbytes` from `src_space` to `dst_space`
/// (Kokkos' names: "Cuda", "Host", "CudaHostPinned", ...); the source's
/// label is `label`. Ended by end_copy().
inline void begin_copy(const char* dst_space, const char* src_space,
                       std::uint64_t nbytes,
                       const std::string& label = "synthetic",
                       const void* dst = fake_memory(0),
                       const void* src = fake_memory(1),
                       const std::string& dst_label = "synthetic_dst") {
  Kokkos::Tools::beginDeepCopy(
      Kokkos::Tools::make_space_handle(dst_space), dst_label, dst,
      Kokkos::Tools::make_space_handle(src_space), label, src, nbytes);
}

inline void end_copy() {
  Kokkos::Tools::endDeepCopy();
}

/// A deep copy, with the fence of a blocking deep_copy inside it or not.
inline void copy(const char* dst_space, const char* src_space,
                 std::uint64_t nbytes, const std::string& label = "synthetic",
                 Fence fence_inside = Fence::none) {
  begin_copy(dst_space, src_space, nbytes, label);
  if (fence_inside == Fence::inside)
    fence(post_copy_fence);
  end_copy();
}

/// deep_copy(host_scalar, device_view): a copy into the host label
/// "Scalar", with the fences Kokkos 4 makes around it by default.
inline void scalar_read(const char* src_space = "Cuda",
                        const std::string& label = "norm",
                        Fence fence_inside = Fence::inside,
                        std::uint64_t nbytes = sizeof(double)) {
  begin_copy("Host", src_space, nbytes, label, fake_memory(2), fake_memory(3),
             "Scalar");
  if (fence_inside == Fence::inside) {
    global_fence("Kokkos::deep_copy: scalar copy, pre copy fence",
                 {ExecutionSpace::serial});
    global_fence("Kokkos::deep_copy: scalar copy, post copy fence",
                 {ExecutionSpace::serial});
  }
  end_copy();
}

/// DualView::sync_device() / sync_host() of the DualView whose data on the
/// synced side is at `data`: the copy Kokkos makes, then the sync event.
inline void dual_view_sync(const std::string& label, std::uint64_t nbytes,
                           bool to_device, const void* data = fake_memory(4),
                           const void* other_side = fake_memory(5)) {
  begin_copy(to_device ? "Cuda" : "Host", to_device ? "Host" : "Cuda", nbytes,
             label, data, other_side, label);
  fence(post_copy_fence);
  end_copy();
  Kokkos::Tools::syncDualView(label, data, to_device);
}

/// A Kokkos profiling region for the lifetime of the object.
class Region {
public:
  explicit Region(const std::string& name) {
    Kokkos::Profiling::pushRegion(name);
  }
  ~Region() { Kokkos::Profiling::popRegion(); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

} // namespace cunumpy_tests::synthetic

/// A deep copy of `nbytes` from the view labelled `src_label` in
/// `src_space` whose call site is the line of the macro, as for a raw
/// Kokkos::deep_copy written there (the events of the functions above are
/// attributed to this header).
#define CUNUMPY_SYNTHETIC_COPY_HERE(dst_space, src_space, src_label, nbytes)   \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(                                              \
        Kokkos::Tools::make_space_handle(dst_space), "synthetic_dst",          \
        ::cunumpy_tests::synthetic::fake_memory(0),                            \
        Kokkos::Tools::make_space_handle(src_space), src_label,                \
        ::cunumpy_tests::synthetic::fake_memory(1), (nbytes));                 \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

/// A scalar read (see scalar_read) whose call site is the line of the macro.
#define CUNUMPY_SYNTHETIC_SCALAR_READ_HERE(src_space, src_label)               \
  do {                                                                         \
    Kokkos::Tools::beginDeepCopy(                                              \
        Kokkos::Tools::make_space_handle("Host"), "Scalar",                    \
        ::cunumpy_tests::synthetic::fake_memory(2),                            \
        Kokkos::Tools::make_space_handle(src_space), src_label,                \
        ::cunumpy_tests::synthetic::fake_memory(3), sizeof(double));           \
    Kokkos::Tools::endDeepCopy();                                              \
  } while (false)

/// A fence of a Cuda instance whose call site is the line of the macro.
#define CUNUMPY_SYNTHETIC_FENCE_HERE(name)                                     \
  do {                                                                         \
    std::uint64_t synthetic_handle_ = 0;                                       \
    Kokkos::Tools::beginFence(                                                 \
        name,                                                                  \
        ::cunumpy_tests::synthetic::instance_id(                               \
            ::cunumpy_tests::synthetic::ExecutionSpace::cuda),                 \
        &synthetic_handle_);                                                   \
    Kokkos::Tools::endFence(synthetic_handle_);                                \
  } while (false)

#endif
