// zyfa_fp8_quantize with options on Hopper. A group of kL lanes per row (kL = B / kE with
// kE = 8 values per lane: 16 lanes for d = 128, 32 for d = 256, 8 per 64-column block of DCT3),
// 32 / kL rows per warp and kR rows per group per loop step, loaded before any is transformed
// so that enough bytes are in flight. Lane g of a group holds, in each of the kNB blocks of B
// values (1 block of d for Hadamard, 3 blocks of 64 for DCT3 x H64), the kE contiguous values
// kE g .. kE g + kE - 1. FWHT stages shorter than kE stay in registers; the others exchange
// with lane g ^ (h / kE) by shuffle, the lower element taking x_i + x_{i+h}, the upper
// x_i - x_{i+h} (as fma(-1, x_i, x_{i+h}), one rounding, the same value): exactly the fp32
// operations of rotation::transform_row, so the codes and descale match the cpu and gfx950
// backends bit for bit. No other FMA contraction can change them: every multiply feeds a
// multiply, a store or an explicit fmaf.
//   computed descale: memset, amax (atomicMax of |y| bits), descale, convert
//   static descale:   convert only (one pass over the tensor)
// Without a rotation (smoothing or a static descale alone) a generic per-element warp loop
// takes any head_dim.
#include <cuda_fp8.h>

#include "kernels/cuda/fp8_rotate.h"

namespace zyfa::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kLaneValues = 8;  // kE: one 16-byte BF16 load and one 8-byte store per lane and block

__device__ __forceinline__ float load_one(const RotateQuantizeArgs& a, int64_t off) {
  if (a.src_is_fp32) return static_cast<const float*>(a.src)[off];
  return __uint_as_float(static_cast<uint32_t>(static_cast<const uint16_t*>(a.src)[off]) << 16);
}

template <int kBytes>
struct alignas(kBytes) Chunk {
  uint8_t b[kBytes];
};

// kE contiguous source values at element offset off, as floats.
template <int kE, bool kF32, bool kVec>
__device__ __forceinline__ void load_run(const RotateQuantizeArgs& a, int64_t off, float* v) {
  constexpr int kEb = kF32 ? 4 : 2;
  if constexpr (kVec) {
    constexpr int kBytes = kE * kEb > 16 ? 16 : kE * kEb;
    const uint8_t* p = static_cast<const uint8_t*>(a.src) + off * kEb;
#pragma unroll
    for (int c = 0; c < kE * kEb / kBytes; ++c) {
      const Chunk<kBytes> ch = reinterpret_cast<const Chunk<kBytes>*>(p)[c];
#pragma unroll
      for (int k = 0; k < kBytes / kEb; ++k) {
        uint32_t u = 0;
        if constexpr (kF32) {
          u = ch.b[4 * k] | (ch.b[4 * k + 1] << 8) | (ch.b[4 * k + 2] << 16) | (uint32_t(ch.b[4 * k + 3]) << 24);
        } else {
          u = (static_cast<uint32_t>(ch.b[2 * k]) | (static_cast<uint32_t>(ch.b[2 * k + 1]) << 8)) << 16;
        }
        v[c * (kBytes / kEb) + k] = __uint_as_float(u);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kE; ++k) v[k] = load_one(a, off + k);
  }
}

__device__ __forceinline__ uint8_t encode(float v) {
  if (isnan(v)) return 0x7F;  // every NaN, whatever its sign bit, as on the other backends
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));  // RNE
}

