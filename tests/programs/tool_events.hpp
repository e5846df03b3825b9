#ifndef CUNUMPY_TESTS_PROGRAMS_TOOL_EVENTS_HPP
#define CUNUMPY_TESTS_PROGRAMS_TOOL_EVENTS_HPP

// Kokkos Tools events made through Kokkos' own entry points
// (Kokkos::Tools::beginDeepCopy, ...), as Kokkos makes them, on any Kokkos
// and without a device: copies between "Cuda" and "Host" are transfers to
// every tool. And in-process tools that behave as Trilinos' do: they
// replace entries of Kokkos' table of callbacks
// (Kokkos::Tools::Experimental::set_*_callback), or chain to what was there.

#include <atomic>
#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

namespace tool_events {

namespace KT = Kokkos::Tools::Experimental;

/// One copy of `bytes` from the host to a "Cuda" space, as Kokkos reports a
/// deep_copy (no fence: on Kokkos 4 it is a copy the host did not wait for).
/// An allocation in a device memory space, as a GPU build makes at its
/// start: the program has a device.
inline void device_allocation() {
  static char data[8];
  const auto space = Kokkos::Tools::make_space_handle("Cuda");
  Kokkos::Tools::allocateData(space, "device", data, sizeof data);
  Kokkos::Tools::deallocateData(space, "device", data, sizeof data);
}

inline void copy_to_device(std::uint64_t bytes = 8) {
  static double data[8];
  Kokkos::Tools::beginDeepCopy(
      Kokkos::Tools::make_space_handle("Cuda"), "device", data,
      Kokkos::Tools::make_space_handle("Host"), "host", data, bytes);
  Kokkos::Tools::endDeepCopy();
}

/// One copy of `bytes` from a "Cuda" space to the host, as Kokkos reports a
/// deep_copy without its fence.
inline void copy_to_host(std::uint64_t bytes = 8) {
  static double data[8];
  Kokkos::Tools::beginDeepCopy(Kokkos::Tools::make_space_handle("Host"), "host",
                               data, Kokkos::Tools::make_space_handle("Cuda"),
                               "device", data, bytes);
  Kokkos::Tools::endDeepCopy();
}

inline void region(const char* name) {
  Kokkos::Profiling::pushRegion(name);
}
inline void end_region() {
  Kokkos::Profiling::popRegion();
}

inline void kernel() {
  Kokkos::parallel_for(
      "tool_events::kernel",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 4),
      KOKKOS_LAMBDA(int){});
}

inline void dual_view_events() {
  static double data[4];
  Kokkos::Tools::modifyDualView("dual", data, false);
  Kokkos::Tools::syncDualView("dual", data, true);
}

/// A counter of copies as Tpetra's Details::DeepCopyCounter: start() sets
/// its own begin_deep_copy callback in Kokkos' table, stop() clears it.
struct DeepCopyCounter {
  static std::atomic<int>& copies() {
    static std::atomic<int> count{0};
    return count;
  }
  static void on_copy(Kokkos_Profiling_SpaceHandle, const char*, const void*,
                      Kokkos_Profiling_SpaceHandle, const char*, const void*,
                      uint64_t) {
    ++copies();
  }
  static void start() { KT::set_begin_deep_copy_callback(&on_copy); }
  static void stop() { KT::set_begin_deep_copy_callback(nullptr); }
};

/// A tool that takes both ends of every copy and passes nothing on: no
/// copy end without its begin tells cunumpy that it was replaced. It counts
/// in DeepCopyCounter::copies().
struct CopySwallower {
  static void on_end() {}
  static void start() {
    DeepCopyCounter::start();
    KT::set_end_deep_copy_callback(&on_end);
  }
};

/// Tpetra's KokkosRegionCounter::stop(): clears the push-region callback.
inline void stop_region_counter() {
  KT::set_push_region_callback(nullptr);
}

/// A well-behaved in-process tool: it keeps the callbacks it finds and
/// forwards every copy to them after counting it.
struct ChainingTool {
  static Kokkos_Profiling_EventSet& saved() {
    static Kokkos_Profiling_EventSet table{};
    return table;
  }
  static std::atomic<int>& copies() {
    static std::atomic<int> count{0};
    return count;
  }
  static void on_begin(Kokkos_Profiling_SpaceHandle dst, const char* dst_label,
                       const void* dst_ptr, Kokkos_Profiling_SpaceHandle src,
                       const char* src_label, const void* src_ptr,
                       uint64_t size) {
    ++copies();
    if (saved().begin_deep_copy != nullptr)
      saved().begin_deep_copy(dst, dst_label, dst_ptr, src, src_label, src_ptr,
                              size);
  }
  static void on_end() {
    if (saved().end_deep_copy != nullptr)
      saved().end_deep_copy();
  }
  static void install() {
    Kokkos_Profiling_EventSet table = KT::get_callbacks();
    saved() = table;
    table.begin_deep_copy = &on_begin;
    table.end_deep_copy = &on_end;
    KT::set_callbacks(table);
  }
};

/// A tool that takes both copy callbacks, forwards every copy's begin to
/// what it found and swallows every end: the half of a copy that reaches
/// cunumpy must never make a count look complete.
struct HalfForwarder {
  static Kokkos_Profiling_EventSet& saved() {
    static Kokkos_Profiling_EventSet table{};
    return table;
  }
  static void on_begin(Kokkos_Profiling_SpaceHandle dst, const char* dst_label,
                       const void* dst_ptr, Kokkos_Profiling_SpaceHandle src,
                       const char* src_label, const void* src_ptr,
                       uint64_t size) {
    if (saved().begin_deep_copy != nullptr)
      saved().begin_deep_copy(dst, dst_label, dst_ptr, src, src_label, src_ptr,
                              size);
  }
  static void on_end() {}
  static void install() {
    Kokkos_Profiling_EventSet table = KT::get_callbacks();
    saved() = table;
    table.begin_deep_copy = &on_begin;
    table.end_deep_copy = &on_end;
    KT::set_callbacks(table);
  }
};

} // namespace tool_events

#endif
