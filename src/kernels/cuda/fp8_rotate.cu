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
// BF16 Hadamard rows of d <= 128 in evenly spaced rows without a mean (the common case) take
// another form, staged_row_pass: one lane per row, all d values in registers and every
// butterfly stage in registers (no shuffle, whose one warp instruction per SM clock otherwise
// caps the kernel), rows moved through shared memory so that global accesses stay coalesced.
//   computed descale: memset, amax (atomicMax of |y| bits), descale, convert
//   static descale:   convert only (one pass over the tensor)
// Without a rotation (smoothing or a static descale alone) a generic per-element warp loop
// takes any head_dim.
#include <cuda_fp8.h>

#include "host/even_rows.h"
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
    static_assert(kBytes % 4 == 0, "whole 32-bit words per chunk");
    const uint8_t* p = static_cast<const uint8_t*>(a.src) + off * kEb;
#pragma unroll
    for (int c = 0; c < kE * kEb / kBytes; ++c) {
      // 32-bit words of the chunk: a float each, or two bf16 (the first in the low half),
      // widened by a shift or a mask rather than byte by byte.
      uint32_t w[kBytes / 4];
      if constexpr (kBytes == 16) {
        const uint4 q = reinterpret_cast<const uint4*>(p)[c];
        w[0] = q.x, w[1] = q.y, w[2] = q.z, w[3] = q.w;
      } else {
        const Chunk<kBytes> ch = reinterpret_cast<const Chunk<kBytes>*>(p)[c];
        __builtin_memcpy(w, ch.b, kBytes);
      }
#pragma unroll
      for (int k = 0; k < kBytes / kEb; ++k) {
        uint32_t u;
        if constexpr (kF32) {
          u = w[k];
        } else {
          u = k % 2 == 0 ? w[k / 2] << 16 : w[k / 2] & 0xFFFF0000u;
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

// Row r as element offsets of src and dst, and its head (only read with a smoothing mean).
// Evenly spaced rows (packed tensors, or padded rows) take one multiply each: the launch sets
// the row steps. Otherwise 32-bit division when the row count allows it (a uniform branch):
// the 64-bit one costs more than the row's butterflies.
__device__ __forceinline__ void row_offsets(const RotateQuantizeArgs& a, int64_t r, int64_t* so, int64_t* dso, int* head) {
  if (a.src_row_step != 0 && a.dst_row_step != 0) {
    *so = r * a.src_row_step;
    *dso = r * a.dst_row_step;
    if (a.mean) *head = static_cast<int>(r % a.shape[2]);
    return;
  }
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

// A convert pass's scale: 1 / descale in *inv; the static descale written once. Returns
// whether saturated values are counted.
__device__ __forceinline__ bool convert_setup(const RotateQuantizeArgs& a, float* inv) {
  float descale;
  descale_of(a, &descale, inv);
  const bool saturate = a.static_descale != 0.0f;
  if (saturate && blockIdx.x == 0 && threadIdx.x == 0) *a.descale = descale;
  return saturate && a.saturated != nullptr;
}

// The warp's share: its saturation count (convert) or amax bits (amax pass), added atomically.
template <bool kConvert>
__device__ __forceinline__ void finish_pass(const RotateQuantizeArgs& a, uint32_t acc, int lane) {
  if constexpr (kConvert) {
    acc = warp_sum(acc);
    if (a.saturated && lane == 0 && acc) atomicAdd(a.saturated, acc);
  } else {
    acc = warp_max(acc);
    if (lane == 0 && acc != 0) atomicMax(reinterpret_cast<unsigned int*>(a.descale), acc);
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
  // Bit 7 of each byte of `kept` is set unless the byte of w is 0xFF (z's byte is 0); exact
  // per byte, as no sum carries across a byte boundary.
  const uint32_t z = ~w;
  const uint32_t kept = (((z & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | z) & 0x80808080u;
  return w & (kept | 0x7F7F7F7Fu);
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
  float inv = 0.0f;
  const bool count_saturated = kConvert && convert_setup(a, &inv);
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
  finish_pass<kConvert>(a, acc, lane);
}

template <int kNB, int kE, int kL, bool kF32, bool kVec>
__global__ void __launch_bounds__(kThreads) rot_amax_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  rot_pass<kNB, kE, kL, kF32, kVec, false>(a);
}

template <int kNB, int kE, int kL, bool kF32, bool kVec>
__global__ void __launch_bounds__(kThreads) rot_convert_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  rot_pass<kNB, kE, kL, kF32, kVec, true>(a);
}

// --- One lane per row, staged through shared memory (BF16, Hadamard, d <= 128) --------------
// A warp takes 32 consecutive rows at a time. cp.async copies them, coalesced, into one of two
// shared buffers while the previous 32 are transformed (16-byte chunks, the chunk index XORed
// with a function of the row so that eight lanes reading the same chunk of eight rows hit
// eight different bank groups); each lane then reads its own row, applies the column signs to
// the BF16 pairs before widening them (sign_mask entry k: bit 15 for column 2k, bit 31 for
// 2k + 1), and runs every butterfly stage in registers. The codes go back the same way: a
// swizzled row per lane, then coalesced 16-byte stores.
constexpr int kStagedWarps = 4;
constexpr int kStagedThreads = 32 * kStagedWarps;

// Chunk c of row r (of `chunks` 16-byte chunks) sits at chunk r * chunks + (c ^ swizzle).
__device__ __forceinline__ int staged_chunk(int r, int c, int chunks) {
  const int swz = chunks >= 8 ? (r & 7) : chunks == 4 ? ((r >> 1) & 3) : ((r >> 2) & 1);
  return r * chunks + (c ^ swz);
}

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory"); }

template <int kD>
struct StagedLayout {
  static constexpr int kInChunks = kD * 2 / 16;  // BF16 row
  static constexpr int kOutChunks = kD / 16;     // code row
  static constexpr int kInBytes = 32 * kD * 2;   // one buffer of 32 rows
  static constexpr int kWarpBytes = 2 * kInBytes + 32 * kD;
  static constexpr int kBlockBytes = kStagedWarps * kWarpBytes;
};

// Rows [32 g, 32 g + 32) into buf; rows past the tensor read as zeros.
template <int kD>
__device__ __forceinline__ void staged_issue(const RotateQuantizeArgs& a, int64_t g, int64_t rows, uint4* buf, int lane) {
  constexpr int kC = StagedLayout<kD>::kInChunks;
  const uint8_t* src = static_cast<const uint8_t*>(a.src);
#pragma unroll
  for (int i = 0; i < kC; ++i) {
    const int idx = i * 32 + lane, r = idx / kC, c = idx % kC;
    const int64_t row = g * 32 + r;
    const bool valid = row < rows;
    cp_async_16(&buf[staged_chunk(r, c, kC)], src + (valid ? row * a.src_row_step * 2 + c * 16 : 0), valid);
  }
}

template <int kD, bool kConvert>
__device__ __forceinline__ void staged_row_pass(const RotateQuantizeArgs& a) {
  using L = StagedLayout<kD>;
  extern __shared__ uint4 staged_smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint4* const in = staged_smem + warp * (L::kWarpBytes / 16);  // two buffers of kInBytes
  uint4* const out = staged_smem + warp * (L::kWarpBytes / 16) + 2 * L::kInBytes / 16;
  const int64_t rows = a.shape[0] * a.shape[1] * a.shape[2];
  const int64_t groups = (rows + 31) / 32;
  const int64_t stride = int64_t{gridDim.x} * kStagedWarps;
  float inv = 0.0f;
  const bool count_saturated = kConvert && convert_setup(a, &inv);
  uint32_t acc = 0;  // amax bits, or the saturation count
  int64_t g = blockIdx.x * int64_t{kStagedWarps} + warp;
  if (g < groups) staged_issue<kD>(a, g, rows, in, lane);
  cp_async_commit();
  for (int it = 0; g < groups; ++it, g += stride) {
    if (g + stride < groups) staged_issue<kD>(a, g + stride, rows, in + ((it + 1) & 1) * (L::kInBytes / 16), lane);
    cp_async_commit();
    cp_async_wait<1>();
    __syncwarp();
    float v[kD];
    const uint4* buf = in + (it & 1) * (L::kInBytes / 16);
#pragma unroll
    for (int c = 0; c < L::kInChunks; ++c) {
      const uint4 q = buf[staged_chunk(lane, c, L::kInChunks)];
      const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint32_t x = w[k] ^ a.sign_mask[4 * c + k];
        v[8 * c + 2 * k] = __uint_as_float(x << 16);
        v[8 * c + 2 * k + 1] = __uint_as_float(x & 0xFFFF0000u);
      }
    }
    __syncwarp();  // every lane has its row: the buffer may take the group after next
#pragma unroll
    for (int h = 1; h < kD; h *= 2)
#pragma unroll
      for (int i = 0; i < kD; ++i)
        if ((i & h) == 0) {
          const float x0 = v[i], x1 = v[i + h];
          v[i] = x0 + x1;
          v[i + h] = x0 - x1;
        }
#pragma unroll
    for (int i = 0; i < kD; ++i) v[i] = v[i] * a.rot.post_scale;
    const bool valid = g * 32 + lane < rows;
    if constexpr (kConvert) {
#pragma unroll
      for (int i = 0; i < kD; ++i) v[i] = v[i] * inv;
      if (count_saturated && valid) {
#pragma unroll
        for (int i = 0; i < kD; ++i) acc += fabsf(v[i]) > 448.0f ? 1u : 0u;
      }
#pragma unroll
      for (int c = 0; c < L::kOutChunks; ++c)
        out[staged_chunk(lane, c, L::kOutChunks)] =
            make_uint4(encode4(v[16 * c], v[16 * c + 1], v[16 * c + 2], v[16 * c + 3]),
                       encode4(v[16 * c + 4], v[16 * c + 5], v[16 * c + 6], v[16 * c + 7]),
                       encode4(v[16 * c + 8], v[16 * c + 9], v[16 * c + 10], v[16 * c + 11]),
                       encode4(v[16 * c + 12], v[16 * c + 13], v[16 * c + 14], v[16 * c + 15]));
      __syncwarp();
#pragma unroll
      for (int i = 0; i < L::kOutChunks; ++i) {
        const int idx = i * 32 + lane, r = idx / L::kOutChunks, c = idx % L::kOutChunks;
        const int64_t row = g * 32 + r;
        if (row < rows) *reinterpret_cast<uint4*>(a.dst + row * a.dst_row_step + c * 16) = out[staged_chunk(r, c, L::kOutChunks)];
      }
      __syncwarp();  // the codes are out before the next group's are written
    } else if (valid) {
#pragma unroll
      for (int i = 0; i < kD; ++i) acc = max(acc, __float_as_uint(v[i]) & 0x7FFFFFFFu);
    }
  }
  cp_async_wait<0>();
  finish_pass<kConvert>(a, acc, lane);
}

template <int kD>
__global__ void __launch_bounds__(kStagedThreads) staged_amax_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  staged_row_pass<kD, false>(a);
}

template <int kD>
__global__ void __launch_bounds__(kStagedThreads) staged_convert_kernel(const __grid_constant__ RotateQuantizeArgs a) {
  staged_row_pass<kD, true>(a);
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
  float inv;
  convert_setup(a, &inv);
  const bool saturate = a.static_descale != 0.0f;
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

namespace {
// Whether the staged kernels take this call, and their sign masks (see staged_row_pass).
bool use_staged(RotateQuantizeArgs* a) {
  const int d = static_cast<int>(a->shape[3]);
  const auto aligned = [](const void* p, int64_t step_bytes) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && step_bytes % 16 == 0;
  };
  if (a->rot.kind != rotation::kHadamard || a->src_is_fp32 || a->mean != nullptr || (d != 32 && d != 64 && d != 128) ||
      a->src_row_step == 0 || a->dst_row_step == 0 || !aligned(a->src, a->src_row_step * 2) ||
      !aligned(a->dst, a->dst_row_step))
    return false;
  rotation::bf16_pair_sign_masks(a->rot, d, a->sign_mask);
  return true;
}

// The launch sequence on `stream`: counter and amax word cleared, [amax, descale] unless the
// descale is static, then convert; `units` of work (rows or row groups) spread over up to
// `per_sm` blocks of `threads` per SM.
cudaError_t launch_passes(const RotateQuantizeArgs& a, KernelFn amax, KernelFn convert, int64_t units, int units_per_block,
                          int per_sm, int threads, int smem_bytes, int sm_count, cudaStream_t stream) {
  const int64_t want = (units + units_per_block - 1) / units_per_block;
  const int64_t cap = static_cast<int64_t>(sm_count > 0 ? sm_count : 132) * per_sm;
  const int blocks = static_cast<int>(want < cap ? (want > 0 ? want : 1) : cap);
  cudaError_t err;
  if (a.saturated && (err = cudaMemsetAsync(a.saturated, 0, sizeof(uint32_t), stream)) != cudaSuccess) return err;
  if (a.static_descale == 0.0f) {
    if ((err = cudaMemsetAsync(a.descale, 0, sizeof(float), stream)) != cudaSuccess) return err;
    amax<<<blocks, threads, smem_bytes, stream>>>(a);
    descale_kernel<<<1, 1, 0, stream>>>(a.descale);
  }
  convert<<<blocks, threads, smem_bytes, stream>>>(a);
  return cudaGetLastError();
}

template <int kD>
cudaError_t launch_staged(const RotateQuantizeArgs& a, int sm_count, cudaStream_t stream) {
  constexpr int kBytes = StagedLayout<kD>::kBlockBytes;
  cudaError_t err;
  if ((err = cudaFuncSetAttribute(staged_amax_kernel<kD>, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes)) != cudaSuccess ||
      (err = cudaFuncSetAttribute(staged_convert_kernel<kD>, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes)) != cudaSuccess)
    return err;
  const int64_t groups = (a.shape[0] * a.shape[1] * a.shape[2] + 31) / 32;
  return launch_passes(a, staged_amax_kernel<kD>, staged_convert_kernel<kD>, groups, kStagedWarps, 2, kStagedThreads, kBytes,
                       sm_count, stream);
}
}  // namespace

cudaError_t launch_fp8_rotate_quantize(const RotateQuantizeArgs& args, int sm_count, cudaStream_t stream) {
  RotateQuantizeArgs a = args;
  a.src_row_step = even_row_step(a.shape, a.src_stride);
  a.dst_row_step = even_row_step(a.shape, a.dst_stride);
  if (use_staged(&a)) {
    switch (a.shape[3]) {
      case 32: return launch_staged<32>(a, sm_count, stream);
      case 64: return launch_staged<64>(a, sm_count, stream);
      default: return launch_staged<128>(a, sm_count, stream);
    }
  }
  KernelFn amax = plain_amax_kernel, convert = plain_convert_kernel;
  if (a.rot.kind != rotation::kNone) {
    const bool ok = a.src_is_fp32 ? pick_rotation<true>(a, &amax, &convert) : pick_rotation<false>(a, &amax, &convert);
    if (!ok) return cudaErrorInvalidValue;  // validation admits no other head_dim
  }
  // One warp per row (or per 32 / kL rows), 16 resident 256-thread blocks per SM.
  return launch_passes(a, amax, convert, a.shape[0] * a.shape[1] * a.shape[2], kWarps, 16, kThreads, 0, sm_count, stream);
}

}  // namespace zyfa::cuda
