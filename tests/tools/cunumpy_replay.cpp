// Replays a recording of a run (CUNUMPY_RECORD, docs/cuda.md#recording-a-
// run) to the plugin on a machine without a GPU: the plugin is loaded as
// Kokkos loads a tool and its kokkosp_* entry points get the Kokkos events;
// what the program asked of cunumpy's library (its calls' scopes, markers,
// phases, device spaces) goes to the same functions of libcunumpy_core;
// CUDA's side goes through the fake libcupti (tests/tools/fake_cuda.cpp) to
// the plugin's CUPTI collector: API callbacks with parameters that read as
// the recorded ones, buffers of activity records, CUPTI's answers. Each
// recorded thread is a thread, and the lines start in the recorded order,
// one at a time; what a line's call recorded inside it (a flush of CUDA's
// buffers at a read, the fence a tool asked Kokkos for) is replayed when
// the plugin does the same in the replay. CUDA's timestamps are moved to
// the replay's clock between the lines around them, so that each falls
// between the same events. The plugin reads the settings and the rule file
// of the recorded run (the first line's), and writes its report where
// CUNUMPY_REPORT says.
//
//   cunumpy_replay <libkp_cunumpy.so> <recording>
//
// with CUNUMPY_CUPTI_LIBRARY the fake libcupti and LD_LIBRARY_PATH the
// directory of the fake libcuda.so.1. Exit status: the replayed process'
// (3 for a broken budget under CUNUMPY_ON_VIOLATION=exit), or 2 when the
// recording cannot be replayed (cut, without its end, of another format,
// or the replay went another way than the recorded run), with one line
// saying why.

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cupti.h>
#include <deque>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <cunumpy/impl/api_scope.hpp>
#include <cunumpy/space_names.hpp>

#include "cuda/cuda_records.hpp"
#include "cuda/cupti_calls.hpp"
#include "recorder/record_events.hpp"
#include "recorder/recorder.hpp"
#include "tools/kokkosp.hpp"

namespace kokkosp = cunumpy::Impl::kokkosp;
namespace cuda = cunumpy::Impl::cuda;
using nlohmann::json;

namespace {

std::string recording_name;

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "cunumpy_replay: %s: %s\n", recording_name.c_str(),
               why.c_str());
  std::fflush(nullptr);
  std::_Exit(2); // no report: the replay does not stand for the run
}

