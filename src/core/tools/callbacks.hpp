#ifndef CUNUMPY_SRC_TOOLS_CALLBACKS_HPP
#define CUNUMPY_SRC_TOOLS_CALLBACKS_HPP

// The one path of Kokkos Tools events into cunumpy, for every front end.
// cunumpy's callbacks (namespace `callback`) feed the recorder and forward
// each event to the next tool's callback of the same slot, in one order: the
// next tool first for a begin or a push, cunumpy first for an end or a pop
// (so cunumpy's interval lies inside the next tool's), cunumpy first for a
// point event. The front ends differ only in how they find the next tool
// and how Kokkos reaches these callbacks:
//
//   in-process (src/kokkos/install.cpp)
//                             the callbacks Kokkos held before cunumpy are
//                             the next tool; cunumpy's are set in Kokkos'
//                             table
//                             (Kokkos::Tools::Experimental::set_callbacks)
//   plugin (src/plugin)       the library after libkp_cunumpy in the tools
//                             list is the next tool; Kokkos calls the
//                             plugin's kokkosp_* entry points, one line each
//
// Kokkos keeps one table of callbacks, and any code in the process may
// replace an entry (Trilinos' counters do). cunumpy watches the table: when
// one of its entries was replaced, it puts itself back in front of the new
// callback, forwards to it, says so once, and tells every sink that events
// may have been lost (Recorder::open_incident). A replacing tool that
// forwards to cunumpy is found out by the first event it forwards, and left
// in front; then nothing was lost and the incident is retracted.

#include <cstdint>

#include "tools/kokkosp.hpp"

namespace cunumpy::Impl {
class Recorder;
}

namespace cunumpy::Impl::tools {

/// The event slots of kokkosp::EventSet: X(field, type, entry point).
/// A time step's slots first (kernels, regions, copies, fences): tables
/// indexed by slot (the forwarding slots, the plugin's calls into the event
/// path) then hold them in one cache line.
#define CUNUMPY_TOOLS_EVENT_SLOTS(X)                                           \
  X(begin_parallel_for, kokkosp::BeginFunction, kokkosp_begin_parallel_for)    \
  X(end_parallel_for, kokkosp::EndFunction, kokkosp_end_parallel_for)          \
  X(push_region, kokkosp::PushFunction, kokkosp_push_profile_region)           \
  X(pop_region, kokkosp::PopFunction, kokkosp_pop_profile_region)              \
  X(begin_deep_copy, kokkosp::BeginDeepCopyFunction, kokkosp_begin_deep_copy)  \
  X(end_deep_copy, kokkosp::EndDeepCopyFunction, kokkosp_end_deep_copy)        \
  X(begin_fence, kokkosp::BeginFenceFunction, kokkosp_begin_fence)             \
  X(end_fence, kokkosp::EndFenceFunction, kokkosp_end_fence)                   \
  X(begin_parallel_reduce, kokkosp::BeginFunction,                             \
    kokkosp_begin_parallel_reduce)                                             \
  X(end_parallel_reduce, kokkosp::EndFunction, kokkosp_end_parallel_reduce)    \
  X(begin_parallel_scan, kokkosp::BeginFunction, kokkosp_begin_parallel_scan)  \
  X(end_parallel_scan, kokkosp::EndFunction, kokkosp_end_parallel_scan)        \
  X(sync_dual_view, kokkosp::DualViewSyncFunction, kokkosp_dual_view_sync)     \
  X(modify_dual_view, kokkosp::DualViewModifyFunction,                         \
    kokkosp_dual_view_modify)                                                  \
  X(allocate_data, kokkosp::AllocateDataFunction, kokkosp_allocate_data)       \
  X(deallocate_data, kokkosp::DeallocateDataFunction, kokkosp_deallocate_data) \
  X(create_profile_section, kokkosp::CreateProfileSectionFunction,             \
    kokkosp_create_profile_section)                                            \
  X(start_profile_section, kokkosp::StartProfileSectionFunction,               \
    kokkosp_start_profile_section)                                             \
  X(stop_profile_section, kokkosp::StopProfileSectionFunction,                 \
    kokkosp_stop_profile_section)                                              \
  X(destroy_profile_section, kokkosp::DestroyProfileSectionFunction,           \
    kokkosp_destroy_profile_section)                                           \
  X(profile_event, kokkosp::ProfileEventFunction, kokkosp_profile_event)

/// The slots of a tool's life, which only a loaded library (the plugin and
/// the next tool it loads) has.
#define CUNUMPY_TOOLS_LIFECYCLE_SLOTS(X)                                       \
  X(init, kokkosp::InitFunction, kokkosp_init_library)                         \
  X(finalize, kokkosp::FinalizeFunction, kokkosp_finalize_library)             \
  X(parse_args, kokkosp::ParseArgsFunction, kokkosp_parse_args)                \
  X(print_help, kokkosp::PrintHelpFunction, kokkosp_print_help)                \
  X(declare_metadata, kokkosp::DeclareMetadataFunction,                        \
    kokkosp_declare_metadata)                                                  \
  X(provide_tool_programming_interface,                                        \
    kokkosp::ProvideToolProgrammingInterfaceFunction,                          \
    kokkosp_provide_tool_programming_interface)                                \
  X(request_tool_settings, kokkosp::RequestToolSettingsFunction,               \
    kokkosp_request_tool_settings)

enum class Slot : unsigned {
#define CUNUMPY_TOOLS_ENUM(field, type, entry) field,
  CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_ENUM)
#undef CUNUMPY_TOOLS_ENUM
};
#define CUNUMPY_TOOLS_COUNT(field, type, entry) +1
inline constexpr unsigned slot_count =
    0 CUNUMPY_TOOLS_EVENT_SLOTS(CUNUMPY_TOOLS_COUNT);
