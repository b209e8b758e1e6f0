// First pass of zyfa_fp8_quantize on gfx950: each of kAmaxWorkgroups workgroups writes the
// largest |x| of its share of the source as a bit pattern. For non-negative floats the
// unsigned order of the bit patterns is the float order, with +inf above every finite value
// and NaN above +inf, so a NaN or inf anywhere reaches the convert pass, which turns it into
// a NaN descale. max is order-independent, so the result does not depend on scheduling.
#include <hip/hip_runtime.h>

#include "fp8_quantize_args.h"

namespace {

using zyfa::kernels::Fp8AmaxArgs;
using zyfa::kernels::kAmaxWorkgroups;
using zyfa::kernels::kQuantizeThreads;

using KernargPtr = __attribute__((address_space(4))) const Fp8AmaxArgs*;
template <typename T>
using gptr = __attribute__((address_space(1))) T*;

template <int kElemBytes>
__device__ void amax_pass() {
  const auto& a = *(KernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
  const uint32_t tid = threadIdx.x;
  const uint32_t stride = kAmaxWorkgroups * kQuantizeThreads;
  uint32_t m = 0;
  for (uint32_t i = blockIdx.x * kQuantizeThreads + tid; i < a.total; i += stride) {
    const uint32_t r0 = zyfa::kernels::fast_div(i, a.div_dim[0]);
    const uint32_t x = i - r0 * a.dim[0];
    const uint32_t r1 = zyfa::kernels::fast_div(r0, a.div_dim[1]);
    const uint32_t y = r0 - r1 * a.dim[1];
    const uint32_t w = zyfa::kernels::fast_div(r1, a.div_dim[2]);
    const uint32_t z = r1 - w * a.dim[2];
    const int64_t offset = y * a.byte_stride[0] + z * a.byte_stride[1] + w * a.byte_stride[2] +
                           static_cast<int64_t>(x) * kElemBytes;
    const auto p = reinterpret_cast<gptr<const uint8_t>>(a.src) + offset;
    uint32_t bits;
    if constexpr (kElemBytes == 2) {
      bits = static_cast<uint32_t>(*reinterpret_cast<gptr<const uint16_t>>(p)) << 16;
    } else {
      bits = *reinterpret_cast<gptr<const uint32_t>>(p);
    }
    m = max(m, bits & 0x7FFFFFFFu);
  }
  __shared__ uint32_t red[kQuantizeThreads];
  red[tid] = m;
  __syncthreads();
#pragma unroll
  for (uint32_t s = kQuantizeThreads / 2; s > 0; s /= 2) {
    if (tid < s) red[tid] = max(red[tid], red[tid + s]);
    __syncthreads();
  }
  if (tid == 0) reinterpret_cast<gptr<uint32_t>>(a.partials)[blockIdx.x] = red[0];
}

}  // namespace

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer.
extern "C" __global__ __launch_bounds__(kQuantizeThreads) void fp8_amax_bf16(Fp8AmaxArgs) { amax_pass<2>(); }
extern "C" __global__ __launch_bounds__(kQuantizeThreads) void fp8_amax_f32(Fp8AmaxArgs) { amax_pass<4>(); }