/// A recorded string, byte for byte: the recording writes every byte
/// that is not printable ASCII as \u00XX (one code point per byte).
std::string bytes(const json& value) {
  if (!value.is_string())
    return {};
  const std::string& text = value.get_ref<const std::string&>();
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c == 0xc2 || c == 0xc3) && i + 1 < text.size()) {
      out += static_cast<char>(
          ((c & 0x1f) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3f));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

struct Line {
  json fields;
  std::size_t number = 0; ///< in the file, from 1
  unsigned thread = 0;
  unsigned depth = 0;
  double time = 0.0;
  std::string event;
  /// Strings the plugin may keep pointers to until it ends (labels,
  /// names): kept here.
  std::deque<std::string> texts;
};

std::vector<Line> lines;
json header;

// ------------------------------------------------------------- what to call

template <class Function> Function symbol(void* library, const char* name) {
  auto* function = reinterpret_cast<Function>(::dlsym(library, name));
  if (function == nullptr)
    refuse(std::string(name) + " is not exported by the library loaded");
  return function;
}

struct Plugin {
  kokkosp::InitFunction init;
  kokkosp::FinalizeFunction finalize;
  kokkosp::DeclareMetadataFunction declare_metadata;
  kokkosp::ProvideToolProgrammingInterfaceFunction provide_interface;
  kokkosp::EventSet events{};
} plugin;

struct FakeCupti {
  bool (*callback)(CUpti_CallbackDomain, CUpti_CallbackId, const char*,
                   const void*, CUpti_ApiCallbackSite, std::uint32_t);
  bool (*deliver)(const void*, std::size_t, std::size_t, std::size_t);
  bool (*timestamp)(std::uint64_t*);
  void (*set_flush_hook)(void (*)());
  void (*answer)(const char*, int);
  void (*initialized)(int);
  void (*pointer_side)(const void*, int);
  void (*clear_pointer_sides)();
} fake{};

void load_plugin(const char* path) {
  // As Kokkos loads a tool.
  void* library = ::dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr)
    refuse(std::string("cannot load the plugin: ") + ::dlerror());
  plugin.init = symbol<kokkosp::InitFunction>(library, "kokkosp_init_library");
  plugin.finalize =
      symbol<kokkosp::FinalizeFunction>(library, "kokkosp_finalize_library");
  plugin.declare_metadata = symbol<kokkosp::DeclareMetadataFunction>(
      library, "kokkosp_declare_metadata");
  plugin.provide_interface =
      symbol<kokkosp::ProvideToolProgrammingInterfaceFunction>(
          library, "kokkosp_provide_tool_programming_interface");
#define CUNUMPY_REPLAY_ENTRY(name, type, entry)                                \
  plugin.events.name = symbol<type>(library, #entry);
  CUNUMPY_REPLAY_ENTRY(begin_parallel_for, kokkosp::BeginFunction,
                       kokkosp_begin_parallel_for)
  CUNUMPY_REPLAY_ENTRY(end_parallel_for, kokkosp::EndFunction,
                       kokkosp_end_parallel_for)
  CUNUMPY_REPLAY_ENTRY(begin_parallel_reduce, kokkosp::BeginFunction,
                       kokkosp_begin_parallel_reduce)
  CUNUMPY_REPLAY_ENTRY(end_parallel_reduce, kokkosp::EndFunction,
                       kokkosp_end_parallel_reduce)
  CUNUMPY_REPLAY_ENTRY(begin_parallel_scan, kokkosp::BeginFunction,
                       kokkosp_begin_parallel_scan)
  CUNUMPY_REPLAY_ENTRY(end_parallel_scan, kokkosp::EndFunction,
                       kokkosp_end_parallel_scan)
  CUNUMPY_REPLAY_ENTRY(push_region, kokkosp::PushFunction,
                       kokkosp_push_profile_region)
  CUNUMPY_REPLAY_ENTRY(pop_region, kokkosp::PopFunction,
                       kokkosp_pop_profile_region)
  CUNUMPY_REPLAY_ENTRY(allocate_data, kokkosp::AllocateDataFunction,
                       kokkosp_allocate_data)
  CUNUMPY_REPLAY_ENTRY(deallocate_data, kokkosp::DeallocateDataFunction,
                       kokkosp_deallocate_data)
  CUNUMPY_REPLAY_ENTRY(create_profile_section,
                       kokkosp::CreateProfileSectionFunction,
                       kokkosp_create_profile_section)
  CUNUMPY_REPLAY_ENTRY(start_profile_section,
                       kokkosp::StartProfileSectionFunction,
                       kokkosp_start_profile_section)
  CUNUMPY_REPLAY_ENTRY(stop_profile_section,
                       kokkosp::StopProfileSectionFunction,
                       kokkosp_stop_profile_section)
  CUNUMPY_REPLAY_ENTRY(destroy_profile_section,
                       kokkosp::DestroyProfileSectionFunction,
                       kokkosp_destroy_profile_section)
  CUNUMPY_REPLAY_ENTRY(profile_event, kokkosp::ProfileEventFunction,
                       kokkosp_profile_event)
  CUNUMPY_REPLAY_ENTRY(begin_deep_copy, kokkosp::BeginDeepCopyFunction,
                       kokkosp_begin_deep_copy)
  CUNUMPY_REPLAY_ENTRY(end_deep_copy, kokkosp::EndDeepCopyFunction,
                       kokkosp_end_deep_copy)
  CUNUMPY_REPLAY_ENTRY(begin_fence, kokkosp::BeginFenceFunction,
                       kokkosp_begin_fence)
  CUNUMPY_REPLAY_ENTRY(end_fence, kokkosp::EndFenceFunction, kokkosp_end_fence)
  CUNUMPY_REPLAY_ENTRY(sync_dual_view, kokkosp::DualViewSyncFunction,
                       kokkosp_dual_view_sync)
  CUNUMPY_REPLAY_ENTRY(modify_dual_view, kokkosp::DualViewModifyFunction,
                       kokkosp_dual_view_modify)
#undef CUNUMPY_REPLAY_ENTRY
}

void load_fake_cuda() {
  const char* path = std::getenv("CUNUMPY_CUPTI_LIBRARY");
  void* cupti =
      path != nullptr ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  // The collector loads it so; its symbols are then the ones it finds.
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cupti == nullptr || driver == nullptr ||
      ::dlsym(cupti, "fake_cupti_deliver") == nullptr ||
      ::dlsym(driver, "fake_cuda_pointer_side") == nullptr)
    refuse("the recording has CUDA's record: set CUNUMPY_CUPTI_LIBRARY to "
           "tests/tools/fake_cuda.cpp's libcupti.so and put the directory of "
           "its libcuda.so.1 first in LD_LIBRARY_PATH");
  fake.callback = symbol<decltype(fake.callback)>(cupti, "fake_cupti_callback");
  fake.deliver = symbol<decltype(fake.deliver)>(cupti, "fake_cupti_deliver");
  fake.timestamp =
      symbol<decltype(fake.timestamp)>(cupti, "fake_cupti_timestamp");
  fake.set_flush_hook =
      symbol<decltype(fake.set_flush_hook)>(cupti, "fake_cupti_set_flush_hook");
  fake.answer = symbol<decltype(fake.answer)>(cupti, "fake_cupti_answer");
  fake.initialized =
      symbol<decltype(fake.initialized)>(driver, "fake_cuda_initialized");
  fake.pointer_side =
      symbol<decltype(fake.pointer_side)>(driver, "fake_cuda_pointer_side");
  fake.clear_pointer_sides = symbol<decltype(fake.clear_pointer_sides)>(
      driver, "fake_cuda_clear_pointer_sides");
}

// ----------------------------------------------------- addresses and times

/// "a<N>+<offset>" and "p<N>" as addresses the replay gives them: every
/// allocation 2**40 bytes from the next, other addresses below all.
const void* address(const json& value) {
  if (!value.is_string())
    return nullptr;
  const std::string text = value.get<std::string>();
  char kind = 0;
  unsigned long long id = 0, offset = 0;
  if (std::sscanf(text.c_str(), "a%llu+%llu", &id, &offset) == 2)
    kind = 'a';
  else if (std::sscanf(text.c_str(), "p%llu", &id) == 1)
    kind = 'p';
  if (kind == 0 || id == 0 || id >= (1u << 22))
    refuse("'" + text + "' is not an address of a recording");
  const std::uintptr_t base =
      kind == 'a' ? std::uintptr_t(id) << 40 : std::uintptr_t(id) << 4;
  return reinterpret_cast<const void*>(base + offset);
}

/// When each line's call started and returned in the replay, on the
/// recorder's clock (what the collector gave CUPTI for its timestamps);
/// negative before it did.
std::vector<double> replay_start, replay_end;