// Row r as element offsets of src and dst, and its head. 32-bit division when the row count
// allows it (a uniform branch): the 64-bit one costs more than the row's butterflies.
__device__ __forceinline__ void row_offsets(const RotateQuantizeArgs& a, int64_t r, int64_t* so, int64_t* dso, int* head) {
  int64_t h, s, b;
  if (a.shape[0] * a.shape[1] * a.shape[2] <= int64_t{0x7FFFFFFF}) {
    const uint32_t r32 = static_cast<uint32_t>(r), nh = static_cast<uint32_t>(a.shape[2]);
    const uint32_t ns = static_cast<uint32_t>(a.shape[1]);
    const uint32_t bs = r32 / nh;
    h = r32 - bs * nh;
    const uint32_t b32 = bs / ns;
    s = bs - b32 * ns;
    b = b32;
  } else {
    h = r % a.shape[2];
    const int64_t bs = r / a.shape[2];
    s = bs % a.shape[1];
    b = bs / a.shape[1];
  }
  *so = b * a.src_stride[0] + s * a.src_stride[1] + h * a.src_stride[2];
  *dso = b * a.dst_stride[0] + s * a.dst_stride[1] + h * a.dst_stride[2];
  *head = static_cast<int>(h);
}

// The sign bits (as float sign masks) of this lane's columns: fixed for the launch.
template <int kNB, int kE>
__device__ __forceinline__ void lane_signs(const RotateQuantizeArgs& a, int g, int block, uint32_t (&sg)[kNB][kE]) {
#pragma unroll
  for (int blk = 0; blk < kNB; ++blk)
#pragma unroll
    for (int k = 0; k < kE; ++k) {
      const int col = blk * block + kE * g + k;
      sg[blk][k] = ((a.rot.sign[col >> 5] >> (col & 31)) & 1u) << 31;
    }
}

// Loads row `so` (when valid) into v: minus the mean, signs applied. Invalid rows read zeros.
template <int kNB, int kE, bool kF32, bool kVec>
__device__ __forceinline__ void load_row(const RotateQuantizeArgs& a, bool valid, int64_t so, int head, int g, int block,
                                         const uint32_t (&sg)[kNB][kE], float (&v)[kNB][kE]) {
#pragma unroll
  for (int blk = 0; blk < kNB; ++blk) {
    const int col0 = blk * block + kE * g;
    if (valid) {
      load_run<kE, kF32, kVec>(a, so + col0, v[blk]);
    } else {
#pragma unroll
      for (int k = 0; k < kE; ++k) v[blk][k] = 0.0f;
    }
    if (a.mean && valid) {
#pragma unroll
      for (int k = 0; k < kE; ++k) v[blk][k] = v[blk][k] - a.mean[static_cast<int64_t>(head) * a.shape[3] + col0 + k];
    }
#pragma unroll
    for (int k = 0; k < kE; ++k) v[blk][k] = __uint_as_float(__float_as_uint(v[blk][k]) ^ sg[blk][k]);
  }
}

// Butterflies and the post step of one loaded row (v[blk][k] is column blk B + kE g + k).
template <int kNB, int kE, int kL>
__device__ __forceinline__ void transform_row(const RotateQuantizeArgs& a, int g, float (&v)[kNB][kE]) {
#pragma unroll
  for (int blk = 0; blk < kNB; ++blk) {
#pragma unroll
    for (int h = 1; h < kE; h *= 2)
#pragma unroll
      for (int k = 0; k < kE; ++k)
        if ((k & h) == 0) {
          const float x0 = v[blk][k], x1 = v[blk][k + h];
          v[blk][k] = x0 + x1;
          v[blk][k + h] = x0 - x1;
        }
#pragma unroll
    for (int m = 1; m < kL; m *= 2) {
      const float sgn = (g & m) != 0 ? -1.0f : 1.0f;  // upper: p - x, lower: x + p
#pragma unroll
      for (int k = 0; k < kE; ++k) {
        const float p = __shfl_xor_sync(0xffffffffu, v[blk][k], m);
        v[blk][k] = fmaf(sgn, v[blk][k], p);
      }
    }
  }
  if constexpr (kNB == 1) {
#pragma unroll
    for (int k = 0; k < kE; ++k) v[0][k] = v[0][k] * a.rot.post_scale;
  } else {
#pragma unroll
    for (int k = 0; k < kE; ++k) {
      const float z0 = v[0][k], z1 = v[1][k], z2 = v[2][k];
#pragma unroll
      for (int c = 0; c < 3; ++c)
        v[c][k] = fmaf(a.rot.dct[3 * c + 2], z2, fmaf(a.rot.dct[3 * c + 1], z1, a.rot.dct[3 * c] * z0));
    }
  }
}

