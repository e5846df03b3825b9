// A Kokkos program as it runs on a GPU, on a machine without one: its
// Kokkos Tools events are real (CPU Kokkos, a "Cuda" space named in them),
// and the CUDA API calls the H200 showed among them are replayed through
// the fake libcupti (tests/tools/fake_cuda.cpp, FAKE_CUPTI_REPLAY) to the
// plugin's CUDA view. Like examples/legacy_app: a setup phase makes a device
// view (its allocation copies a 128-byte header) and copies the state up
// once; then 'integrate' runs a kernel per step, and the first launch
// copies Kokkos' lock arrays (two cudaMemcpyToSymbol of 8 bytes).
//
//   fake_cuda_app [--steps N] [--raw-copy] [--uvm-copy]
//
// --raw-copy adds the program's own cudaMemcpy of 64 bytes in the third
// step of 'integrate', outside any Kokkos event. --uvm-copy makes that
// copy right after an allocation in CudaUVMSpace, whose header Kokkos
// writes from the host (no header copy).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cupti.h>
#include <dlfcn.h>
#include <string>

#include <Kokkos_Core.hpp>

namespace {

using Call = bool (*)(CUpti_CallbackDomain, CUpti_CallbackId, const char*,
                      const void*);
Call call = nullptr;
char* device_memory = nullptr;
char host_memory[4096];

void replay(CUpti_CallbackId id, const char* name, const void* params) {
  if (!call(CUPTI_CB_DOMAIN_RUNTIME_API, id, name, params)) {
    std::fprintf(stderr, "fake_cuda_app: no CUPTI subscriber\n");
    std::exit(2);
  }
}

void memcpy_async(void* dst, const void* src, std::size_t count) {
  cudaMemcpyAsync_v3020_params params{dst, src, count, cudaMemcpyDefault,
                                      nullptr};
  replay(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync",
         &params);
}

void lock_arrays() {
  static int symbol = 0;
  cudaMemcpyToSymbol_v3020_params params{&symbol, host_memory, 8, 0,
                                         cudaMemcpyHostToDevice};
  replay(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,
         "cudaMemcpyToSymbol", &params);
  replay(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,
         "cudaMemcpyToSymbol", &params);
}

void fence(const char* name) {
  std::uint64_t handle = 0;
  Kokkos::Tools::beginFence(name, 0x2000001u, &handle);
  Kokkos::Tools::endFence(handle);
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int steps = 100;
  bool raw_copy = false;
  bool uvm_copy = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--raw-copy") == 0)
      raw_copy = true;
    else if (std::strcmp(argv[i], "--uvm-copy") == 0)
      raw_copy = uvm_copy = true;
  }
  void* cupti =
      dlopen(std::getenv("CUNUMPY_CUPTI_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  call = cupti != nullptr
             ? reinterpret_cast<Call>(dlsym(cupti, "fake_cupti_call"))
             : nullptr;
  device_memory = static_cast<char*>(dlsym(RTLD_DEFAULT, "fake_device_memory"));
  if (call == nullptr || device_memory == nullptr) {
    std::fprintf(stderr, "fake_cuda_app: the plugin did not load the fake "
                         "libcupti and libcuda\n");
    return 2;
  }
  const auto cuda = Kokkos::Profiling::make_space_handle("Cuda");
  const auto host = Kokkos::Profiling::make_space_handle("Host");

  Kokkos::Profiling::pushRegion("setup");
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

  for (int step = 0; step < steps; ++step) {
    Kokkos::Profiling::pushRegion("integrate");
    Kokkos::Tools::beginParallelFor("advance", 0x2000001u, &kernel);
    if (step == 0)
      lock_arrays();
    Kokkos::Tools::endParallelFor(kernel);
    if (raw_copy && step == 2) {
      if (uvm_copy)
        Kokkos::Tools::allocateData(
            Kokkos::Profiling::make_space_handle("CudaUVM"), "managed",
            device_memory + 2048, 256);
      cudaMemcpy_v3020_params params{device_memory, host_memory, 64,
                                     cudaMemcpyHostToDevice};
      replay(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", &params);
    }
    Kokkos::Profiling::popRegion();
  }
  Kokkos::Tools::deallocateData(cuda, "state", device_memory, 800 + 128);
  std::printf("fake_cuda_app: %d steps\n", steps);
  return 0;
}