double replay_now() {
  std::uint64_t ns = 0;
  return fake.timestamp != nullptr && fake.timestamp(&ns)
             ? static_cast<double>(ns) * 1e-9
             : -1.0;
}

/// A recorded time of CUDA's moved to the replay's clock. A time between
/// the recorded lines i and i + 1 (written as their calls began) goes
/// between the end of line i's call and the start of line i + 1's in the
/// replay, in proportion: after what cunumpy did for line i, before line
/// i + 1, as in the recorded run. `before`: the line being replayed.
double moved(double recorded, std::size_t before) {
  const auto it = std::upper_bound(
      lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(before),
      recorded, [](double t, const Line& line) { return t < line.time; });
  if (it == lines.begin())
    return std::max(replay_start[0], 1e-9);
  const auto at = static_cast<std::size_t>(it - lines.begin()) - 1;
  const double from = std::max({replay_end[at], replay_start[at], 1e-9});
  const double after = recorded - lines[at].time;
  if (at + 1 >= before || replay_start[at + 1] < from ||
      lines[at + 1].time <= lines[at].time)
    return from + after;
  return from + after / (lines[at + 1].time - lines[at].time) *
                    (replay_start[at + 1] - from);
}

/// How long a record's activity took, as recorded (0: no end).
std::uint64_t duration_ns(const json& record) {
  const json start = record.value("start", json());
  const json end = record.value("end", json());
  if (!start.is_number() || !end.is_number())
    return 0;
  return static_cast<std::uint64_t>(std::max(
      0.0, std::round((end.get<double>() - start.get<double>()) * 1e9)));
}

std::uint64_t moved_ns(const json& value, std::size_t before) {
  if (!value.is_number())
    return 0; // not timed
  return static_cast<std::uint64_t>(moved(value.get<double>(), before) * 1e9);
}

// --------------------------------------------------------- CUDA's calls

struct Call {
  cuda::CopyDirection direction = cuda::CopyDirection::unknown;
  std::uint64_t bytes = 0;
  const void* dst = nullptr;
  const void* src = nullptr;
};

/// Room for the parameters of a call and what they point to.
struct Params {
  alignas(16) unsigned char bytes[512];
  cudaMemcpy3DParms three_d;
  cudaMemcpy3DPeerParms peer_3d;
  CUDA_MEMCPY2D driver_2d;
  CUDA_MEMCPY3D driver_3d;
};

int symbol_storage = 0;