__device__ __forceinline__ uint32_t warp_max(uint32_t x) {
  for (int o = 16; o > 0; o /= 2) x = max(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ uint32_t warp_sum(uint32_t x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// descale and 1/descale for this launch: static, or from the finished amax word.
__device__ __forceinline__ void descale_of(const RotateQuantizeArgs& a, float* descale, float* inv) {
  if (a.static_descale != 0.0f) {
    *descale = a.static_descale;
    *inv = a.static_inv;
  } else {
    *descale = *a.descale;
    *inv = 1.0f / *descale;  // exact: a power of two (NaN stays NaN)
  }
}

// Four codes (first in the low byte) of four scaled values, as encode() gives them one by
// one: the satfinite conversion already takes |v| > 448 (and infinities) to the signed
// maximum, which is what saturation to +-448 followed by RNE gives; 0xFF can then only be a
// NaN, and becomes 0x7F.
__device__ __forceinline__ uint32_t encode4(float x0, float x1, float x2, float x3) {
  const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(x0, x1), __NV_SATFINITE, __NV_E4M3);
  const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(x2, x3), __NV_SATFINITE, __NV_E4M3);
  const uint32_t w = lo | (hi << 16);
  const uint32_t nan = __vcmpeq4(w, 0xFFFFFFFFu);
  return w & ~(nan & 0x80808080u);
}

// Scales, saturates (static descale), encodes; returns 1 when v saturated.
__device__ __forceinline__ uint32_t quantize(float y, float inv, bool saturate, uint8_t* code) {
  float v = y * inv;
  uint32_t sat = 0;
  if (saturate && fabsf(v) > 448.0f) {
    v = copysignf(448.0f, v);
    sat = 1;
  }
  *code = encode(v);
  return sat;
}

// kL lanes per row block; kR rows per group per step.
template <int kNB, int kE, int kL, bool kF32, bool kVec, bool kConvert>
__device__ __forceinline__ void rot_pass(const RotateQuantizeArgs& a) {
  constexpr int kG = 32 / kL;  // rows per warp at a time
  constexpr int kR = kNB == 1 ? 2 : 1;  // DCT3 rows hold 3 blocks already (and spill at 2)
  constexpr int kB = kE * kL;  // block length
  const int lane = threadIdx.x % 32;
  const int g = lane % kL;
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  const int64_t warp = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32;
  const int64_t slots = int64_t{gridDim.x} * kWarps * kG;
  const int64_t slot = warp * kG + lane / kL;
  uint32_t sg[kNB][kE];
  lane_signs<kNB, kE>(a, g, kB, sg);
  float descale = 0.0f, inv = 0.0f;
  const bool saturate = a.static_descale != 0.0f;
  const bool count_saturated = saturate && a.saturated != nullptr;
  if constexpr (kConvert) {
    descale_of(a, &descale, &inv);
    if (saturate && blockIdx.x == 0 && threadIdx.x == 0) *a.descale = descale;
  }
  uint32_t acc = 0;  // amax bits, or the saturation count
  for (int64_t base = 0; base + warp * kG < rows; base += slots * kR) {
    float v[kR][kNB][kE];
    int64_t dso[kR];
    bool valid[kR];
#pragma unroll
    for (int j = 0; j < kR; ++j) {
      const int64_t r = base + j * slots + slot;
      valid[j] = r < rows;
      int64_t so = 0;
      int head = 0;
      dso[j] = 0;
      if (valid[j]) row_offsets(a, r, &so, &dso[j], &head);
      load_row<kNB, kE, kF32, kVec>(a, valid[j], so, head, g, kB, sg, v[j]);
    }
    // Every row's shuffles before any branch on validity: shuffles in divergent code would
    // make the compiler add collective bookkeeping around each of them.
#pragma unroll
    for (int j = 0; j < kR; ++j) transform_row<kNB, kE, kL>(a, g, v[j]);
#pragma unroll
    for (int j = 0; j < kR; ++j) {
      if (!valid[j]) continue;
      if constexpr (kConvert) {
#pragma unroll
        for (int blk = 0; blk < kNB; ++blk) {
          float q[kE];
#pragma unroll
          for (int k = 0; k < kE; ++k) q[k] = v[j][blk][k] * inv;
          if (count_saturated) {
#pragma unroll
            for (int k = 0; k < kE; ++k) acc += fabsf(q[k]) > 448.0f ? 1u : 0u;
          }
          static_assert(kE == 8, "two code words per lane and block");
          uint32_t w[kE / 4];
#pragma unroll
          for (int c = 0; c < kE / 4; ++c) w[c] = encode4(q[4 * c], q[4 * c + 1], q[4 * c + 2], q[4 * c + 3]);
          uint8_t* p = a.dst + dso[j] + blk * kB + kE * g;
          if constexpr (kVec) {
            *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
          } else {
#pragma unroll
            for (int k = 0; k < kE; ++k) p[k] = static_cast<uint8_t>(w[k / 4] >> (8 * (k % 4)));
          }
        }
      } else {
#pragma unroll
        for (int blk = 0; blk < kNB; ++blk)
#pragma unroll
          for (int k = 0; k < kE; ++k) acc = max(acc, __float_as_uint(v[j][blk][k]) & 0x7FFFFFFFu);
      }
    }
  }
  if constexpr (kConvert) {
    acc = warp_sum(acc);
    if (a.saturated && lane == 0 && acc) atomicAdd(a.saturated, acc);
  } else {
    acc = warp_max(acc);
    if (lane == 0 && acc != 0) atomicMax(reinterpret_cast<unsigned int*>(a.descale), acc);
  }
}

template <int kNB, int kE, int kL, bool kF32, bool kVec>
__global__ void __launch_bounds__(kThreads) rot_amax_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  rot_pass<kNB, kE, kL, kF32, kVec, false>(a);
}

