#ifndef CUNUMPY_SRC_TOOLS_KOKKOSP_HPP
#define CUNUMPY_SRC_TOOLS_KOKKOSP_HPP

// The Kokkos Tools C interface, declared by cunumpy from the published
// interface (the structs, handles and callback signatures that Kokkos passes
// to a tool and the `kokkosp_*` entry points a tool exports), as every Kokkos
// tool does. No Kokkos header is included: one build of cunumpy's core and
// plugin serves programs built with any Kokkos from 3.4 to 5.x, shared or
// linked statically. The layout of these types is Kokkos' ABI; the
// Kokkos-facing layer (src/kokkos) checks it against the Kokkos it is built
// with.

#include <cstddef>
#include <cstdint>

namespace cunumpy::Impl::kokkosp {

/// The interface versions Kokkos passes to kokkosp_init_library.
inline constexpr std::uint64_t interface_3_4 = 20210225; ///< Kokkos 3.4
inline constexpr std::uint64_t interface_3_5 = 20210623; ///< Kokkos 3.5
inline constexpr std::uint64_t interface_3_6 = 20211015; ///< 3.6 to 4.4
inline constexpr std::uint64_t interface_4_5 = 20240906; ///< 4.5 to 5.x

/// Whether cunumpy knows what Kokkos' events mean under `version`.
constexpr bool known_interface(std::uint64_t version) noexcept {
  return version == interface_3_4 || version == interface_3_5 ||
         version == interface_3_6 || version == interface_4_5;
}

struct SpaceHandle {
  char name[64];
};

struct DeviceInfo {
  std::size_t deviceID;
};

using InitFunction = void (*)(int, std::uint64_t, std::uint32_t, DeviceInfo*);
using FinalizeFunction = void (*)();
using ParseArgsFunction = void (*)(int, char**);
using PrintHelpFunction = void (*)(char*);
using BeginFunction = void (*)(const char*, std::uint32_t, std::uint64_t*);
using EndFunction = void (*)(std::uint64_t);
using PushFunction = void (*)(const char*);
using PopFunction = void (*)();
using AllocateDataFunction = void (*)(SpaceHandle, const char*, const void*,
                                      std::uint64_t);
using DeallocateDataFunction = void (*)(SpaceHandle, const char*, const void*,
                                        std::uint64_t);
using CreateProfileSectionFunction = void (*)(const char*, std::uint32_t*);
using StartProfileSectionFunction = void (*)(std::uint32_t);
using StopProfileSectionFunction = void (*)(std::uint32_t);
using DestroyProfileSectionFunction = void (*)(std::uint32_t);
using ProfileEventFunction = void (*)(const char*);
using BeginDeepCopyFunction = void (*)(SpaceHandle, const char*, const void*,
                                       SpaceHandle, const char*, const void*,
                                       std::uint64_t);
using EndDeepCopyFunction = void (*)();
using BeginFenceFunction = void (*)(const char*, std::uint32_t, std::uint64_t*);
using EndFenceFunction = void (*)(std::uint64_t);
using DualViewSyncFunction = void (*)(const char*, const void*, bool);
using DualViewModifyFunction = void (*)(const char*, const void*, bool);
using DeclareMetadataFunction = void (*)(const char*, const char*);

/// What Kokkos lends a tool: a fence of every execution space.
using ToolInvokedFenceFunction = void (*)(std::uint32_t);
using FunctionPointer = void (*)();
struct ToolProgrammingInterface {
  ToolInvokedFenceFunction fence;
  FunctionPointer padding[31];
};

/// What a tool asks of Kokkos.
struct ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

using ProvideToolProgrammingInterfaceFunction =
    void (*)(std::uint32_t, ToolProgrammingInterface);
using RequestToolSettingsFunction = void (*)(std::uint32_t, ToolSettings*);

/// Kokkos' one table of callbacks (Kokkos_Profiling_EventSet): the
/// profiling slots, then the tuning slots cunumpy never uses, as padding of
/// the same size.
struct EventSet {
  InitFunction init;
  FinalizeFunction finalize;
  ParseArgsFunction parse_args;
  PrintHelpFunction print_help;
  BeginFunction begin_parallel_for;
  EndFunction end_parallel_for;
  BeginFunction begin_parallel_reduce;
  EndFunction end_parallel_reduce;
  BeginFunction begin_parallel_scan;
  EndFunction end_parallel_scan;
  PushFunction push_region;
  PopFunction pop_region;
  AllocateDataFunction allocate_data;
  DeallocateDataFunction deallocate_data;
  CreateProfileSectionFunction create_profile_section;
  StartProfileSectionFunction start_profile_section;
  StopProfileSectionFunction stop_profile_section;
  DestroyProfileSectionFunction destroy_profile_section;
  ProfileEventFunction profile_event;
  BeginDeepCopyFunction begin_deep_copy;
  EndDeepCopyFunction end_deep_copy;
  BeginFenceFunction begin_fence;
  EndFenceFunction end_fence;
  DualViewSyncFunction sync_dual_view;
  DualViewModifyFunction modify_dual_view;
  DeclareMetadataFunction declare_metadata;
  ProvideToolProgrammingInterfaceFunction provide_tool_programming_interface;
  RequestToolSettingsFunction request_tool_settings;
  /// 9 profiling slots reserved by Kokkos, then the 6 tuning slots, then
  /// 232 more reserved for later events.
  FunctionPointer reserved[9 + 6 + 232];
};

static_assert(sizeof(EventSet) == (28 + 9 + 6 + 232) * sizeof(void*),
              "Kokkos' table of callbacks is 275 pointers");

/// Kokkos::Tools::Experimental's table functions, as a tool finds them with
/// dlsym in the Kokkos that loaded it (C++ functions, Itanium ABI).
inline constexpr const char* get_callbacks_symbol =
    "_ZN6Kokkos5Tools12Experimental13get_callbacksEv";
inline constexpr const char* set_callbacks_symbol =
    "_ZN6Kokkos5Tools12Experimental13set_callbacksE25Kokkos_Profiling_EventSet";
inline constexpr const char* is_initialized_symbol =
    "_ZN6Kokkos14is_initializedEv";
using GetCallbacks = EventSet (*)();
using SetCallbacks = void (*)(EventSet);
using IsInitialized = bool (*)();

} // namespace cunumpy::Impl::kokkosp

#endif
