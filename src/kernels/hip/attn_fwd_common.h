// Baseline causal attention forward for gfx950: correct and simple, not yet fast.
//
// A persistent grid walks the job table; each job is up to two query tiles of 128 rows, and
// each of the 4 waves of a workgroup owns 32 query rows and works alone (no LDS, no barriers).
// Scores are computed transposed, S^T = K Q^T, with K as the A operand of a 32x32 MFMA, so
// lane l holds the scores of query l%32 for 16 keys of each 32-key block (keys 8g+4h+r,
// h = l/32, accumulator register 4g+r). Output is likewise O^T = V^T P^T: lane l keeps the
// output of its own query, so every per-row factor (rescale, 1/rowsum) is lane-local.
// The MFMA's reduction index k is only a pairing between A and B, so P enters the PV MFMA in
// the order the lane holds it, and V^T is gathered in that same key order.
//
// Numerics: base-2 online softmax (exact P with v_exp_f32, rescale whenever the max grows),
// P rounded (RNE) to the input type for the PV MFMA, row sum in fp32 over the same rounded P,
// so every output row is a weighted average; FP8 P scaled per 64-key block by a power of two
// that the scaled MFMA removes; descales applied in the kernel; BF16 RNE output.
#pragma once

#include <hip/hip_runtime.h>

#include <type_traits>

#include "attn_fwd_args.h"

