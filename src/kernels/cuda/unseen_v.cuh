// Non-finite values of v that a row cannot see must not reach it. In a masked key block (the
// causal edge, or keys past the sequence: another varlen sequence's rows) a masked
// probability is 0, and 0 times NaN or Inf is NaN, so the wgmma of P v would spread a NaN/Inf
// of a key a row cannot see into that row. Before a masked block's P v, the 256 consumer
// threads zero every non-finite element of its v tile in shared memory and find the smallest
// key below the sequence's length that had one; the rows that see that key are written as
// NaN (docs/numerics.md). Keys past the tensor need nothing: the TMA fills them with zeros.
//
// A tile has at most two masked blocks; keys are counted from the first key of the lower one
// (0..255). The smallest reaches every consumer thread through one of two shared words (by
// tile parity), written with atomicMax as (tile generation << 8 | 255 - key): no word needs
// resetting, a thread reads only its own tile's entry, and a word is written again two tiles
// later, after the named barrier of the tile between, which every reader has passed.
#pragma once

#include <cstdint>

#include "kernels/cuda/ptx.cuh"

namespace zyfa::cuda::detail {

inline constexpr uint32_t kUnseenBarrier = 3;  // named barriers 1 and 2 are the ping-pong turns

__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void sts128(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// BF16 pair: marks 0xFFFF in each half whose exponent is all ones.
__device__ __forceinline__ uint32_t bad_bf16x2(uint32_t w) {
  const uint32_t lo = (w & 0x7F80u) == 0x7F80u ? 0x0000FFFFu : 0u;
  const uint32_t hi = (w & 0x7F800000u) == 0x7F800000u ? 0xFFFF0000u : 0u;
  return lo | hi;
}
// e4m3fn: 0x80 in each byte that is 0x7F or 0xFF (its only NaNs; no Inf).
__device__ __forceinline__ uint32_t bad_e4m3x4(uint32_t w) { return ((w & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u; }

inline constexpr int kUnseenNone = 256;  // no recorded key

// Zeroes the non-finite elements of the masked v block at `tile` (shared address) and records
// the smallest key below `key_limit` (keys of the block) that had one, as key_base + its
// offset in the block. Called by all 256 consumer threads (t = 0..255) at the same point;
// `gen` numbers the tiles of this CTA, increasing, from 1.
template <class Cfg>
__device__ __forceinline__ void unseen_v_sanitize(uint32_t tile, uint32_t flags, uint32_t gen, int t, int key_base,
                                                  int key_limit) {
  int bad_key = Cfg::kBlockN;
  // A first pass only asks whether any element of the thread's units is non-finite, in a few
  // instructions a unit (a non-finite v is rare; the zeroing pass below, per word, took about
  // four times as many): FP8, bit 7 of a byte of (x & 0x7F) + 1 is set for 0x7F and 0xFF,
  // e4m3fn's NaNs, alone; BF16, the largest magnitude of the 16-bit halves reaches 0x7F80
  // (exponent all ones: Inf, NaN).
  uint32_t acc = 0;
  constexpr int kUnits = Cfg::kIsFp8 ? Cfg::kDv * Cfg::kBlockN / 16 : Cfg::kBlockN * Cfg::kDv * 2 / 16;
#pragma unroll
  for (int i = 0; i < kUnits / 256; ++i) {
    const uint4 v = lds128(tile + 16 * (t + 256 * i));
    if constexpr (Cfg::kIsFp8) {
      acc |= ((v.x & 0x7F7F7F7Fu) + 0x01010101u) | ((v.y & 0x7F7F7F7Fu) + 0x01010101u);
      acc |= ((v.z & 0x7F7F7F7Fu) + 0x01010101u) | ((v.w & 0x7F7F7F7Fu) + 0x01010101u);
    } else {
      acc = __vimax3_u16x2(acc, __vimax3_u16x2(v.x & 0x7FFF7FFFu, v.y & 0x7FFF7FFFu, v.z & 0x7FFF7FFFu),
                           v.w & 0x7FFF7FFFu);
    }
  }
  const bool any = Cfg::kIsFp8 ? (acc & 0x80808080u) != 0u : ((acc & 0xFFFFu) >= 0x7F80u || acc >= 0x7F800000u);
  if (!any) {
    // nothing to zero or record; the barrier below is still met
  } else if constexpr (Cfg::kIsFp8) {
    // vᵀ rows d = 0..127 of 128 keys (128 bytes, 128 B swizzle: the 16-byte unit u of row r
    // sits at u ^ (r % 8)); 4 units per thread. A unit holds the 16 keys of one group in the
    // pre-pass's order (transpose_v.cu): word c holds keys 2c, 2c + 1, 2c + 8, 2c + 9.
#pragma unroll
    for (int i = 0; i < Cfg::kDv * Cfg::kBlockN / 16 / 256; ++i) {
      const int unit = t + 256 * i, row = unit / 8, key0 = 16 * ((unit % 8) ^ (row % 8));
      uint4 v = lds128(tile + 16 * unit);
      uint32_t* w = reinterpret_cast<uint32_t*>(&v);
      int first = Cfg::kBlockN;
      bool marked = false;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint32_t m = bad_e4m3x4(w[k]);
        marked = marked || m != 0u;
        if (m != 0u) {
          // The smallest marked key of this word that counts (its bytes hold keys 2k, 2k + 1,
          // 2k + 8, 2k + 9 of the group).
#pragma unroll
          for (int byte = 0; byte < 4; ++byte) {
            const int key = key0 + 2 * k + (byte & 1) + 8 * (byte >> 1);
            if ((m >> (8 * byte + 7)) & 1u) first = key < key_limit ? min(first, key) : first;
          }
        }
        w[k] &= ~(m | (m - (m >> 7)));  // 0xFF in each marked byte
      }
      if (marked) sts128(tile + 16 * unit, v);
      bad_key = min(bad_key, first);
    }
  } else {
    // [d chunk of 64][128 keys][128 bytes]: the swizzle moves units within a key's row only.
#pragma unroll
    for (int i = 0; i < Cfg::kBlockN * Cfg::kDv * 2 / 16 / 256; ++i) {
      const int unit = t + 256 * i, key = (unit % (Cfg::kBlockN * 8)) / 8;
      uint4 v = lds128(tile + 16 * unit);
      const uint32_t m = bad_bf16x2(v.x) | bad_bf16x2(v.y) | bad_bf16x2(v.z) | bad_bf16x2(v.w);
      if (m != 0u) {
        v.x &= ~bad_bf16x2(v.x);
        v.y &= ~bad_bf16x2(v.y);
        v.z &= ~bad_bf16x2(v.z);
        v.w &= ~bad_bf16x2(v.w);
        sts128(tile + 16 * unit, v);
        if (key < key_limit) bad_key = min(bad_key, key);
      }
    }
  }
  const uint32_t flag = flags + 4 * (gen & 1u);
  if (bad_key < Cfg::kBlockN) {
    const uint32_t entry = (gen << 8) | static_cast<uint32_t>(255 - (key_base + bad_key));
    asm volatile("red.shared.max.u32 [%0], %1;" ::"r"(flag), "r"(entry) : "memory");
  }
  // The zeroed elements are read next by wgmma (the async proxy).
  ptx::fence_proxy_async();
  ptx::named_barrier_sync(kUnseenBarrier, 256);
}

// The smallest recorded key (key_base + offset) of tile `gen`'s masked blocks, kUnseenNone
// when none; read in the epilogue (nothing stays live through the key loop), which comes
// before this thread reaches the barrier of tile gen + 1, so the word still holds this tile.
__device__ __forceinline__ int unseen_v_first_key(uint32_t flags, uint32_t gen) {
  uint32_t entry;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(entry) : "r"(flags + 4 * (gen & 1u)) : "memory");
  return (entry >> 8) == (gen & 0xFFFFFFu) ? 255 - static_cast<int>(entry & 255u) : kUnseenNone;
}

}  // namespace zyfa::cuda::detail