cudaMemcpyKind kind_of(cuda::CopyDirection direction) {
  switch (direction) {
  case cuda::CopyDirection::host_to_device:
    return cudaMemcpyHostToDevice;
  case cuda::CopyDirection::device_to_host:
    return cudaMemcpyDeviceToHost;
  case cuda::CopyDirection::device_to_device:
    return cudaMemcpyDeviceToDevice;
  default:
    return cudaMemcpyHostToHost;
  }
}
bool dst_on_device(cuda::CopyDirection direction) {
  return direction == cuda::CopyDirection::host_to_device ||
         direction == cuda::CopyDirection::device_to_device;
}
bool src_on_device(cuda::CopyDirection direction) {
  return direction == cuda::CopyDirection::device_to_host ||
         direction == cuda::CopyDirection::device_to_device;
}
CUmemorytype memory_type(bool device) {
  return device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

template <class P> P& make(Params& storage) {
  static_assert(sizeof(P) <= sizeof storage.bytes, "room for the parameters");
  return *new (storage.bytes) P{};
}

// One writer per form of cupti_calls.hpp: parameters the collector reads as
// the recorded call.
template <class P> const void* encode_count_and_kind(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.dst = const_cast<void*>(c.dst);
  p.src = c.src;
  p.count = c.bytes;
  p.kind = kind_of(c.direction);
  return &p;
}
template <class P> const void* encode_to_symbol(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.symbol = &symbol_storage;
  p.src = c.src;
  p.count = c.bytes;
  p.kind = c.direction == cuda::CopyDirection::device_to_device
               ? cudaMemcpyDeviceToDevice
               : cudaMemcpyHostToDevice;
  return &p;
}
template <class P> const void* encode_from_symbol(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.dst = const_cast<void*>(c.dst);
  p.symbol = &symbol_storage;
  p.count = c.bytes;
  p.kind = c.direction == cuda::CopyDirection::device_to_device
               ? cudaMemcpyDeviceToDevice
               : cudaMemcpyDeviceToHost;
  return &p;
}
template <class P> const void* encode_two_d(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.dst = const_cast<void*>(c.dst);
  p.src = c.src;
  p.dpitch = p.spitch = p.width = c.bytes;
  p.height = 1;
  p.kind = kind_of(c.direction);
  return &p;
}
template <class P> const void* encode_three_d(const Call& c, Params& s) {
  s.three_d = {};
  s.three_d.extent = cudaExtent{c.bytes, 1, 1};
  s.three_d.kind = kind_of(c.direction);
  s.three_d.dstPtr.ptr = const_cast<void*>(c.dst);
  s.three_d.srcPtr.ptr = const_cast<void*>(c.src);
  P& p = make<P>(s);
  p.p = &s.three_d;
  return &p;
}
template <class P> const void* encode_peer(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.count = c.bytes;
  return &p;
}
template <class P> const void* encode_peer_3d(const Call& c, Params& s) {
  s.peer_3d = {};
  s.peer_3d.extent = cudaExtent{c.bytes, 1, 1};
  P& p = make<P>(s);
  p.p = &s.peer_3d;
  return &p;
}
template <class P> const void* encode_bytes(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.ByteCount = c.bytes;
  return &p;
}
template <class P> const void* encode_bytes_h2d(const Call& c, Params& s) {
  return encode_bytes<P>(c, s);
}
template <class P> const void* encode_bytes_d2h(const Call& c, Params& s) {
  return encode_bytes<P>(c, s);
}
template <class P> const void* encode_bytes_d2d(const Call& c, Params& s) {
  return encode_bytes<P>(c, s);
}
template <class P> const void* encode_unified(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.dst = reinterpret_cast<CUdeviceptr>(c.dst);
  p.src = reinterpret_cast<CUdeviceptr>(c.src);
  p.ByteCount = c.bytes;
  // The collector asks the driver which side each pointer is on.
  fake.pointer_side(c.dst, dst_on_device(c.direction));
  fake.pointer_side(c.src, src_on_device(c.direction));
  return &p;
}
template <class P> const void* encode_driver_2d(const Call& c, Params& s) {
  s.driver_2d = {};
  s.driver_2d.WidthInBytes = c.bytes;
  s.driver_2d.Height = 1;
  s.driver_2d.dstMemoryType = memory_type(dst_on_device(c.direction));
  s.driver_2d.srcMemoryType = memory_type(src_on_device(c.direction));
  P& p = make<P>(s);
  p.pCopy = &s.driver_2d;
  return &p;
}
template <class P> const void* encode_driver_3d(const Call& c, Params& s) {
  s.driver_3d = {};
  s.driver_3d.WidthInBytes = c.bytes;
  s.driver_3d.Height = 1;
  s.driver_3d.Depth = 1;
  s.driver_3d.dstMemoryType = memory_type(dst_on_device(c.direction));
  s.driver_3d.srcMemoryType = memory_type(src_on_device(c.direction));
  P& p = make<P>(s);
  p.pCopy = &s.driver_3d;
  return &p;
}
template <class P>
const void* encode_prefetch_to_device(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.count = c.bytes;
  p.device = c.direction == cuda::CopyDirection::device_to_host ? -1 : 0;
  return &p;
}
template <class P>
const void* encode_prefetch_to_location(const Call& c, Params& s) {
  P& p = make<P>(s);
  p.count = c.bytes;
  p.location.type = c.direction == cuda::CopyDirection::host_to_device ? 1 : 2;
  return &p;
}
template <class P> const void* encode_none(const Call&, Params&) {
  return nullptr;
}

struct Followed {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId id;
  const char* name;
  const void* (*encode)(const Call&, Params&);
};

using namespace cunumpy::Impl::cuda;
const Followed followed[] = {
#define CUNUMPY_REPLAY_CALL(domain, id, name, family, synchronous, form, P)    \
  {CUNUMPY_CUPTI_DOMAIN_##domain, id, name, &encode_##form<P>},
    CUNUMPY_CUPTI_CALLS(CUNUMPY_REPLAY_CALL)
#undef CUNUMPY_REPLAY_CALL
};

CUpti_CallbackDomain domain_of(const Line& line) {
  const std::string domain = line.fields.value("domain", "");
  if (domain == "runtime")
    return CUPTI_CB_DOMAIN_RUNTIME_API;
  if (domain == "driver")
    return CUPTI_CB_DOMAIN_DRIVER_API;
  refuse("line " + std::to_string(line.number) + ": domain '" + domain +
         "' is not one of runtime, driver");
}

template <class Enum>
Enum named(const Line& line, const char* field, Enum last) {
  const std::string name = line.fields.value(field, "");
  Enum value{};
  if (!cuda::from_name(name.c_str(), last, value))
    refuse("line " + std::to_string(line.number) + ": " + field + " '" + name +
           "' is not one of a recording's");
  return value;
}
template <class Enum>
Enum named(const json& object, const char* field, Enum last,
           std::size_t number) {
  const std::string name = object.value(field, "");
  Enum value{};
  if (!cuda::from_name(name.c_str(), last, value))
    refuse("line " + std::to_string(number) + ": " + field + " '" + name +
           "' is not one of a recording's");
  return value;
}

void cuda_callback(const Line& line) {
  const json& f = line.fields;
  const CUpti_CallbackDomain domain = domain_of(line);
  const auto id = f.value("cbid", 0u);
  const auto correlation = f.value("corr", 0u);
  if (line.event == "cuda_exit") {
    fake.callback(domain, id, "", nullptr, CUPTI_API_EXIT, correlation);
    return;
  }
  const std::string name = f.value("fn", "");
  if (name == "cuMemAllocManaged") {
    fake.callback(domain, id, name.c_str(), nullptr, CUPTI_API_ENTER,
                  correlation);
    return;
  }
  const Followed* entry = nullptr;
  for (const Followed& candidate : followed)
    if (candidate.domain == domain && candidate.id == id)
      entry = &candidate;
  if (entry == nullptr || name != entry->name)
    refuse("line " + std::to_string(line.number) + ": CUDA call '" + name +
           "' (callback id " + std::to_string(id) +
           ") is not one this cunumpy follows under that id");
  Call call;
  call.direction = named(line, "dir", cuda::CopyDirection::host_to_host);
  call.bytes = f.value("bytes", std::uint64_t(0));
  call.dst = address(f.value("dst", json()));
  call.src = address(f.value("src", json()));
  Params storage;
  // A call whose parameters said nothing is replayed without any.
  const void* params = call.direction == cuda::CopyDirection::unknown
                           ? nullptr
                           : entry->encode(call, storage);
  fake.callback(domain, id, entry->name, params, CUPTI_API_ENTER, correlation);
  fake.clear_pointer_sides();
}

std::uint8_t cupti_copy_kind(cuda::CopyDirection direction) {
  switch (direction) {
  case cuda::CopyDirection::host_to_device:
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  case cuda::CopyDirection::device_to_host:
    return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  case cuda::CopyDirection::device_to_device:
    return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  case cuda::CopyDirection::host_to_host:
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
  default:
    return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  }
}

std::uint8_t cupti_memory_kind(cunumpy::MemoryKind kind) {
  switch (kind) {
  case cunumpy::MemoryKind::pageable:
    return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  case cunumpy::MemoryKind::pinned:
    return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  case cunumpy::MemoryKind::device:
    return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  case cunumpy::MemoryKind::managed:
    return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  case cunumpy::MemoryKind::array:
    return CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  default:
    return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  }
}

CUpti_ActivityUnifiedMemoryCounterKind
cupti_counter(cuda::UnifiedMemoryCounter counter) {
  switch (counter) {
  case cuda::UnifiedMemoryCounter::bytes_to_device:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
  case cuda::UnifiedMemoryCounter::bytes_to_host:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH;
  case cuda::UnifiedMemoryCounter::bytes_device_to_device:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD;
  case cuda::UnifiedMemoryCounter::gpu_page_fault:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT;
  case cuda::UnifiedMemoryCounter::cpu_page_fault:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT;
  case cuda::UnifiedMemoryCounter::thrashing:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING;
  case cuda::UnifiedMemoryCounter::throttling:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING;
  case cuda::UnifiedMemoryCounter::remote_map:
    break;
  }
  return CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP;
}

std::uint32_t cupti_cause(cuda::MigrationCause cause) {
  switch (cause) {
  case cuda::MigrationCause::user:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER;
  case cuda::MigrationCause::coherence:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE;
  case cuda::MigrationCause::prefetch:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH;
  case cuda::MigrationCause::eviction:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION;
  case cuda::MigrationCause::access_counters:
    return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS;
  case cuda::MigrationCause::unknown:
    break;
  }
  return CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN;
}

union AnyRecord {
  CUpti_ActivityMemcpy6 memcpy;
  CUpti_ActivityUnifiedMemoryCounter3 unified;
};

/// A buffer of records, in CUPTI's structs, to the collector now.
void cuda_buffer(const Line& line, std::size_t index) {
  std::vector<AnyRecord> records;
  for (const json& copy : line.fields.value("copies", json::array())) {
    AnyRecord any{};
    CUpti_ActivityMemcpy6& record = any.memcpy;
    record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    record.correlationId = copy.value("corr", 0u);
    record.runtimeCorrelationId = copy.value("rcorr", 0u);
    record.copyKind = cupti_copy_kind(
        named(copy, "dir", cuda::CopyDirection::host_to_host, line.number));
    record.srcKind = cupti_memory_kind(
        named(copy, "src", cunumpy::MemoryKind::array, line.number));
    record.dstKind = cupti_memory_kind(
        named(copy, "dst", cunumpy::MemoryKind::array, line.number));
    record.bytes = copy.value("bytes", std::uint64_t(0));
    record.start = moved_ns(copy.value("start", json()), index);
    record.end = record.start != 0 ? record.start + duration_ns(copy)
                                   : moved_ns(copy.value("end", json()), index);
    records.push_back(any);
  }
  for (const json& migration : line.fields.value("migrations", json::array())) {
    AnyRecord any{};
    CUpti_ActivityUnifiedMemoryCounter3& record = any.unified;
    record.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
    record.counterKind = cupti_counter(
        named(migration, "counter", cuda::UnifiedMemoryCounter::remote_map,
              line.number));
    record.flags =
        cupti_cause(named(migration, "cause",
                          cuda::MigrationCause::access_counters, line.number));
    record.value = migration.value("value", std::uint64_t(0));
    record.start = moved_ns(migration.value("start", json()), index);
    record.end = record.start != 0 ? record.start + duration_ns(migration) : 0;
    records.push_back(any);
  }
  if (!fake.deliver(records.data(), sizeof(AnyRecord), records.size(),
                    line.fields.value("dropped", std::size_t(0))))
    refuse("line " + std::to_string(line.number) +
           ": the plugin's CUPTI collector asked for no activity buffers");
}

// ------------------------------------------------------- Kokkos' events

/// The recorded rule file, written for the plugin to read at its init.
std::string temporary_budget;

kokkosp::SpaceHandle space(const json& value) {
  kokkosp::SpaceHandle handle{};
  const std::string name = bytes(value);
  std::memcpy(handle.name, name.data(),
              std::min(name.size(), sizeof handle.name - 1));
  return handle;
}

/// A text of the line the plugin may keep a pointer to; null for null.
const char* text(Line& line, const char* field) {
  const json value = line.fields.value(field, json());
  if (!value.is_string())
    return nullptr;
  line.texts.push_back(bytes(value));
  return line.texts.back().c_str();
}

void tool_fence(std::uint32_t);

void kokkos_event(Line& line) {
  const json& f = line.fields;
  const std::string& e = line.event;
  const kokkosp::EventSet& p = plugin.events;
  std::uint64_t id = 0;
  std::uint32_t section = 0;
  if (e == "init") {
    std::vector<kokkosp::DeviceInfo> devices;
    for (const json& device : f.value("devices", json::array()))
      devices.push_back({device.get<std::size_t>()});
    plugin.init(f.value("load_sequence", 0), f.value("interface", 0ull),
                static_cast<std::uint32_t>(devices.size()), devices.data());
    // The plugin has read the rule file.
    if (!temporary_budget.empty())
      ::unlink(temporary_budget.c_str());
  } else if (e == "finalize") {
    plugin.finalize();
  } else if (e == "declare_metadata") {
    plugin.declare_metadata(text(line, "key"), text(line, "value"));
  } else if (e == "provide_tool_programming_interface") {
    kokkosp::ToolProgrammingInterface interface {};
    if (f.value("fence", false))
      interface.fence = &tool_fence;
    plugin.provide_interface(f.value("functions", 0u), interface);
  } else if (e == "begin_parallel_for") {
    p.begin_parallel_for(text(line, "name"), f.value("device", 0u), &id);
  } else if (e == "begin_parallel_reduce") {
    p.begin_parallel_reduce(text(line, "name"), f.value("device", 0u), &id);
  } else if (e == "begin_parallel_scan") {
    p.begin_parallel_scan(text(line, "name"), f.value("device", 0u), &id);
  } else if (e == "begin_fence") {
    p.begin_fence(text(line, "name"), f.value("device", 0u), &id);
  } else if (e == "end_parallel_for") {
    p.end_parallel_for(f.value("id", 0ull));
  } else if (e == "end_parallel_reduce") {
    p.end_parallel_reduce(f.value("id", 0ull));
  } else if (e == "end_parallel_scan") {
    p.end_parallel_scan(f.value("id", 0ull));
  } else if (e == "end_fence") {
    p.end_fence(f.value("id", 0ull));
  } else if (e == "push_region") {
    p.push_region(text(line, "name"));
  } else if (e == "pop_region") {
    p.pop_region();
  } else if (e == "allocate_data" || e == "deallocate_data") {
    (e == "allocate_data" ? p.allocate_data : p.deallocate_data)(
        space(f.value("space", json())), text(line, "label"),
        address(f.value("ptr", json())), f.value("size", 0ull));
  } else if (e == "begin_deep_copy") {
    p.begin_deep_copy(
        space(f.value("dst_space", json())), text(line, "dst_label"),
        address(f.value("dst_ptr", json())),
        space(f.value("src_space", json())), text(line, "src_label"),
        address(f.value("src_ptr", json())), f.value("size", 0ull));
  } else if (e == "end_deep_copy") {
    p.end_deep_copy();
  } else if (e == "sync_dual_view") {
    p.sync_dual_view(text(line, "label"), address(f.value("ptr", json())),
                     f.value("to_device", false));
  } else if (e == "modify_dual_view") {
    p.modify_dual_view(text(line, "label"), address(f.value("ptr", json())),
                       f.value("on_device", false));
  } else if (e == "create_profile_section") {
    p.create_profile_section(text(line, "name"), &section);
  } else if (e == "start_profile_section") {
    p.start_profile_section(f.value("id", 0u));
  } else if (e == "stop_profile_section") {
    p.stop_profile_section(f.value("id", 0u));
  } else if (e == "destroy_profile_section") {
    p.destroy_profile_section(f.value("id", 0u));
  } else if (e == "profile_event") {
    p.profile_event(text(line, "name"));
  }
}

// ------------------------------------------ what the program asked cunumpy

/// The cunumpy calls this thread is in (ApiScope or SyncScope).
struct Scope {
  std::unique_ptr<cunumpy::Impl::ApiScope> api;
  std::unique_ptr<cunumpy::Impl::SyncScope> sync;
};
thread_local std::vector<Scope> scopes;
/// The replay's token of each phase a recorded token names.
std::mutex phase_mutex;
std::map<std::uint64_t, std::uint64_t> phase_tokens;

void library_call(Line& line) {
  namespace Impl = cunumpy::Impl;
  const json& f = line.fields;
  const std::string& e = line.event;
  const auto where = [&](const char* field) {
    return bytes(f.value(field, json()));
  };
  if (e == "api_enter") {
    scopes.push_back(
        {std::make_unique<Impl::ApiScope>(where("description"), where("file"),
                                          f.value("line", 0), where("function"),
                                          f.value("async", false)),
         nullptr});
  } else if (e == "sync_enter") {
    scopes.push_back(
        {nullptr, std::make_unique<Impl::SyncScope>(
                      where("description"), where("file"), f.value("line", 0),
                      where("function"), f.value("implicit", false))});
  } else if (e == "api_exit" || e == "sync_exit") {
    if (scopes.empty() || (e == "api_exit") != (scopes.back().api != nullptr))
      refuse("line " + std::to_string(line.number) + ": " + e +
             " ends no call of cunumpy's open on its thread");
    scopes.pop_back();
  } else if (e == "marker") {
    const std::string kind = f.value("kind", "");
    const auto found = std::find_if(
        cunumpy::all_event_kinds.begin(), cunumpy::all_event_kinds.end(),
        [&](cunumpy::EventKind k) { return cunumpy::to_string(k) == kind; });
    if (found == cunumpy::all_event_kinds.end())
      refuse("line " + std::to_string(line.number) + ": a marker of kind '" +
             kind + "'");
    const std::string file = where("file"), function = where("function");
    Impl::record_marker(*found, where("description"),
                        {file.c_str(), f.value("line", 0), function.c_str()});
  } else if (e == "debug_sync") {
    Impl::set_debug_sync(f.value("on", false));
  } else if (e == "open_phase") {
    const std::uint64_t token =
        Impl::record::open_phase(Impl::Recorder::instance(), where("name"));
    const std::lock_guard lock(phase_mutex);
    phase_tokens[f.value("token", std::uint64_t(0))] = token;
  } else if (e == "close_phase") {
    std::uint64_t token = 0;
    {
      const std::lock_guard lock(phase_mutex);
      token = phase_tokens[f.value("token", std::uint64_t(0))];
    }
    Impl::record::close_phase(Impl::Recorder::instance(), token);
  } else if (e == "register_device_space") {
    try {
      cunumpy::register_device_space(where("name"));
    } catch (const std::exception&) {
      // Refused in the recorded run too, with the same message.
    }
  }
}

// ---------------------------------------------------------- the schedule

/// Lines the recording's calls made inside them (their depth is more than
/// the call's), replayed from inside the call when the plugin does the
/// same again: a flush of CUDA's buffers, a fence a tool asked for.
const std::set<std::string> markers = {"cuda_flush", "tool_fence"};
/// Lines that say what happened, with nothing to replay (the replay's
/// collector says the same when it gets the same answers).
const std::set<std::string> facts = {"cuda_view", "cupti"};
const std::set<std::string> kokkos_events = {
    "init",
    "finalize",
    "declare_metadata",
    "provide_tool_programming_interface",
    "begin_parallel_for",
    "end_parallel_for",
    "begin_parallel_reduce",
    "end_parallel_reduce",
    "begin_parallel_scan",
    "end_parallel_scan",
    "push_region",
    "pop_region",
    "allocate_data",
    "deallocate_data",
    "create_profile_section",
    "start_profile_section",
    "stop_profile_section",
    "destroy_profile_section",
    "profile_event",
    "begin_deep_copy",
    "end_deep_copy",
    "begin_fence",
    "end_fence",
    "sync_dual_view",
    "modify_dual_view"};
const std::set<std::string> cuda_events = {"cuda_enter", "cuda_exit",
                                           "cuda_resource", "cuda_buffer"};
const std::set<std::string> library_calls = {
    "api_enter",  "api_exit",    "sync_enter",
    "sync_exit",  "marker",      "debug_sync",
    "open_phase", "close_phase", "register_device_space"};

std::mutex schedule_mutex;
std::condition_variable schedule_turn;
std::size_t cursor = 0; ///< the next line to start
bool ended = false;     ///< the end line was reached
thread_local unsigned self = 0;
thread_local std::vector<std::size_t> running; ///< lines this thread is in

/// This thread's next line, when the lines before it have started; the
/// end when there is none.
std::size_t next_line(std::unique_lock<std::mutex>& lock) {
  schedule_turn.wait(lock, [] {
    return ended || cursor >= lines.size() || lines[cursor].thread == self;
  });
  return ended ? lines.size() : cursor;
}

void execute(std::size_t index);

/// The lines nested in `parent` (deeper than it, on this thread), until
/// this thread's next line is not.
void nested_lines(std::size_t parent) {
  for (;;) {
    std::size_t next;
    {
      std::unique_lock lock(schedule_mutex);
      if (cursor == parent) {
        cursor = parent + 1; // the others go on meanwhile
        schedule_turn.notify_all();
      }
      next = next_line(lock);
    }
    if (next >= lines.size() || lines[next].depth <= lines[parent].depth)
      return;
    execute(next);
  }
}

/// The plugin did something that the recorded run did with lines nested in
/// `marker` (a flush, a fence): those lines, when the recording has them
/// next on this thread, inside the call being replayed.
void replay_marked(const char* marker) {
  if (running.empty())
    return; // not inside a replayed call (the report at the exit)
  const std::size_t parent = running.back();
  std::size_t next;
  {
    std::unique_lock lock(schedule_mutex);
    if (cursor == parent) {
      cursor = parent + 1;
      schedule_turn.notify_all();
    }
    next = next_line(lock);
  }
  if (next < lines.size() && lines[next].event == marker &&
      lines[next].depth > lines[parent].depth)
    execute(next);
}

void flush_hook() {
  replay_marked("cuda_flush");
}

void tool_fence(std::uint32_t) {
  replay_marked("tool_fence");
}

void execute(std::size_t index) {
  Line& line = lines[index];
  {
    const std::lock_guard lock(schedule_mutex);
    replay_start[index] = replay_now();
  }
  running.push_back(index);
  if (cuda_events.count(line.event) != 0) {
    if (line.event == "cuda_buffer")
      cuda_buffer(line, index);
    else if (line.event == "cuda_resource")
      fake.callback(CUPTI_CB_DOMAIN_RESOURCE, line.fields.value("cbid", 0u), "",
                    nullptr, CUPTI_API_ENTER, 0);
    else
      cuda_callback(line);
  } else if (kokkos_events.count(line.event) != 0) {
    kokkos_event(line);
  } else if (library_calls.count(line.event) != 0) {
    library_call(line);
  }
  if (markers.count(line.event) != 0)
    nested_lines(index);
  running.pop_back();
  const std::lock_guard lock(schedule_mutex);
  replay_end[index] = replay_now();
  if (cursor == index) {
    cursor = index + 1;
    schedule_turn.notify_all();
  }
}

/// A thread of the recorded run: its lines, outside any other.
void replay_thread(unsigned thread) {
  self = thread;
  for (;;) {
    std::size_t next;
    {
      std::unique_lock lock(schedule_mutex);
      next = next_line(lock);
      if (next < lines.size() && lines[next].event == "end") {
        ended = true;
        schedule_turn.notify_all();
        return;
      }
    }
    if (next >= lines.size())
      return;
    const Line& line = lines[next];
    if (line.depth > 0 && facts.count(line.event) == 0)
      refuse("line " + std::to_string(line.number) + " (" + line.event +
             ") was made inside the call before it on its thread, and the "
             "replay did not make it there" +
             (markers.count(line.event) != 0
                  ? std::string(": the plugin went another way than in the "
                                "recorded run")
                  : std::string(": another tool loaded with cunumpy (the next "
                                "one in KOKKOS_TOOLS_LIBS?) made it, which a "
                                "replay cannot; record without other tools")));
    execute(next);
  }
}

// --------------------------------------------------------------- reading

void read_recording(const char* path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    refuse("cannot be read");
  std::string text;
  std::size_t number = 0;
  while (std::getline(file, text)) {
    ++number;
    json fields;
    try {
      fields = json::parse(text);
    } catch (const std::exception&) {
      refuse("line " + std::to_string(number) + " is not JSON");
    }
    if (number == 1) {
      header = std::move(fields);
      if (header.value("format", "") != "cunumpy-recording")
        refuse("not a recording of cunumpy's (its first line has no "
               "\"format\": \"cunumpy-recording\")");
      if (header.value("version", 0) != 1)
        refuse("a recording of version " +
               std::to_string(header.value("version", 0)) +
               ", which this replay does not read (it reads version 1)");
      continue;
    }
    Line line;
    line.number = number;
    line.event = fields.value("ev", "");
    line.thread = fields.value("th", 0u);
    line.depth = fields.value("d", 0u);
    line.time = fields.value("t", 0.0);
    line.fields = std::move(fields);
    if (line.event == "cut")
      refuse("the recording was cut (" + line.fields.value("reason", "") +
             "): what came after is missing, so it cannot be replayed");
    if (markers.count(line.event) == 0 && facts.count(line.event) == 0 &&
        kokkos_events.count(line.event) == 0 &&
        cuda_events.count(line.event) == 0 &&
        library_calls.count(line.event) == 0 && line.event != "end")
      refuse("line " + std::to_string(number) + ": unknown event '" +
             line.event + "' (a recording of a newer cunumpy?)");
    lines.push_back(std::move(line));
    if (lines.back().event == "end")
      break;
  }
  if (number == 0)
    refuse("empty");
  if (lines.empty() || lines.back().event != "end")
    refuse("it has no end line: the recorded process ended before cunumpy "
           "wrote its report (killed, crashed), or the file was cut");
  if (lines.front().event != "init")
    refuse("its first event is not Kokkos' init of the plugin");
  replay_start.assign(lines.size(), -1.0);
  replay_end.assign(lines.size(), -1.0);
}

/// The recorded run's settings and rule file, before the plugin starts.
void set_environment(bool cuda_on) {
  for (const char* name : {"CUNUMPY_DEVICE_SPACES", "CUNUMPY_ALLOW_NO_DEVICE",
                           "CUNUMPY_DEBUG_SYNC", "CUNUMPY_CUPTI",
                           "CUNUMPY_ON_VIOLATION", "CUNUMPY_BUDGET"})
    ::unsetenv(name);
  const json settings = header.value("settings", json::object());
  for (const auto& [name, value] : settings.items())
    ::setenv(name.c_str(), bytes(value).c_str(), 1);
  const char* advise = std::getenv("CUNUMPY_ADVISE");
  if (advise != nullptr && std::string(advise) == "contents")
    refuse("CUNUMPY_ADVISE=contents reads what copies move, which a "
           "recording does not hold; replay without it");
  if (!cuda_on)
    ::setenv("CUNUMPY_CUPTI", "0", 1);
  ::setenv("FAKE_CUPTI_REPLAY", "1", 1);
  const json budget = header.value("budget", json());
  if (budget.is_string()) {
    const char* directory = std::getenv("TMPDIR");
    std::string path = std::string(directory != nullptr ? directory : "/tmp") +
                       "/cunumpy-replay-XXXXXX";
    const int fd = ::mkstemp(path.data());
    const std::string rules = bytes(budget);
    if (fd < 0 || ::write(fd, rules.data(), rules.size()) !=
                      static_cast<ssize_t>(rules.size()))
      refuse("cannot write the recorded rule file to " + path);
    ::close(fd);
    temporary_budget = path;
    ::setenv("CUNUMPY_BUDGET", path.c_str(), 1);
  } else if (header.value("budget_file", json()).is_string()) {
    // The run could not read its rule file: neither can the replay.
    ::setenv("CUNUMPY_BUDGET", bytes(header["budget_file"]).c_str(), 1);
  }
}

} // namespace

int main(int argc, char* argv[]) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cunumpy_replay <libkp_cunumpy.so> "
                         "<recording>\n");
    return 2;
  }
  recording_name = argv[2];
  read_recording(argv[2]);
  bool cuda_on = false;
  for (const Line& line : lines)
    if (line.event == "cuda_view" && line.fields.value("state", "") == "on")
      cuda_on = true;
  for (const Line& line : lines)
    if (!cuda_on &&
        (cuda_events.count(line.event) != 0 || line.event == "cuda_flush"))
      refuse("line " + std::to_string(line.number) + " is CUDA's (" +
             line.event + "), and no line says the CUDA view was on");
  set_environment(cuda_on);
  if (cuda_on) {
    load_fake_cuda();
    for (const Line& line : lines) {
      if (line.event == "cuda_view")
        fake.initialized(line.fields.value("driver_initialized", true));
      if (line.event == "cupti")
        fake.answer(line.fields.value("call", "").c_str(),
                    line.fields.value("result", 0));
    }
    fake.set_flush_hook(&flush_hook);
  }
  load_plugin(argv[1]);
  std::set<unsigned> threads;
  for (const Line& line : lines)
    threads.insert(line.thread);
  std::vector<std::thread> others;
  for (const unsigned thread : threads)
    if (thread != 0)
      others.emplace_back(replay_thread, thread);
  replay_thread(0);
  for (std::thread& thread : others)
    thread.join();
  return 0;
}
