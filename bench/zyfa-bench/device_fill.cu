#include "device_fill.h"

#include <cuda_bf16.h>

namespace zyfa::bench {
namespace {

__global__ void gaussian_kernel(uint16_t* dst, int64_t n, uint64_t seed, float stddev) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix64(seed ^ mix64(static_cast<uint64_t>(i)));
    // Box-Muller from two 32-bit uniforms in (0, 1].
    const float u1 = (static_cast<uint32_t>(r) + 1.0f) * 2.3283064365386963e-10f;
    const float u2 = static_cast<uint32_t>(r >> 32) * 2.3283064365386963e-10f;
    const float g = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    const __nv_bfloat16 b = __float2bfloat16_rn(g * stddev);
    dst[i] = *reinterpret_cast<const uint16_t*>(&b);
  }
}

__global__ void realistic_kernel(uint16_t* dst, int64_t n, RealisticTensor t) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const __nv_bfloat16 b = __float2bfloat16_rn(realistic_at(t, i));
    dst[i] = *reinterpret_cast<const uint16_t*>(&b);
  }
}

}  // namespace

cudaError_t fill_gaussian_bf16(uint16_t* dst, int64_t n, uint64_t seed, float stddev, cudaStream_t stream) {
  gaussian_kernel<<<1024, 256, 0, stream>>>(dst, n, seed, stddev);
  return cudaGetLastError();
}

cudaError_t fill_realistic_bf16(uint16_t* dst, int64_t n, const RealisticTensor& t, cudaStream_t stream) {
  realistic_kernel<<<1024, 256, 0, stream>>>(dst, n, t);
  return cudaGetLastError();
}

}  // namespace zyfa::bench
