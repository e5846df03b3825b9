// A Kokkos program as it runs on a GPU, on a machine without one: its
// Kokkos Tools events are real (CPU Kokkos, a "Cuda" space named in them),
// and the CUDA API calls the H200 showed among them are replayed through
// the fake libcupti (tests/tools/fake_cuda.cpp, FAKE_CUPTI_REPLAY) to the
// plugin's CUDA view, with CUDA's records of each copy (memory kinds, time
// on the device), which the fake hands over at the next flush, as CUPTI
// does. Like examples/legacy_app: a setup phase makes a device
// view (its allocation copies a 128-byte header) and copies the state up
// once; then 'integrate' runs a kernel per step, and the first launch
// copies Kokkos' lock arrays (two cudaMemcpyToSymbol of 8 bytes).
//
//   fake_cuda_app [--steps N] [--pause-ms N]
//                 [--raw-copy | --uvm-copy | --host-kernel-copy |
//                  --thrown-host-kernel | --thrown-device-kernel |
//                  --raw-allocation | --header-size-elsewhere | --migration]
//                 [--reduce | --reduce-copy]
//
// Each of the first options adds the program's own cudaMemcpy (host to
// device) in the third step of 'integrate', where Kokkos could be taken to
// make it:
//   --raw-copy               outside any Kokkos event, 64 bytes;
//   --uvm-copy               right after an allocation in CudaUVMSpace,
//                            whose header Kokkos writes from the host;
//   --host-kernel-copy       in the functor of a host parallel_for;
//   --thrown-host-kernel     after a host parallel_for whose functor threw
//                            (no end event);
//   --thrown-device-kernel   after a Cuda parallel_for whose launch threw;
//   --raw-allocation         32 KiB into a raw CudaSpace allocation just
//                            made (Kokkos::CudaSpace().allocate);
//   --header-size-elsewhere  128 bytes right after a view's allocation, to
//                            another address than the allocation's.
// --migration allocates managed memory in setup (cuMemAllocManaged), and in
// the third step a page fault migrates 64 KiB of it to the device (CUDA's
// unified-memory record).
// --reduce makes every step a Cuda parallel_reduce into a host value,
// whose result Kokkos 4 reads from pinned memory after its fence; with
// --reduce-copy Kokkos copies it back (cudaMemcpyAsync of 8 bytes).
// --pause-ms waits that long after setup: the collector's own thread hands
// over CUDA's records of setup's copies meanwhile (every 250 ms).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cupti.h>
#include <dlfcn.h>
#include <string>
#include <thread>

#include <Kokkos_Core.hpp>

namespace {

using Call = std::uint32_t (*)(CUpti_CallbackDomain, CUpti_CallbackId,
                               const char*, const void*);
using Queue = void (*)(const void*, std::size_t);
using Timestamp = bool (*)(std::uint64_t*);
Call call = nullptr;
Queue queue = nullptr;
Timestamp timestamp = nullptr;
char* device_memory = nullptr;
char host_memory[1 << 16];

std::uint64_t now_ns() {
  std::uint64_t ns = 0;
  timestamp(&ns);
  return ns;
}

std::uint32_t replay(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                     const char* name, const void* params) {
  const std::uint32_t correlation = call(domain, id, name, params);
  if (correlation == 0) {
    std::fprintf(stderr, "fake_cuda_app: no CUPTI subscriber\n");
    std::exit(2);
  }
  return correlation;
}

/// A copy's call, then CUDA's record of it (for the next flush).
void copy(CUpti_CallbackId id, const char* name, const void* params,
          std::size_t bytes, bool to_device) {
  const std::uint64_t start = now_ns();
  const std::uint32_t correlation =
      replay(CUPTI_CB_DOMAIN_RUNTIME_API, id, name, params);
  CUpti_ActivityMemcpy6 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                              : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  record.srcKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
                             : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  record.dstKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                             : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  record.bytes = bytes;
  record.start = start;
  record.end = std::max(now_ns(), start + 1);
  record.correlationId = correlation;
  queue(&record, sizeof record);
}

void memcpy_async(void* dst, const void* src, std::size_t count) {
  cudaMemcpyAsync_v3020_params params{dst, src, count, cudaMemcpyDefault,
                                      nullptr};
  copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync",
       &params, count, true);
}

void lock_arrays() {
  static int symbol = 0;
  cudaMemcpyToSymbol_v3020_params params{&symbol, host_memory, 8, 0,
                                         cudaMemcpyHostToDevice};
  copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, "cudaMemcpyToSymbol",
       &params, 8, true);
  copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020, "cudaMemcpyToSymbol",
       &params, 8, true);
}

void memcpy_sync(void* dst, const void* src, std::size_t count) {
  cudaMemcpy_v3020_params params{dst, src, count, cudaMemcpyHostToDevice};
  copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", &params, count,
       true);
}

void memcpy_to_host_async(void* dst, const void* src, std::size_t count) {
  cudaMemcpyAsync_v3020_params params{dst, src, count, cudaMemcpyDeviceToHost,
                                      nullptr};
  copy(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync",
       &params, count, false);
}

/// Managed memory allocated (cudaMallocManaged calls cuMemAllocManaged).
void allocate_managed() {
  replay(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
         "cuMemAllocManaged", nullptr);
}

/// A page fault that migrated 64 KiB of managed memory to the device.
void migration() {
  CUpti_ActivityUnifiedMemoryCounter3 record{};
  record.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  record.counterKind =
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
  record.value = 65536;
  record.start = now_ns();
  record.end = record.start + 2000;
  record.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE;
  queue(&record, sizeof record);
}

