// Which Kokkos fences the recorder counts as syncs, fed the Tools events a
// device build sends (a fence of a Cuda instance): a fence outside cunumpy
// is a sync; the fences of a blocking cunumpy call around its copies (after
// a device allocation, before freeing a host temporary) belong to the call;
// a fence inside an asynchronous call is an implicit sync; a SyncScope's
// wait is one sync, whether Kokkos reports its fence or not; a copy's own
// fence makes the copy blocking.

#include <cstdint>
#include <cstring>
#include <string>

#include <Kokkos_Core.hpp>

#include <cunumpy/cunumpy.hpp>

#include "check.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"

namespace {

namespace record = cunumpy::Impl::record;

cunumpy::Impl::Recorder& recorder() {
  return cunumpy::Impl::Recorder::instance();
}

constexpr std::uint32_t cuda_instance = (2u << 24) | 1u; // Kokkos 4's ids

void fence(const char* name) {
  record::begin_fence(recorder(), name, cuda_instance);
  record::end_fence(recorder());
}

/// A space name as Kokkos gives it to tools: a 64-byte SpaceHandle.name,
/// which the recorder compares 8 bytes at a time (a string literal is
/// shorter).
struct SpaceName {
  explicit SpaceName(const char* name) {
    std::strncpy(text, name, sizeof text - 1); // text ends with a NUL
  }
  char text[64] = {};
};

cunumpy::Impl::ArrayShape vector_shape() {
  cunumpy::Impl::ArrayShape shape;
  shape.rank = 1;
  shape.extents[0] = 1000;
  shape.dtype = "float64";
  return shape;
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const auto shape = vector_shape();
  double host[1000] = {};
  double device[1000] = {};

  {
    auto counted = cunumpy::profiling::count_transfers();
    fence("Kokkos::Cuda::fence: Unnamed Instance Fence");
    const auto events = counted.counter().events();
    CHECK_EQ(events.size(), 1u);
    CHECK_EQ(counted.counter().syncs(), 1u);
    if (!events.empty())
      CHECK_EQ(events[0].implicit, false);
  }
  {
    // Fences Kokkos makes on its own, outside cunumpy: implicit syncs.
    auto counted = cunumpy::profiling::count_transfers();
    fence("SharedAllocationRecord<Kokkos::CudaSpace, void>::"
          "SharedAllocationRecord(): fence after copying header from "
          "HostSpace");
    fence("HostSpace::impl_deallocate before free");
    fence("Kokkos::Cuda: backend fence before async free");
    const auto events = counted.counter().events();
    CHECK_EQ(events.size(), 3u);
    for (const auto& event : events)
      CHECK_EQ(event.implicit, true);
  }
  {
    auto counted = cunumpy::profiling::count_transfers();
    {
      cunumpy::Impl::ApiScope scope("to_device", {}, &shape);
      fence("Kokkos::Cuda: backend fence after async malloc");
      const SpaceName cuda("Cuda"), host_space("Host");
      record::begin_deep_copy(recorder(), cuda.text, "x", device,
                              host_space.text, "x", host, sizeof host);
      fence("Kokkos::deep_copy: copy between contiguous views, post deep "
            "copy fence");
      record::end_deep_copy(recorder());
      fence("HostSpace::impl_deallocate before free");
    }
    const auto events = counted.counter().events();
    CHECK_EQ(events.size(), 1u); // the copy alone
    CHECK_EQ(counted.counter().syncs(), 0u);
    if (!events.empty()) {
      CHECK_EQ(cunumpy::to_string(events[0].kind), "to_device");
      CHECK_EQ(events[0].blocking, true);
    }
  }
  {
    auto counted = cunumpy::profiling::count_transfers();
    {
      cunumpy::Impl::ApiScope scope("to_host_async", {}, &shape, true);
      fence("Kokkos::Cuda: backend fence after async malloc");
    }
    const auto events = counted.counter().events();
    CHECK_EQ(counted.counter().syncs(), 1u);
    if (events.size() == 1) {
      CHECK_EQ(events[0].implicit, true);
      CHECK_EQ(events[0].what, std::string("to_host_async(shape=(1000,), "
                                           "dtype=float64)"));
    }
  }
  {
    auto counted = cunumpy::profiling::count_transfers();
    {
      cunumpy::Impl::SyncScope wait("synchronize", {});
      fence("Kokkos::Cuda::fence: Unnamed Instance Fence");
    }
    { cunumpy::Impl::SyncScope wait("synchronize", {}); } // no fence reported
    CHECK_EQ(counted.counter().events().size(), 2u);
    CHECK_EQ(counted.counter().syncs(), 2u);
  }
  return failures() == 0 ? 0 : 1;
}
