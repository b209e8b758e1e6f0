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

// encode_e4m3 of a value saturated to +-448 first (NaN stays NaN and gives 0x7F), by the
// hardware conversion: v_cvt_pk_fp8_f32 rounds to nearest even, fp8 subnormals included, and
// turns a positive NaN into 0x7F; it does not saturate (MODE.FP16_OVFL is clear), so the
// value is clamped first, and a NaN, which the clamp would not keep, is put back as +NaN.
// Without saturation the callers' values have |v| <= 448 or are NaN, so the clamp changes
// nothing. The codes are encode_e4m3's, value for value.
__device__ inline float fp8_ready(float v) {
  const float clamped = __builtin_amdgcn_fmed3f(v, -448.0f, 448.0f);
  return __builtin_isnan(v) ? __builtin_bit_cast(float, 0x7FC00000u) : clamped;
}

// Four codes, the first in the low byte.
__device__ inline uint32_t encode4_e4m3_saturated(float x0, float x1, float x2, float x3) {
  const int lo = __builtin_amdgcn_cvt_pk_fp8_f32(fp8_ready(x0), fp8_ready(x1), 0, false);
  return static_cast<uint32_t>(__builtin_amdgcn_cvt_pk_fp8_f32(fp8_ready(x2), fp8_ready(x3), lo, true));
}