namespace zyfa::kernels {

typedef __attribute__((ext_vector_type(16))) float f32x16;
typedef __attribute__((ext_vector_type(8))) __bf16 bf16x8;
typedef __attribute__((ext_vector_type(8))) int i32x8;
typedef __attribute__((ext_vector_type(4))) unsigned u32x4;

inline constexpr uint32_t kNoTileWord = 0xFFFFFFFFu;  // host/job_table.h kNoTile
inline constexpr int kDv = 128;

// Global-address-space pointers, so that memory accesses are global_* rather than flat_*.
template <typename T>
using gptr = __attribute__((address_space(1))) T*;
template <typename T>
__device__ inline gptr<T> global(uint64_t address) { return reinterpret_cast<gptr<T>>(address); }
template <typename T, typename U>
__device__ inline gptr<T> global_cast(gptr<U> p) { return reinterpret_cast<gptr<T>>(p); }

__device__ inline float bits_to_float(uint32_t u) { return __builtin_bit_cast(float, u); }
__device__ inline uint32_t float_to_bits(float f) { return __builtin_bit_cast(uint32_t, f); }

// Round to nearest even to BF16 with plain integer VALU (inputs here are finite).
__device__ inline uint32_t bf16_rne(float f) {
  const uint32_t u = float_to_bits(f);
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// The same value in the other lane of the pair (l, l^32) that shares a query row.
__device__ inline float partner(float x, int lane) {
  return bits_to_float(static_cast<uint32_t>(
      __builtin_amdgcn_ds_bpermute((lane ^ 32) << 2, static_cast<int>(float_to_bits(x)))));
}

__device__ inline float load_descale(uint64_t ptr, float host_value, int64_t sb, int64_t sh,
                                     int64_t b, int64_t hk) {
  if (ptr == 0) return host_value;
  return global<const float>(ptr)[b * sb + hk * sh];
}

// At least 20 wait states between a 16-pass XDL MFMA (v_mfma_scale_f32_32x32x64_f8f6f4 with
// FP8 operands) and VALU reads of its result, as gfx950 requires. LLVM 21 looks back only 19
// wait states for that hazard and was seen to place a read exactly 19 states after such an
// MFMA; the emulator's hazard check caught it. The scheduling barriers keep the reads below
// the s_nops (8 + 8 + 4 wait states).
__device__ inline void xdl16_read_guard() {
  __builtin_amdgcn_sched_barrier(0);
  asm volatile("s_nop 7\n\ts_nop 7\n\ts_nop 3" ::: "memory");
  __builtin_amdgcn_sched_barrier(0);
}

// Key of accumulator register v (= 4g + r) of the 32-key score block starting at `base`.
__device__ inline int key_of(int base, int v, int h) { return base + 8 * (v >> 2) + 4 * h + (v & 3); }

template <bool kFp8, int kDqk>
struct AttnTraits {
  static constexpr int kKeyBlock = kFp8 ? 64 : 32;             // keys per PV MFMA step
  static constexpr int kScoreBlocks = kKeyBlock / 32;          // 32x32 score blocks per step
  static constexpr int kQkSteps = kFp8 ? kDqk / 64 : kDqk / 16; // MFMAs per score block
  static constexpr int kElemBytes = kFp8 ? 1 : 2;
};

// The kernel arguments, read straight from the kernarg segment (scalar loads).
using KernargPtr = __attribute__((address_space(4))) const AttnFwdArgs*;

__device__ inline KernargPtr kernargs() {
  return (KernargPtr)__builtin_amdgcn_kernarg_segment_ptr();  // same address space, new type
}

// What a job table's tile word names: batch, query head, its K/V head and query tile (the
// word is (b * heads + h) * n_tiles + tile). A template on the arguments' type, which carries
// the kernarg address space.
struct TileCoords {
  int b, h, hk, tile;
};
template <typename Args>
__device__ __forceinline__ TileCoords tile_coords(const Args& a, uint32_t tile_word, uint32_t n_tiles) {
  const uint32_t bh = fast_div(tile_word, a.div_n_tiles);
  const uint32_t bq = fast_div(bh, a.div_heads);
  TileCoords t;
  t.tile = static_cast<int>(tile_word - bh * n_tiles);
  t.b = static_cast<int>(bq);
  t.h = static_cast<int>(bh - bq * static_cast<uint32_t>(a.heads));
  t.hk = static_cast<int>(fast_div(static_cast<uint32_t>(t.h), a.div_group));
  return t;
}

// A value of V that the P·V product must not see: a masked probability is 0, and 0 times
// NaN or Inf is NaN, so in the last key block (keys past some row's causal limit or past
// seqlen, rows clamped to the last one) a non-finite V element is read as 0 and the smallest
// such key is kept; the rows at or after it, which do see it, are made NaN in the epilogue.
// BF16: exponent all ones; e4m3fn: 0x7F and 0xFF are its only non-finite codes.
template <bool kValue>
struct BoolConst {
  static constexpr bool value = kValue;
};

// kNonFinite: the bits that are all ones in exactly the type's non-finite codes.
template <bool kTail, uint32_t kNonFinite>
__device__ __forceinline__ uint32_t v_element(uint32_t x, int key, int& bad_key) {
  if constexpr (kTail) {
    const bool bad = (x & kNonFinite) == kNonFinite;
    bad_key = bad ? min(bad_key, key) : bad_key;
    return bad ? 0u : x;
  }
  return x;
}
inline constexpr uint32_t kBf16NonFinite = 0x7F80u;
inline constexpr uint32_t kE4m3NonFinite = 0x7Fu;

// O^T += V^T P^T for one key block (the block's scores s, max mx, running max m).
template <bool kFp8, bool kTail, int kBlocks>
__device__ __forceinline__ void pv_block(f32x16 (&o)[kDv / 32], const float (&s)[kBlocks][16], float m,
                                         [[maybe_unused]] float mx, float& l, gptr<const uint8_t> vbase, int64_t v_row,
                                         int kb, int seqlen, int half, int ql, int& bad_key) {
  if constexpr (kFp8) {
    // P^T as the B operand: byte e = 16*sb + 4g + r of the lane is score register 4g+r of
    // block sb. A = V^T: lane (dv = 32j + ql, half) byte e is V[key of that same slot][dv].
    //
    // Per-block scaling: P of this 64-key block is computed times 2^E, E = floor(m - mx) with
    // mx the block's largest score of the row, so that the block's largest probability is
    // rounded as a value in (1/2, 1] instead of a subnormal or zero; the scaled MFMA divides
    // 2^E back out through B's E8M0 scale (127 - E, the same in both lanes of the row, which
    // are the lanes j and j + 32 that supply column j's scale for K blocks 0 and 1). The row
    // sum adds the same rounded values times 2^-E (exact: a power of two). E <= 126 keeps
    // 2^-E a normal float.
    const int e_block = static_cast<int>(fminf(__builtin_floorf(m - mx), 126.0f));
    const float p_shift = m - static_cast<float>(e_block);
    const float unscale = bits_to_float(static_cast<uint32_t>(127 - e_block) << 23);
    float block_sum = 0.0f;
    uint32_t pw[8];
#pragma unroll
    for (int sb = 0; sb < 2; ++sb)
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        float p[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) p[r] = __builtin_amdgcn_exp2f(s[sb][4 * g + r] - p_shift);
        int w = __builtin_amdgcn_cvt_pk_fp8_f32(p[0], p[1], 0, false);
        w = __builtin_amdgcn_cvt_pk_fp8_f32(p[2], p[3], w, true);
        block_sum += __builtin_amdgcn_cvt_f32_fp8(w, 0) + __builtin_amdgcn_cvt_f32_fp8(w, 1) +
                     __builtin_amdgcn_cvt_f32_fp8(w, 2) + __builtin_amdgcn_cvt_f32_fp8(w, 3);
        pw[4 * sb + g] = static_cast<uint32_t>(w);
      }
    l += block_sum * unscale;
    const int p_scale = 127 - e_block;  // E8M0 2^-E
    const i32x8 pb = {int(pw[0]), int(pw[1]), int(pw[2]), int(pw[3]),
                      int(pw[4]), int(pw[5]), int(pw[6]), int(pw[7])};
#pragma unroll
    for (int j = 0; j < kDv / 32; ++j) {
      const gptr<const uint8_t> vcol = vbase + 32 * j + ql;
      uint32_t vw[8];
#pragma unroll
      for (int e4 = 0; e4 < 8; ++e4) {
        uint32_t word = 0;
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int key = key_of(kb + 32 * (e4 >> 2), 4 * (e4 & 3) + r, half);
          const uint32_t x = vcol[static_cast<int64_t>(min(key, seqlen - 1)) * v_row];
          word |= v_element<kTail, kE4m3NonFinite>(x, key, bad_key) << (8 * r);
        }
        vw[e4] = word;
      }
      const i32x8 va = {int(vw[0]), int(vw[1]), int(vw[2]), int(vw[3]),
                        int(vw[4]), int(vw[5]), int(vw[6]), int(vw[7])};
      o[j] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(va, pb, o[j], 0, 0, 0, 127, 0, p_scale);
    }
  } else {
    // Two 32x32x16 MFMAs per 32 keys; MFMA t takes score registers 8t .. 8t+7 as its
    // 8 bf16 slots, and V^T is gathered in that order.
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      uint32_t pw[4];
#pragma unroll
      for (int e2 = 0; e2 < 4; ++e2) {
        const float p0 = __builtin_amdgcn_exp2f(s[0][8 * t + 2 * e2] - m);
        const float p1 = __builtin_amdgcn_exp2f(s[0][8 * t + 2 * e2 + 1] - m);
        const uint32_t b0 = bf16_rne(p0), b1 = bf16_rne(p1);
        l += bits_to_float(b0 << 16) + bits_to_float(b1 << 16);
        pw[e2] = b0 | (b1 << 16);
      }
      const u32x4 pb = {pw[0], pw[1], pw[2], pw[3]};
#pragma unroll
      for (int j = 0; j < kDv / 32; ++j) {
        const gptr<const uint8_t> vcol = vbase + 2 * (32 * j + ql);
        uint32_t vw[4];
#pragma unroll
        for (int e2 = 0; e2 < 4; ++e2) {
          const int key0 = key_of(kb, 8 * t + 2 * e2, half);
          const int key1 = key_of(kb, 8 * t + 2 * e2 + 1, half);
          const uint32_t v0 = v_element<kTail, kBf16NonFinite>(
              *global_cast<const uint16_t>(vcol + static_cast<int64_t>(min(key0, seqlen - 1)) * v_row), key0, bad_key);
          const uint32_t v1 = v_element<kTail, kBf16NonFinite>(
              *global_cast<const uint16_t>(vcol + static_cast<int64_t>(min(key1, seqlen - 1)) * v_row), key1, bad_key);
          vw[e2] = v0 | (v1 << 16);
        }
        const u32x4 va = {vw[0], vw[1], vw[2], vw[3]};
        o[j] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, va),
                                                       __builtin_bit_cast(bf16x8, pb), o[j], 0, 0, 0);
      }
    }
  }
}

