// zyfa_fp8_quantize with options on gfx950. Each workgroup walks tiles of kRotTileElems values
// (whole rows) held in LDS: load (bf16 -> fp32 exact), subtract the mean, flip the signs, then
// the FWHT stages with one butterfly per thread and a barrier between stages, then the post
// step. Every value sees exactly the fp32 operations of rotation::transform_row, so the result
// matches the cpu and cuda backends bit for bit. No global atomics: per-workgroup partials
// (amax bits, saturation counts) in a fixed number of slots are reduced by the next kernel.
#include <hip/hip_runtime.h>

#include "fp8_rotate_args.h"

namespace {

using zyfa::kernels::Fp8RotateArgs;
using zyfa::kernels::kRotThreads;
using zyfa::kernels::kRotTileElems;
using zyfa::kernels::kRotWorkgroups;
namespace rot = zyfa::rotation;

using KernargPtr = __attribute__((address_space(4))) const Fp8RotateArgs*;
template <typename T>
using gptr = __attribute__((address_space(1))) T*;

// The kernel arguments, read in place (address space 4); helpers take them as a template
// parameter so that no copy to generic memory is made.
#define ZYFA_ROT_ARGS (*(KernargPtr)__builtin_amdgcn_kernarg_segment_ptr())

__device__ inline uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
__device__ inline float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }

// RNE of v to e4m3; |v| <= 448 or NaN (every NaN gives 0x7F). Integer rounding of the fp32
// bits in the normal range, a rint of v * 2^9 (exact) in the subnormal one.
__device__ inline uint32_t encode_e4m3(float v) {
  const uint32_t bits = float_bits(v);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t a = bits & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7Fu;
  if (a < 0x3C800000u) return sign | static_cast<uint32_t>(__builtin_rintf(bits_float(a) * 512.0f));
  const uint32_t r = (a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20;  // exponent and 3 mantissa bits, RNE
  return sign | (r - (120u << 3));                            // rebias 127 -> 7
}

// 1 / x for x a power of two (exact; NaN stays NaN): the exponent mirrored about 0.
__device__ inline float pow2_inverse(float x) {
  const uint32_t bits = float_bits(x);
  if (bits >= 0x7F800000u) return x;
  return bits_float((254u - (bits >> 23)) << 23);
}

// 2^ceil(log2(amax / 448)) from amax's bits, clamped to 2^-126; 1 for 0; NaN for inf/NaN.
// With amax = M 2^E (M in [1, 2)): 448 = 1.75 2^8, so e = E - 8 when M <= 1.75, else E - 7.
__device__ inline float pow2_descale(uint32_t amax_bits) {
  if (amax_bits >= 0x7F800000u) return bits_float(0x7FC00000u);
  if (amax_bits == 0) return 1.0f;
  const int exp_field = static_cast<int>(amax_bits >> 23);
  int e = exp_field == 0 ? -126 : (exp_field - 127) - ((amax_bits & 0x7FFFFFu) <= 0x600000u ? 8 : 7);
  if (e < -126) e = -126;
  return bits_float(static_cast<uint32_t>(e + 127) << 23);
}

template <int kElemBytes, typename A>
__device__ inline float load_src(const A& a, int64_t offset) {
  const auto p = reinterpret_cast<gptr<const uint8_t>>(a.src) + offset * kElemBytes;
  if constexpr (kElemBytes == 2) return bits_float(static_cast<uint32_t>(*reinterpret_cast<gptr<const uint16_t>>(p)) << 16);
  return *reinterpret_cast<gptr<const float>>(p);
}

// Loads tile t into buf and runs the sign flips and FWHT stages; returns after a barrier.
template <int kElemBytes, typename A>
__device__ void transform_tile(const A& a, uint32_t t, float* buf) {
  const uint32_t tid = threadIdx.x;
  const uint32_t d = a.head_dim;
  const uint32_t elems = a.rows_per_tile * d;
  for (uint32_t e = tid; e < elems; e += kRotThreads) {
    const uint32_t row = zyfa::kernels::fast_div(e, a.div_head_dim);
    const uint32_t col = e - row * d;
    const uint32_t g = t * a.rows_per_tile + row;
    float x = 0.0f;
    if (g < a.rows) {
      const uint32_t bs = zyfa::kernels::fast_div(g, a.div_heads);
      const uint32_t h = g - bs * a.heads;
      const uint32_t b = zyfa::kernels::fast_div(bs, a.div_seqlen);
      const uint32_t s = bs - b * a.seqlen;
      const int64_t off = b * a.src_stride[0] + s * a.src_stride[1] + h * a.src_stride[2] + col;
      x = load_src<kElemBytes>(a, off);
      if (a.mean != 0) x = x - reinterpret_cast<gptr<const float>>(a.mean)[h * d + col];
      if (a.rot.kind != rot::kNone && ((a.rot.sign[col >> 5] >> (col & 31u)) & 1u)) x = -x;
    }
    buf[e] = x;
  }
  __syncthreads();
  if (a.rot.kind == rot::kNone) return;
  // Butterfly j of stage hh pairs i = (j / hh) * 2hh + j % hh with i + hh; blocks of B values
  // are aligned and B is a multiple of 2hh, so this walks every block's pairs at once.
  const uint32_t block = static_cast<uint32_t>(a.rot.block);
  for (uint32_t hh = 1; hh < block; hh *= 2) {
    for (uint32_t j = tid; j < elems / 2; j += kRotThreads) {
      const uint32_t i = ((j & ~(hh - 1)) << 1) | (j & (hh - 1));
      const float x0 = buf[i], x1 = buf[i + hh];
      buf[i] = x0 + x1;
      buf[i + hh] = x0 - x1;
    }
    __syncthreads();
  }
}

// Element e of the tile after the post step (Hadamard scale or the 3-point DCT).
template <typename A>
__device__ inline float post(const A& a, const float* buf, uint32_t e) {
  if (a.rot.kind == rot::kNone) return buf[e];
  if (a.rot.kind == rot::kHadamard) return buf[e] * a.rot.post_scale;
  const uint32_t row = zyfa::kernels::fast_div(e, a.div_head_dim);
  const uint32_t col = e - row * 192u;
  const uint32_t c = col >> 6, base = row * 192u + (col & 63u);
  const float z0 = buf[base], z1 = buf[base + 64], z2 = buf[base + 128];
  return __builtin_fmaf(a.rot.dct[3 * c + 2], z2, __builtin_fmaf(a.rot.dct[3 * c + 1], z1, a.rot.dct[3 * c] * z0));
}

__device__ inline uint32_t reduce_max(uint32_t v, uint32_t* red) {
  const uint32_t tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
#pragma unroll
  for (uint32_t s = kRotThreads / 2; s > 0; s /= 2) {
    if (tid < s) red[tid] = max(red[tid], red[tid + s]);
    __syncthreads();
  }
  return red[0];
}

__device__ inline uint32_t reduce_sum(uint32_t v, uint32_t* red) {
  const uint32_t tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
#pragma unroll
  for (uint32_t s = kRotThreads / 2; s > 0; s /= 2) {
    if (tid < s) red[tid] = red[tid] + red[tid + s];
    __syncthreads();
  }
  return red[0];
}

template <int kElemBytes>
__device__ void amax_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  __shared__ float buf[kRotTileElems];
  __shared__ uint32_t red[kRotThreads];
  const uint32_t elems = a.rows_per_tile * a.head_dim;
  uint32_t m = 0;
  for (uint32_t t = blockIdx.x; t < a.tiles; t += kRotWorkgroups) {
    transform_tile<kElemBytes>(a, t, buf);
    for (uint32_t e = threadIdx.x; e < elems; e += kRotThreads)
      if (t * a.rows_per_tile + zyfa::kernels::fast_div(e, a.div_head_dim) < a.rows) m = max(m, float_bits(post(a, buf, e)) & 0x7FFFFFFFu);
    __syncthreads();  // buf is rewritten by the next tile
  }
  const uint32_t all = reduce_max(m, red);
  if (threadIdx.x == 0) reinterpret_cast<gptr<uint32_t>>(a.partials)[blockIdx.x] = all;
}