template <int kNB, int kE, int kL, bool kF32, bool kVec>
__global__ void __launch_bounds__(kThreads) rot_convert_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  rot_pass<kNB, kE, kL, kF32, kVec, true>(a);
}

// No rotation: smoothing and/or a static descale on any head_dim, one element per lane step.
__device__ __forceinline__ float plain_value(const RotateQuantizeArgs& a, int64_t so, int head, int64_t i) {
  float x = load_one(a, so + i);
  if (a.mean) x = x - a.mean[head * a.shape[3] + i];
  return x;
}

__global__ void __launch_bounds__(kThreads) plain_amax_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  uint32_t m = 0;
  for (int64_t r = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32; r < rows; r += int64_t{gridDim.x} * kWarps) {
    int64_t so, dso;
    int head;
    row_offsets(a, r, &so, &dso, &head);
    for (int64_t i = lane; i < a.shape[3]; i += 32) m = max(m, __float_as_uint(plain_value(a, so, head, i)) & 0x7FFFFFFFu);
  }
  m = warp_max(m);
  if (lane == 0 && m != 0) atomicMax(reinterpret_cast<unsigned int*>(a.descale), m);
}

__global__ void __launch_bounds__(kThreads) plain_convert_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  float descale, inv;
  descale_of(a, &descale, &inv);
  const bool saturate = a.static_descale != 0.0f;
  if (saturate && blockIdx.x == 0 && threadIdx.x == 0) *a.descale = descale;
  uint32_t count = 0;
  for (int64_t r = blockIdx.x * int64_t{kWarps} + threadIdx.x / 32; r < rows; r += int64_t{gridDim.x} * kWarps) {
    int64_t so, dso;
    int head;
    row_offsets(a, r, &so, &dso, &head);
    for (int64_t i = lane; i < a.shape[3]; i += 32)
      count += quantize(plain_value(a, so, head, i), inv, saturate, &a.dst[dso + i]);
  }
  count = warp_sum(count);
  if (a.saturated && lane == 0 && count) atomicAdd(a.saturated, count);
}