template <bool kFp8, int kDqk>
__device__ __forceinline__ void attn_tile(uint32_t tile_word, uint32_t n_tiles, int wave,
                          int lane) {
  using T = AttnTraits<kFp8, kDqk>;
  // Read the arguments afresh for every tile: hoisted out of the persistent loop they would
  // occupy ~60 scalar registers for the whole kernel and spill.
  KernargPtr ap = kernargs();
  asm volatile("" : "+s"(ap));
  const auto& a = *ap;
  const int seqlen = a.seqlen;
  const TileCoords tc = tile_coords(a, tile_word, n_tiles);
  const int b = tc.b, h = tc.h, hk = tc.hk, tile = tc.tile;
  const int q0 = tile * kAttnTileRows + wave * kAttnWaveRows;
  if (q0 >= seqlen) return;  // the last tile may be short: whole waves idle

  const int ql = lane & 31;
  const int half = lane >> 5;
  const int qrow = q0 + ql;
  const bool qvalid = qrow < seqlen;
  const int qload = qvalid ? qrow : seqlen - 1;  // rows past the end compute on a real row, never stored

  const float qd = load_descale(a.q_descale_ptr, a.q_descale, a.descale_stride[0], a.descale_stride[1], b, hk);
  const float kd = load_descale(a.k_descale_ptr, a.k_descale, a.descale_stride[2], a.descale_stride[3], b, hk);
  const float vd = load_descale(a.v_descale_ptr, a.v_descale, a.descale_stride[4], a.descale_stride[5], b, hk);
  const float score_scale = a.scale_log2 * qd * kd;

  const gptr<const uint8_t> qbase = global<const uint8_t>(a.q) +
      (b * a.q_stride[0] + static_cast<int64_t>(qload) * a.q_stride[1] + h * a.q_stride[2]) * T::kElemBytes;
  const gptr<const uint8_t> kbase = global<const uint8_t>(a.k) +
      (b * a.k_stride[0] + hk * a.k_stride[2]) * T::kElemBytes;
  const gptr<const uint8_t> vbase = global<const uint8_t>(a.v) +
      (b * a.v_stride[0] + hk * a.v_stride[2]) * T::kElemBytes;
  const int64_t k_row = a.k_stride[1] * T::kElemBytes;
  const int64_t v_row = a.v_stride[1] * T::kElemBytes;

  // Q as the B operand, held for the whole tile. BF16 (32x32x16 per step c): the lane holds
  // d = 16c + 8h .. 16c + 8h + 7.
  // FP8: lane holds d = 64c + 16h .. +16 and 64c + 32 + 16h .. +16 (two 16-byte chunks).
  u32x4 qreg[kFp8 ? 2 * T::kQkSteps : T::kQkSteps];
#pragma unroll
  for (int c = 0; c < T::kQkSteps; ++c) {
    if constexpr (kFp8) {
      qreg[2 * c] = *global_cast<const u32x4>(qbase + 64 * c + 16 * half);
      qreg[2 * c + 1] = *global_cast<const u32x4>(qbase + 64 * c + 32 + 16 * half);
    } else {
      qreg[c] = *global_cast<const u32x4>(qbase + 2 * (16 * c + 8 * half));
    }
  }

  f32x16 o[kDv / 32];
#pragma unroll
  for (int j = 0; j < kDv / 32; ++j) o[j] = f32x16{};
  float m = -__builtin_inff();  // running max of base-2 scores of this row
  float l = 0.0f;               // this lane's part of the row sum (its 16 of each 32 keys)

  // Causal: keys up to the wave's last row. Every block starts at or before q0, so every row
  // has an unmasked key in every block and the max stays finite.
  const int key_end = min(seqlen, q0 + kAttnWaveRows);
  int bad_key = 0x7FFFFFFF;  // smallest key of the last block with a non-finite V element
  // One key block; kTail for the last one, the only block with keys past some row's causal
  // limit (or past seqlen). BF16 peels it out of the loop, so that the loop's code is the
  // plain one.
  // FP8 keeps the block in the loop with the choice at its P·V only: peeled, or with the
  // whole block under the branch, the compiler placed MFMAs under a partial EXEC or in AGPR
  // moves.
  auto key_block = [&](int kb, auto tail) {
    f32x16 acc[T::kScoreBlocks];
#pragma unroll
    for (int sb = 0; sb < T::kScoreBlocks; ++sb) {
      const int key = kb + 32 * sb + ql;
      const gptr<const uint8_t> krow = kbase + static_cast<int64_t>(min(key, seqlen - 1)) * k_row;
      acc[sb] = f32x16{};
#pragma unroll
      for (int c = 0; c < T::kQkSteps; ++c) {
        if constexpr (kFp8) {
          const u32x4 k0 = *global_cast<const u32x4>(krow + 64 * c + 16 * half);
          const u32x4 k1 = *global_cast<const u32x4>(krow + 64 * c + 32 + 16 * half);
          const i32x8 ka = {int(k0[0]), int(k0[1]), int(k0[2]), int(k0[3]),
                            int(k1[0]), int(k1[1]), int(k1[2]), int(k1[3])};
          const i32x8 qb = {int(qreg[2 * c][0]), int(qreg[2 * c][1]), int(qreg[2 * c][2]), int(qreg[2 * c][3]),
                            int(qreg[2 * c + 1][0]), int(qreg[2 * c + 1][1]), int(qreg[2 * c + 1][2]),
                            int(qreg[2 * c + 1][3])};
          // Formats e4m3 (0) for both; E8M0 scale 127 = 1.0 for every block.
          acc[sb] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(ka, qb, acc[sb], 0, 0, 0, 127, 0, 127);
        } else {
          const u32x4 k0 = *global_cast<const u32x4>(krow + 2 * (16 * c + 8 * half));
          acc[sb] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, k0),
                                                            __builtin_bit_cast(bf16x8, qreg[c]), acc[sb], 0, 0, 0);
        }
      }
    }
    if constexpr (kFp8) xdl16_read_guard();
    float s[T::kScoreBlocks][16];