// Kokkos' device ids: the execution space type in the top 8 bits.
constexpr std::uint32_t cuda_space = 0x2000001u;
constexpr std::uint32_t openmp_space = 0x1000001u;

void fence(const char* name) {
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence(name, cuda_space, &handle);
  Kokkos::Tools::endFence(handle);
}

/// A Cuda parallel_reduce into a host value as Kokkos 4.6 makes it: the
/// launch, the result read from pinned memory after a fence (or copied
/// back), the fence after the kernel.
void reduce(bool copy_back) {
  std::uint64_t kernel = 0;
  Kokkos::Tools::beginParallelReduce("residual", cuda_space, &kernel);
  if (copy_back)
    memcpy_to_host_async(host_memory + 2048, device_memory + 4096, 8);
  else
    fence("Kokkos::Impl::ParallelReduce<Cuda, RangePolicy>::execute: Result "
          "Not Device Accessible");
  Kokkos::Tools::endParallelReduce(kernel);
  fence("Kokkos::parallel_reduce: fence due to result being value, not view");
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int steps = 100;
  int pause_ms = 0;
  std::string option;  // the program's own copy in step 2 (see above)
  std::string reduces; // "--reduce" or "--reduce-copy"
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (argument == "--pause-ms" && i + 1 < argc)
      pause_ms = std::atoi(argv[++i]);
    else if (argument.rfind("--reduce", 0) == 0)
      reduces = argument;
    else
      option = argument;
  }
  void* cupti =
      dlopen(std::getenv("CUNUMPY_CUPTI_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  if (cupti != nullptr) {
    call = reinterpret_cast<Call>(dlsym(cupti, "fake_cupti_call"));
    queue = reinterpret_cast<Queue>(dlsym(cupti, "fake_cupti_queue"));
    timestamp =
        reinterpret_cast<Timestamp>(dlsym(cupti, "fake_cupti_timestamp"));
  }
  device_memory = static_cast<char*>(dlsym(RTLD_DEFAULT, "fake_device_memory"));
  if (call == nullptr || queue == nullptr || timestamp == nullptr ||
      device_memory == nullptr) {
    std::fprintf(stderr, "fake_cuda_app: the plugin did not load the fake "
                         "libcupti and libcuda\n");
    return 2;
  }
  const auto cuda = Kokkos::Profiling::make_space_handle("Cuda");
  const auto host = Kokkos::Profiling::make_space_handle("Host");

  Kokkos::Profiling::pushRegion("setup");
  if (option == "--migration")
    allocate_managed();
  Kokkos::Tools::allocateData(cuda, "state", device_memory, 800 + 128);
  memcpy_async(device_memory, host_memory, 128); // the header
  fence("SharedAllocationRecord<Kokkos::CudaSpace, void>::"
        "SharedAllocationRecord(): fence after copying header from "
        "HostSpace");
  std::uint64_t kernel = 0;
  Kokkos::Tools::beginParallelFor(
      "Kokkos::View::initialization [state] via memset", 0x2000001u, &kernel);
  Kokkos::Tools::endParallelFor(kernel);
  fence("Kokkos::View::initialization via memset");
  Kokkos::Tools::beginDeepCopy(cuda, "state", device_memory + 128, host,
                               "state_mirror", host_memory, 800);
  memcpy_async(device_memory + 128, host_memory, 800);
  Kokkos::Tools::endDeepCopy();
  Kokkos::Profiling::popRegion();
  if (pause_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));

  for (int step = 0; step < steps; ++step) {
    Kokkos::Profiling::pushRegion("integrate");
    Kokkos::Tools::beginParallelFor("advance", cuda_space, &kernel);
    if (step == 0)
      lock_arrays();
    Kokkos::Tools::endParallelFor(kernel);
    if (!reduces.empty())
      reduce(reduces == "--reduce-copy");
    if (step == 2 && !option.empty()) {
      char* const staging = device_memory + 8192;
      if (option == "--raw-copy") {
        memcpy_sync(device_memory, host_memory, 64);
      } else if (option == "--uvm-copy") {
        Kokkos::Tools::allocateData(
            Kokkos::Profiling::make_space_handle("CudaUVM"), "managed",
            device_memory + 2048, 256);
        memcpy_sync(device_memory, host_memory, 64);
      } else if (option == "--host-kernel-copy") {
        Kokkos::Tools::beginParallelFor("host work", openmp_space, &kernel);
        memcpy_sync(device_memory, host_memory, 64);
        Kokkos::Tools::endParallelFor(kernel);
      } else if (option == "--thrown-host-kernel") {
        Kokkos::Tools::beginParallelFor("host work", openmp_space, &kernel);
        // The functor threw; the program caught it and goes on.
        memcpy_sync(device_memory, host_memory, 64);
      } else if (option == "--thrown-device-kernel") {
        Kokkos::Tools::beginParallelFor("device work", cuda_space, &kernel);
        // Kokkos threw before the launch (a functor's copy threw).
        memcpy_sync(device_memory, host_memory, 64);
      } else if (option == "--raw-allocation") {
        Kokkos::Tools::allocateData(cuda, "staging", staging, 32768);
        memcpy_sync(staging, host_memory, 32768);
      } else if (option == "--header-size-elsewhere") {
        Kokkos::Tools::allocateData(cuda, "staging", staging, 800);
        memcpy_async(staging + 1024, host_memory, 128);
      } else if (option == "--migration") {
        migration();
      } else {
        std::fprintf(stderr, "fake_cuda_app: unknown option %s\n",
                     option.c_str());
        return 2;
      }
    }
    Kokkos::Profiling::popRegion();
  }
  Kokkos::Tools::deallocateData(cuda, "state", device_memory, 800 + 128);
  std::printf("fake_cuda_app: %d steps\n", steps);
  return 0;
}