template <int kElemBytes>
__device__ void convert_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  __shared__ float buf[kRotTileElems];
  __shared__ uint32_t red[kRotThreads];
  float descale = a.static_descale, inv = a.static_inv;
  const bool saturate = descale != 0.0f;
  if (!saturate) {
    const uint32_t p = threadIdx.x < kRotWorkgroups ? reinterpret_cast<gptr<const uint32_t>>(a.partials)[threadIdx.x] : 0u;
    descale = pow2_descale(reduce_max(p, red));
    inv = pow2_inverse(descale);
    __syncthreads();       // red is reused below
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<gptr<float>>(a.descale) = descale;
  const uint32_t d = a.head_dim;
  const uint32_t elems = a.rows_per_tile * d;
  uint32_t count = 0;
  for (uint32_t t = blockIdx.x; t < a.tiles; t += kRotWorkgroups) {
    transform_tile<kElemBytes>(a, t, buf);
    for (uint32_t e = threadIdx.x; e < elems; e += kRotThreads) {
      const uint32_t row = zyfa::kernels::fast_div(e, a.div_head_dim);
      const uint32_t g = t * a.rows_per_tile + row;
      if (g >= a.rows) continue;
      float v = post(a, buf, e) * inv;
      if (saturate && __builtin_fabsf(v) > 448.0f) {
        v = __builtin_copysignf(448.0f, v);
        ++count;
      }
      const uint32_t col = e - row * d;
      const uint32_t bs = zyfa::kernels::fast_div(g, a.div_heads);
      const uint32_t h = g - bs * a.heads;
      const uint32_t b = zyfa::kernels::fast_div(bs, a.div_seqlen);
      const uint32_t s = bs - b * a.seqlen;
      const int64_t off = b * a.dst_stride[0] + s * a.dst_stride[1] + h * a.dst_stride[2] + col;
      reinterpret_cast<gptr<uint8_t>>(a.dst)[off] = static_cast<uint8_t>(encode_e4m3(v));
    }
    __syncthreads();
  }
  const uint32_t total = reduce_sum(count, red);
  if (threadIdx.x == 0) reinterpret_cast<gptr<uint32_t>>(a.counts)[blockIdx.x] = total;
}

__device__ void count_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  __shared__ uint32_t red[kRotThreads];
  const uint32_t c = threadIdx.x < kRotWorkgroups ? reinterpret_cast<gptr<const uint32_t>>(a.counts)[threadIdx.x] : 0u;
  const uint32_t total = reduce_sum(c, red);
  if (threadIdx.x == 0) *reinterpret_cast<gptr<uint32_t>>(a.saturated) = total;
}

}  // namespace

// Arguments are declared so that the kernarg segment has its size; bodies read them through
// the kernarg pointer.
extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_amax_bf16(Fp8RotateArgs) { amax_kernel<2>(); }
extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_amax_f32(Fp8RotateArgs) { amax_kernel<4>(); }
extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_convert_bf16(Fp8RotateArgs) { convert_kernel<2>(); }
extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_convert_f32(Fp8RotateArgs) { convert_kernel<4>(); }
extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_count(Fp8RotateArgs) { count_kernel(); }