#pragma unroll
    for (int sb = 0; sb < T::kScoreBlocks; ++sb)
#pragma unroll
      for (int v = 0; v < 16; ++v) {
        const int kv = key_of(kb + 32 * sb, v, half);
        s[sb][v] = kv <= qrow ? acc[sb][v] * score_scale : -__builtin_inff();
      }

    float mx = s[0][0];
#pragma unroll
    for (int sb = 0; sb < T::kScoreBlocks; ++sb)
#pragma unroll
      for (int v = 0; v < 16; ++v) mx = fmaxf(mx, s[sb][v]);
    mx = fmaxf(mx, partner(mx, lane));
    const float m_new = fmaxf(m, mx);
    const float alpha = __builtin_amdgcn_exp2f(m - m_new);  // 0 on the first block (m = -inf)
    m = m_new;
    l *= alpha;
#pragma unroll
    for (int j = 0; j < kDv / 32; ++j) o[j] *= alpha;

    if constexpr (std::is_same_v<decltype(tail), bool>) {
      if (tail)
        pv_block<kFp8, true>(o, s, m, mx, l, vbase, v_row, kb, seqlen, half, ql, bad_key);
      else
        pv_block<kFp8, false>(o, s, m, mx, l, vbase, v_row, kb, seqlen, half, ql, bad_key);
    } else {
      pv_block<kFp8, decltype(tail)::value>(o, s, m, mx, l, vbase, v_row, kb, seqlen, half, ql, bad_key);
    }
  };
  if constexpr (kFp8) {
    for (int kb = 0; kb < key_end; kb += T::kKeyBlock) key_block(kb, kb + T::kKeyBlock > q0);
  } else {
    const int last_kb = (key_end - 1) / T::kKeyBlock * T::kKeyBlock;
    for (int kb = 0; kb < last_kb; kb += T::kKeyBlock) key_block(kb, BoolConst<false>{});
    key_block(last_kb, BoolConst<true>{});
  }

  if constexpr (kFp8) xdl16_read_guard();  // the epilogue reads the last PV MFMA's results
  const float l_row = l + partner(l, lane);
  // The rows at or after the smallest key with a non-finite V element saw it: NaN output.
  // The wave-wide minimum is taken only when some lane found one (never, on finite inputs).
  bool saw_bad_v = false;
  if (__builtin_amdgcn_ballot_w64(bad_key != 0x7FFFFFFF) != 0) {
#pragma unroll
    for (int d = 1; d < 64; d <<= 1)
      bad_key = min(bad_key, __builtin_amdgcn_ds_bpermute((lane ^ d) << 2, bad_key));
    saw_bad_v = qrow >= bad_key;
  }
  if (!qvalid) return;
  const float inv = saw_bad_v ? __builtin_nanf("") : vd * __builtin_amdgcn_rcpf(l_row);
  const gptr<uint16_t> orow = global<uint16_t>(a.out) + b * a.o_stride[0] +
                   static_cast<int64_t>(qrow) * a.o_stride[1] + h * a.o_stride[2];
