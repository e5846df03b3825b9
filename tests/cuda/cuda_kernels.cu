// The one kernel of cuda_traffic, apart so that the checks compile with the
// host compiler.

#include <cuda_runtime.h>

namespace {

__global__ void fill(double* values, int n, double value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    values[i] = value;
}

} // namespace

/// Writes `value` into every element of `values` (managed memory) on the
/// device and waits for it.
void cuda_traffic_fill(double* values, int n, double value) {
  fill<<<(n + 255) / 256, 256>>>(values, n, value);
  cudaDeviceSynchronize();
}