// 2^ceil(log2(amax / 448)) from amax's bits (as the gfx950 kernel): with amax = M 2^E and
// 448 = 1.75 2^8, e = E - 8 when M <= 1.75, else E - 7; clamped to 2^-126; 1 for 0; NaN for
// inf/NaN.
__global__ void descale_kernel(float* descale) {
  const uint32_t bits = *reinterpret_cast<const uint32_t*>(descale);
  float result;
  if (bits >= 0x7F800000u) {
    result = __uint_as_float(0x7FC00000u);
  } else if (bits == 0) {
    result = 1.0f;
  } else {
    const int exp_field = static_cast<int>(bits >> 23);
    int e = exp_field == 0 ? -126 : (exp_field - 127) - ((bits & 0x7FFFFFu) <= 0x600000u ? 8 : 7);
    if (e < -126) e = -126;
    result = __uint_as_float(static_cast<uint32_t>(e + 127) << 23);
  }
  *descale = result;
}

using KernelFn = void (*)(RotateQuantizeArgs);

template <int kNB, int kE, int kL, bool kF32>
void pick(bool vec, KernelFn* amax, KernelFn* convert) {
  *amax = vec ? rot_amax_kernel<kNB, kE, kL, kF32, true> : rot_amax_kernel<kNB, kE, kL, kF32, false>;
  *convert = vec ? rot_convert_kernel<kNB, kE, kL, kF32, true> : rot_convert_kernel<kNB, kE, kL, kF32, false>;
}

template <bool kF32>
bool pick_rotation(const RotateQuantizeArgs& a, KernelFn* amax, KernelFn* convert) {
  const bool vec = a.vector_io != 0;
  if (a.rot.kind == rotation::kDct3H64) {
    pick<3, kLaneValues, 64 / kLaneValues, kF32>(vec, amax, convert);
    return true;
  }
  switch (a.shape[3]) {
    case 32: pick<1, kLaneValues, 32 / kLaneValues, kF32>(vec, amax, convert); return true;
    case 64: pick<1, kLaneValues, 64 / kLaneValues, kF32>(vec, amax, convert); return true;
    case 128: pick<1, kLaneValues, 128 / kLaneValues, kF32>(vec, amax, convert); return true;
    case 256: pick<1, kLaneValues, 256 / kLaneValues, kF32>(vec, amax, convert); return true;
    default: return false;
  }
}

}  // namespace

int rotate_chunk_align_src(int64_t, int elem_bytes, int) {
  const int bytes = kLaneValues * elem_bytes;
  return bytes > 16 ? 16 : bytes;
}

int rotate_chunk_align_dst(int64_t, int) { return kLaneValues; }

cudaError_t launch_fp8_rotate_quantize(const RotateQuantizeArgs& a, int sm_count, cudaStream_t stream) {
  KernelFn amax = plain_amax_kernel, convert = plain_convert_kernel;
  if (a.rot.kind != rotation::kNone) {
    const bool ok = a.src_is_fp32 ? pick_rotation<true>(a, &amax, &convert) : pick_rotation<false>(a, &amax, &convert);
    if (!ok) return cudaErrorInvalidValue;  // validation admits no other head_dim
  }
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  const int64_t want = (rows + kWarps - 1) / kWarps;
  const int64_t cap = static_cast<int64_t>(sm_count > 0 ? sm_count : 132) * 16;  // 16 resident 256-thread blocks per SM
  const int blocks = static_cast<int>(want < cap ? (want > 0 ? want : 1) : cap);
  cudaError_t err;
  if (a.saturated && (err = cudaMemsetAsync(a.saturated, 0, sizeof(uint32_t), stream)) != cudaSuccess) return err;
  if (a.static_descale == 0.0f) {
    if ((err = cudaMemsetAsync(a.descale, 0, sizeof(float), stream)) != cudaSuccess) return err;
    amax<<<blocks, kThreads, 0, stream>>>(a);
    descale_kernel<<<1, 1, 0, stream>>>(a.descale);
  }
  convert<<<blocks, kThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace zyfa::cuda