#pragma unroll
  for (int j = 0; j < kDv / 32; ++j)
#pragma unroll
    for (int v = 0; v < 16; ++v) orow[key_of(32 * j, v, half)] = static_cast<uint16_t>(bf16_rne(o[j][v] * inv));
  if (a.lse != 0 && half == 0) {
    // Natural-log sum-exp of the scaled scores: ln 2 * (max + log2(sum 2^(x - max))).
    global<float>(a.lse)[(static_cast<int64_t>(b) * a.heads + h) * seqlen + qrow] =
        0.69314718055994531f * (m + __builtin_amdgcn_logf(l_row));
  }
}

template <bool kFp8, int kDqk>
__device__ void attn_fwd() {
  const auto& a = *kernargs();
  const gptr<const uint32_t> jt = global<const uint32_t>(a.job_table);
  const uint32_t grid = jt[0];
  const uint32_t n_tiles = jt[1];
  const uint32_t wg = blockIdx.x;
  const int lane = threadIdx.x & 63;
  // The wave index is uniform; readfirstlane lets the compiler keep it in a scalar register.
  const int wave = __builtin_amdgcn_readfirstlane(static_cast<int>(threadIdx.x) >> 6);
  const uint32_t begin = jt[2 + wg];
  const uint32_t end = jt[3 + wg];
  // A job is two consecutive tile words (tile_a, tile_b); walking the words of this
  // workgroup's jobs in order runs tile_a then tile_b of each, with one inlined call site.
  for (uint32_t word = 2 * begin; word < 2 * end; ++word) {
    const uint32_t t = jt[3 + grid + word];
    if (t != kNoTileWord) attn_tile<kFp8, kDqk>(t, n_tiles, wave, lane);
  }
}

}  // namespace zyfa::kernels