// Whether 448 < |v| (infinities included, NaN not): one unsigned range test.
__device__ inline bool saturates(float v) {
  const uint32_t a = float_bits(v) & 0x7FFFFFFFu;
  return a - 0x43E00001u < 0x7F800000u - 0x43E00000u;
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

// The descale of this launch (static, or from the amax partials), written once; returns
// whether values saturate (a static descale), with 1 / descale in *inv.
template <typename A>
__device__ inline bool launch_descale(const A& a, uint32_t* red, float* inv) {
  float descale = a.static_descale;
  *inv = a.static_inv;
  const bool saturate = descale != 0.0f;
  if (!saturate) {
    const uint32_t p = threadIdx.x < a.workgroups ? reinterpret_cast<gptr<const uint32_t>>(a.partials)[threadIdx.x] : 0u;
    descale = pow2_descale(reduce_max(p, red));
    *inv = pow2_inverse(descale);
    __syncthreads();  // red is reused by the caller
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<gptr<float>>(a.descale) = descale;
  return saturate;
}

template <int kElemBytes>
__device__ void amax_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  __shared__ float buf[kRotTileElems];
  __shared__ uint32_t red[kRotThreads];
  const uint32_t elems = a.rows_per_tile * a.head_dim;
  uint32_t m = 0;
  for (uint32_t t = blockIdx.x; t < a.tiles; t += a.workgroups) {
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
  float inv;
  const bool saturate = launch_descale(a, red, &inv);
  const uint32_t d = a.head_dim;
  const uint32_t elems = a.rows_per_tile * d;
  uint32_t count = 0;
  for (uint32_t t = blockIdx.x; t < a.tiles; t += a.workgroups) {
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

// --- One lane per row, staged through LDS -------------------------------------------------
// BF16 Hadamard rows of d <= 128, packed, 16-byte aligned, without a mean. Each wave
// takes 64 consecutive rows at a time: 16-byte loads, coalesced, into registers; written to
// the wave's LDS region (rows padded so that lanes reading one chunk of different rows spread
// over the banks); each
// lane reads its own row, flips the signs of the BF16 pairs before widening them, and runs
// every butterfly stage in registers; the codes leave through the same region as coalesced
// 16-byte stores. The arithmetic is transform_row's, value for value.
using Chunk16 = uint32_t __attribute__((ext_vector_type(4)));  // a register quad, not memory

// Chunk c of row r in a region of rows `chunks` 16-byte chunks long, each row padded by one
// chunk: lanes reading one chunk of 16 consecutive rows then touch 16 different 16-byte bank
// groups, and every offset below is the lane's base plus a constant (immediate offsets).
__device__ inline uint32_t staged_chunk(uint32_t r, uint32_t c, uint32_t chunks) { return r * (chunks + 1) + c; }

// The lanes of one wave exchange data through LDS: order the accesses around this point for
// the compiler (the hardware runs one wave's LDS instructions in order).
__device__ inline void wave_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

// Group g of 64 packed rows is one run of 64 d 2 bytes: chunk i of lane l sits i 1024 bytes
// (a constant) after the lane's first. Rows past the tensor read as zeros.
template <int kD, typename A>
__device__ inline void staged_load(const A& a, uint32_t g, uint32_t lane, Chunk16 (&q)[kD / 8]) {
  constexpr uint32_t kC = kD / 8;
  const auto base = reinterpret_cast<gptr<const Chunk16>>(a.src) + static_cast<uint64_t>(g) * (64 * kC) + lane;
  if ((g + 1) * 64 <= a.rows) {
#pragma unroll
    for (uint32_t i = 0; i < kC; ++i) q[i] = base[i * 64];
    return;
  }
  const uint32_t chunks_left = (a.rows - g * 64) * kC;  // of this group
#pragma unroll
  for (uint32_t i = 0; i < kC; ++i)  // the bound in an SGPR: no per-chunk lane index kept in a VGPR
    q[i] = static_cast<int>(lane) < static_cast<int>(chunks_left - i * 64) ? base[i * 64] : Chunk16(0u);
}

// kCount: the launch has a static descale and asks for the saturation count.
template <int kD, bool kConvert, bool kCount>
__device__ void staged_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  constexpr uint32_t kWaves = kRotThreads / 64, kC = kD / 8, kOut = kD / 16;
  __shared__ Chunk16 stage[kWaves][64 * (kC + 1)];
  __shared__ uint32_t red[kRotThreads];
  // The sign masks from LDS (every lane the same address: a broadcast) rather than kept in
  // SGPRs for the whole loop, where d / 2 of them crowd out the rest.
  __shared__ Chunk16 masks[kC];
  // The wave index in an SGPR: the group loop is then scalar.
  const uint32_t lane = threadIdx.x % 64, wave = __builtin_amdgcn_readfirstlane(threadIdx.x / 64);
  if (threadIdx.x < kD / 2) reinterpret_cast<uint32_t*>(masks)[threadIdx.x] = a.sign_mask[threadIdx.x];
  __syncthreads();
  Chunk16* buf = stage[wave];
  float inv = 0.0f;
  if constexpr (kConvert) launch_descale(a, red, &inv);
  const uint32_t groups = (a.rows + 63) / 64, stride = a.workgroups * kWaves;
  uint32_t acc = 0;         // amax bits
  uint32_t wave_count = 0;  // saturated values of the wave's rows
  for (uint32_t g = blockIdx.x * kWaves + wave; g < groups; g += stride) {
    {
      Chunk16 q[kC];
      staged_load<kD>(a, g, lane, q);
#pragma unroll
      for (uint32_t i = 0; i < kC; ++i) buf[staged_chunk(i * (64 / kC) + lane / kC, lane % kC, kC)] = q[i];
    }
    wave_sync();
    float v[kD];
#pragma unroll
    for (uint32_t c = 0; c < kC; ++c) {
      const Chunk16 x = buf[staged_chunk(lane, c, kC)] ^ masks[c];
#pragma unroll
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t w = x[k];
        v[8 * c + 2 * k] = bits_float(w << 16);
        v[8 * c + 2 * k + 1] = bits_float(w & 0xFFFF0000u);
      }
    }
    wave_sync();  // the region is rewritten below
#pragma unroll
    for (uint32_t h = 1; h < kD; h *= 2)
#pragma unroll
      for (uint32_t i = 0; i < kD; ++i)
        if ((i & h) == 0) {
          const float x0 = v[i], x1 = v[i + h];
          v[i] = x0 + x1;
          v[i + h] = x0 - x1;
        }
    const bool valid = g * 64 + lane < a.rows;
#pragma unroll
    for (uint32_t i = 0; i < kD; ++i) v[i] = v[i] * a.rot.post_scale;
    if constexpr (kConvert) {
      // Counted while encoding, value by value (a separate pass would keep all d values live);
      // rows past the tensor are zeros and never count.
#pragma unroll
      for (uint32_t c = 0; c < kOut; ++c) {
        Chunk16 out;
#pragma unroll
        for (uint32_t k = 0; k < 4; ++k) {
          float x[4];
#pragma unroll
          for (uint32_t b = 0; b < 4; ++b) {
            x[b] = v[16 * c + 4 * k + b] * inv;
            // The wave's count in an SGPR: a lane mask and a scalar population count per value.
            // (The empty asm keeps the sum in order: reassociated, every mask would stay live.)
            if constexpr (kCount) {
              wave_count += __builtin_popcountll(__builtin_amdgcn_ballot_w64(saturates(x[b])));
              asm volatile("" : "+s"(wave_count));
            }
          }
          const uint32_t word = encode4_e4m3_saturated(x[0], x[1], x[2], x[3]);
          out[k] = word;
          __builtin_amdgcn_sched_barrier(0);  // one word's encoding at a time: VGPRs stay under 256
        }
        buf[staged_chunk(lane, c, kOut)] = out;
      }
      wave_sync();
      const auto dst = reinterpret_cast<gptr<Chunk16>>(a.dst) + static_cast<uint64_t>(g) * (64 * kOut) + lane;
      const uint32_t chunks_left = (g + 1) * 64 <= a.rows ? 64 * kOut : (a.rows - g * 64) * kOut;
#pragma unroll
      for (uint32_t i = 0; i < kOut; ++i)
        if (static_cast<int>(lane) < static_cast<int>(chunks_left - i * 64)) dst[i * 64] = buf[staged_chunk(i * (64 / kOut) + lane / kOut, lane % kOut, kOut)];
      wave_sync();  // the codes are read before the next group is staged
    } else if (valid) {
#pragma unroll
      for (uint32_t i = 0; i < kD; ++i) acc = max(acc, float_bits(v[i]) & 0x7FFFFFFFu);
    }
  }
  if constexpr (kConvert) {
    const uint32_t total = reduce_sum(lane == 0 ? wave_count : 0u, red);
    if (threadIdx.x == 0) reinterpret_cast<gptr<uint32_t>>(a.counts)[blockIdx.x] = total;
  } else {
    const uint32_t all = reduce_max(acc, red);
    if (threadIdx.x == 0) reinterpret_cast<gptr<uint32_t>>(a.partials)[blockIdx.x] = all;
  }
}

__device__ void count_kernel() {
  const auto& a = ZYFA_ROT_ARGS;
  __shared__ uint32_t red[kRotThreads];
  const uint32_t c = threadIdx.x < a.workgroups ? reinterpret_cast<gptr<const uint32_t>>(a.counts)[threadIdx.x] : 0u;
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
#define ZYFA_ROT_STAGED(d)                                                                                \
  extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_staged_amax_d##d(Fp8RotateArgs) {          \
    staged_kernel<d, false, false>();                                                                     \
  }                                                                                                       \
  extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_staged_convert_d##d(Fp8RotateArgs) {       \
    staged_kernel<d, true, false>();                                                                      \
  }                                                                                                       \
  extern "C" __global__ __launch_bounds__(kRotThreads) void fp8_rot_staged_convert_count_d##d(Fp8RotateArgs) { \
    staged_kernel<d, true, true>();                                                                       \
  }
ZYFA_ROT_STAGED(32)
ZYFA_ROT_STAGED(64)
ZYFA_ROT_STAGED(128)
