// zyfa_fp8_quantize on the device: per-tensor power-of-two descale, round-to-nearest-even.
// Three stream-ordered kernels keep the host out of the loop (no synchronization):
//   1. amax: atomicMax of |x| bit patterns into the descale word. Non-negative floats order
//      like their bit patterns, and NaN/Inf patterns are above every finite one, so the result
//      is the same whatever order the blocks run in (deterministic) and non-finite inputs show.
//   2. descale: one thread turns amax into 2^ceil(log2(amax / 448)) (1 when amax is 0, NaN
//      when an input was not finite).
//   3. convert: dst = RNE(src / descale), exact division by a power of two.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/cuda/fwd_launch.h"

namespace zyfa::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float load_src(const QuantizeKernelArgs& a, int64_t offset) {
  if (a.src_is_fp32) return static_cast<const float*>(a.src)[offset];
  const uint16_t bits = static_cast<const uint16_t*>(a.src)[offset];
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

// Row r of the first three dimensions, as element offsets of src and dst.
__device__ __forceinline__ void row_offsets(const QuantizeKernelArgs& a, int64_t r, int64_t* src,
                                            int64_t* dst) {
  const int64_t i2 = r % a.shape[2];
  const int64_t r1 = r / a.shape[2];
  const int64_t i1 = r1 % a.shape[1];
  const int64_t i0 = r1 / a.shape[1];
  *src = i0 * a.src_stride[0] + i1 * a.src_stride[1] + i2 * a.src_stride[2];
  *dst = i0 * a.dst_stride[0] + i1 * a.dst_stride[1] + i2 * a.dst_stride[2];
}

__global__ void amax_kernel(const __grid_constant__ QuantizeKernelArgs a) {
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  uint32_t amax = 0;
  for (int64_t r = blockIdx.x * (kThreads / 32) + threadIdx.x / 32; r < rows; r += warps) {
    int64_t so, dso;
    row_offsets(a, r, &so, &dso);
    for (int64_t i = lane; i < a.shape[3]; i += 32) {
      const uint32_t bits = __float_as_uint(load_src(a, so + i)) & 0x7FFFFFFFu;
      amax = max(amax, bits);
    }
  }
  for (int o = 16; o > 0; o /= 2) amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  if (lane == 0 && amax != 0) atomicMax(reinterpret_cast<unsigned int*>(a.descale), amax);
}

__global__ void descale_kernel(float* descale) {
  const uint32_t bits = *reinterpret_cast<const uint32_t*>(descale);
  float result;
  if (bits >= 0x7F800000u) {
    result = __uint_as_float(0x7FC00000u);  // an input was Inf or NaN
  } else if (bits == 0) {
    result = 1.0f;
  } else {
    const float amax = __uint_as_float(bits);
    // Smallest e with 448 * 2^e >= amax; ldexpf(448, e) is exact over the whole range.
    int e = ilogbf(amax) - 9;
    while (ldexpf(448.0f, e) < amax) ++e;
    while (ldexpf(448.0f, e - 1) >= amax) --e;
    if (e < -126) e = -126;  // keep the descale a normal float
    result = ldexpf(1.0f, e);
  }
  *descale = result;
}

__global__ void convert_kernel(const __grid_constant__ QuantizeKernelArgs a) {
  const float inv = 1.0f / *a.descale;  // exact: a power of two (NaN stays NaN)
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  for (int64_t r = blockIdx.x * (kThreads / 32) + threadIdx.x / 32; r < rows; r += warps) {
    int64_t so, dso;
    row_offsets(a, r, &so, &dso);
    for (int64_t i = lane; i < a.shape[3]; i += 32) {
      const __nv_fp8_e4m3 q(load_src(a, so + i) * inv);  // RNE, saturating to 448
      a.dst[dso + i] = q.__x;
    }
  }
}

}  // namespace

cudaError_t launch_fp8_quantize(const QuantizeKernelArgs& args, cudaStream_t stream) {
  const int64_t rows = args.shape[0] * args.shape[1] * args.shape[2];
  const int64_t want = (rows + kThreads / 32 - 1) / (kThreads / 32);
  const int blocks = static_cast<int>(want < 4096 ? (want > 0 ? want : 1) : 4096);
  cudaError_t err = cudaMemsetAsync(args.descale, 0, sizeof(float), stream);
  if (err != cudaSuccess) return err;
  amax_kernel<<<blocks, kThreads, 0, stream>>>(args);
  descale_kernel<<<1, 1, 0, stream>>>(args.descale);
  convert_kernel<<<blocks, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