#undef CUNUMPY_TOOLS_COUNT

/// "begin_deep_copy": the slot's field name in kokkosp::EventSet.
const char* slot_name(Slot slot) noexcept;
/// The function in `slot` of `table`.
void* slot_entry(const kokkosp::EventSet& table, Slot slot) noexcept;

/// cunumpy's callbacks, one per event slot, with Kokkos' exact signatures.
namespace callback {
void begin_parallel_for(const char* name, std::uint32_t device_id,
                        std::uint64_t* id);
void end_parallel_for(std::uint64_t id);
void begin_parallel_reduce(const char* name, std::uint32_t device_id,
                           std::uint64_t* id);
void end_parallel_reduce(std::uint64_t id);
void begin_parallel_scan(const char* name, std::uint32_t device_id,
                         std::uint64_t* id);
void end_parallel_scan(std::uint64_t id);
void push_region(const char* name);
void pop_region();
void allocate_data(kokkosp::SpaceHandle space, const char* label,
                   const void* ptr, std::uint64_t size);
void deallocate_data(kokkosp::SpaceHandle space, const char* label,
                     const void* ptr, std::uint64_t size);
void create_profile_section(const char* name, std::uint32_t* id);
void start_profile_section(std::uint32_t id);
void stop_profile_section(std::uint32_t id);
void destroy_profile_section(std::uint32_t id);
void profile_event(const char* name);
void begin_deep_copy(kokkosp::SpaceHandle dst, const char* dst_label,
                     const void* dst_ptr, kokkosp::SpaceHandle src,
                     const char* src_label, const void* src_ptr,
                     std::uint64_t size);
void end_deep_copy();
void begin_fence(const char* name, std::uint32_t device_id,
                 std::uint64_t* handle);
void end_fence(std::uint64_t handle);
void sync_dual_view(const char* label, const void* ptr, bool to_device);
void modify_dual_view(const char* label, const void* ptr, bool on_device);

// The callbacks that take a space handle (64 bytes) by value, with the
// handles by reference: what the plugin's entry points call, with the
// handles Kokkos passed them. A by-value call from the entry point copies
// each handle onto its stack: 128 bytes a copy event, two cache lines
// written, which a time step that streams the caches has evicted.
void begin_deep_copy_by_reference(const kokkosp::SpaceHandle& dst,
                                  const char* dst_label, const void* dst_ptr,
                                  const kokkosp::SpaceHandle& src,
                                  const char* src_label, const void* src_ptr,
                                  std::uint64_t size);
void allocate_data_by_reference(const kokkosp::SpaceHandle& space,
                                const char* label, const void* ptr,
                                std::uint64_t size);
void deallocate_data_by_reference(const kokkosp::SpaceHandle& space,
                                  const char* label, const void* ptr,
                                  std::uint64_t size);

} // namespace callback

/// A table with cunumpy's callback in every event slot (lifecycle slots
/// empty).
kokkosp::EventSet own_callbacks() noexcept;

/// The slots whose events cunumpy records (the others it only forwards): an
/// in-process installation takes only these, and leaves the rest to
/// whoever held them.
bool records_slot(Slot slot) noexcept;
/// The slots whose events counters and budgets count (copies, fences,
/// regions, DualViews; kernels only go to the trace).
bool counts_slot(Slot slot) noexcept;
/// The slots whose events only advice uses (allocations): an in-process
/// installation takes them but does not watch them, since a tool replacing
/// them costs no count.
bool feeds_advice_only(Slot slot) noexcept;

/// The recorder cunumpy's callbacks feed, handed by the front end that
/// connects cunumpy to Kokkos (the plugin's init, the in-process hooks'
/// installation) before Kokkos can call them; until then they record
/// nothing.
void connect(Recorder& recorder) noexcept;

/// Where each slot forwards: the next tool's callbacks. Lifecycle slots are
/// kept for the plugin, which forwards them itself (next()).
void set_next(const kokkosp::EventSet& next) noexcept;
const kokkosp::EventSet& next() noexcept;

/// The callbacks a loaded tools library exports (dlsym of each kokkosp_*
/// entry point of `handle`); absent ones are null.
kokkosp::EventSet library_callbacks(void* handle) noexcept;

/// How to read and write Kokkos' table of callbacks.
struct TableAccess {
  bool (*get)(kokkosp::EventSet& table) = nullptr;
  bool (*set)(const kokkosp::EventSet& table) = nullptr;
  /// Whether that Kokkos runs (initialized, not finalized): an empty table
  /// then means its tools were turned off. Null: taken as running.
  bool (*running)() = nullptr;
};

/// Access through the Kokkos cunumpy is linked with (src/kokkos/install.cpp).
TableAccess linked_kokkos_table();

/// Starts watching Kokkos' table: in each slot where `entries` is set,
/// Kokkos must call that function: cunumpy's callbacks in-process, the
/// plugin's entry points for the plugin, which can put themselves back
/// (`repairable`); or, for a plugin that another tool loaded and calls, that
/// tool's functions, whose replacement cunumpy can only report. Checked by
/// verify(), which the recorder runs before every read of a counter, budget
/// or report, and the callbacks at most once every 10 ms at region pushes
/// and pops.
void watch(TableAccess access, const kokkosp::EventSet& entries,
           bool repairable);
/// Whether a table is being watched.
bool watching() noexcept;

/// Compares Kokkos' table with what is expected (see the file comment).
void verify() noexcept;

/// Around fork: the watch's mutex is taken before the recorder's (the
/// order verify takes them in) and released in the parent and the child.
void lock_for_fork() noexcept;
void unlock_after_fork() noexcept;

} // namespace cunumpy::Impl::tools

#endif
