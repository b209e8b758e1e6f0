// BF16 causal attention forward for gfx950, d_qk = 128 or 192 (d_v = 128): 8 waves in
// ping-pong. The body of attn_fwd_bf16_d128_gfx950 and attn_fwd_bf16_d192_gfx950, a template
// on d_qk (the two .hip files instantiate it); only K's LDS rows and Q^T's registers differ.
//
// A workgroup takes a query tile of 256 rows; wave w owns rows 32w' .. 32w' + 31 of it, w' = w ^ 4
// (row_block: waves 0-3 the upper half, see early_q; FP8 d 192/128, w' = w). K and V
// stream through LDS in 64-key blocks, triple-buffered, loaded by all 512 threads straight
// from global memory into LDS (LDS DMA) two blocks ahead; only V blocks on the diagonal, which
// must be sanitized, pass through registers. Waves 0-3 and 4-7 share the four SIMDs, one of each
// per SIMD, and run half an iteration apart: every iteration is a matrix phase (P·V of block j,
// then the scores of block j + 1: two score tiles in flight) and a vector phase (softmax of
// block j + 1), with one workgroup barrier. Waves 0-3 run matrix phase j, then their softmax
// of block j + 1, then the barrier; waves 4-7 run their softmax of block j first, then matrix
// phase j, then the barrier. So on each SIMD one wave's MFMAs run while the other wave
// computes its softmax, and the barrier realigns them once an iteration. The matrix phase
// runs at the highest priority (s_setprio) so its MFMAs issue ahead of the other wave's VALU,
// the trailing waves' softmax above the leading waves' (it holds up a matrix phase; the
// other has until the barrier), and its LDS reads are scheduled three MFMAs ahead of their
// use. The steady iterations (all but a tile's last few) run a copy of the loop body without
// the tests, the trailing waves issuing their loads before their softmax.
//
// Layouts are those of the baseline kernel (attn_fwd_common.h): scores transposed,
// S^T = K Q^T with K the A operand of v_mfma_f32_32x32x16_bf16, so lane l holds query l % 32
// and keys 8g + 4h + r (h = l / 32) of each 32-key block; P goes from registers into the B
// operand of O^T += V^T P^T, and V^T comes from LDS through ds_read_b64_tr_b16, which hands
// each lane 4 consecutive keys of its own output column.
//
// LDS rows are 256 bytes (one key, all 64 banks); 16-byte chunk c of row r sits at position
// c ^ swz(r), swz(r) = the row's bits 0-1 and 2-3 swapped. For d_qk = 192, a K block is two
// parts: d 0-127 in such rows, then d 128-191 in rows of 128 bytes (8 KiB), chunk c of row r
// at position c ^ swz_hi(r), swz_hi(r) = the row's bits 1-3: the 16 rows of a read phase are 8
// pairs of rows that share 256 bytes of banks, at 8 different positions, so also distinct. Every phase of the LDS accesses then
// falls on distinct banks: the 16 K rows of a ds_read_b128 phase (swz is a bijection of the
// low four bits), the 4 rows x 4 chunks of a ds_read_b64_tr_b16 phase (4 consecutive rows
// give 4 different high position bits; with the row's low bits alone, 4-way conflicts), and
// the 16 chunks of a row that a loader writes.
//
// LDS ordering (barriers numbered from the one that ends the prologue, #0; block i in buffer
// i % 3): every wave runs matrix phase j between barriers #j and #j+1. There it reads K_{j+1}
// and V_j, starts the loads of K_{j+3} (over K_j) and V_{j+2} (over V_{j-1}), and writes a
// staged diagonal V_{j+1} (over V_{j-2}). K_j and V_{j-1} were last read in matrix phase
// j - 1, before #j, so no load overtakes a read. Each wave waits for its loads of iteration j
// at the end of its matrix phase j + 1, before #j+2; nobody reads K_{j+3} or V_{j+2} before
// #j+2 (matrix phase j + 2), and nobody touches their buffers in between. The staged V_{j+1}
// is written before #j+1 and first read after it. (BF16: the last matrix phase, n - 1, ends
// at the next tile's prologue barrier instead; the epilogue between stages the output in
// each wave's own LDS area.) BF16 d 128 (kSpareV0): V_0 has a fourth buffer of its own,
// read only in matrix phase 0, so the next tile's V_0 loads during the last iteration (every
// wave is then past #1); a diagonal V_0 is sanitized in place in the prologue.
//
// Numerics: base-2 online softmax with lazy rescaling: the reference maximum m of a row moves
// only when a block's maximum exceeds it by more than 0.5 in base-2 units (log2 of the
// probability ratio), so P <= 2^0.5; the output and row sum are rescaled only then, and the
// whole 64-register rescale is skipped when no row of the wave moved. P is rounded (RNE) to
// BF16 for the MFMA and the row sum adds the same rounded values, so each output row is a
// weighted average of V rows. A negative softmax scale is folded into Q (a sign flip, exact),
// so that the scores are scaled by |scale| > 0.
// Non-finite V elements that some row of the tile must not see (keys on the diagonal blocks)
// are read as 0; the rows at or after the smallest such key are made NaN, as in the baseline.
#pragma once

#include "../varlen/varlen_jobs.h"
#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "attn_fwd_common.h"
#include "attn_fwd_lengths_args.h"

namespace zyfa::kernels {
namespace {

using namespace bf16_d128_gfx950;

// What differs between the head dims: the scores' MFMA steps (16 d each), the first 8 of them
// from the 256-byte part of a K row; the LDS-DMA loads of a K block per wave (one 1 KiB
// instruction each: 2 for the 256-byte part, 1 for the 128-byte part).
template <int kDqk>
struct Dims {
  static_assert(kDqk == 128 || kDqk == 192, "d_qk 128 or 192");
  static constexpr int kSteps = kDqk / 16;
  static constexpr int kLoSteps = 8;
  static constexpr bool kHasHi = kDqk > 128;
  static constexpr int kKBlockBytes = kKeyBlock * kDqk * 2;
  static constexpr int kKLoads = kHasHi ? 3 : 2;
};
inline constexpr int kHiRowBytes = 64 * 2;

typedef __attribute__((ext_vector_type(4))) short i16x4;
typedef __attribute__((ext_vector_type(2))) float f32x2;
typedef __attribute__((ext_vector_type(2))) __bf16 bf16x2;
template <typename T>
using lptr = __attribute__((address_space(3))) T*;

// V first: an LDS instruction's offset field holds 16 bits, so a read whose buffer and row
// offsets sum to less than 64 KiB needs no address add. The P·V phase reads V 32 times a block,
// the scores K 16 (d 128) or 24 times: V's three buffers take the low 48 KiB (K behind them,
// its reads' address registers holding K's offset, see k_read; before that K's buffers from
// 64 KiB on took an add per read, and V's before them).
// Each wave's staging area for its output (store_rows_by_lines): half of its rows' bytes.
inline constexpr int kOutStageBytes = kWaveRows * 128;
template <int kDqk>
struct Lds {
  uint8_t v[3][kBlockBytes];
  uint8_t k[3][Dims<kDqk>::kKBlockBytes];
  // Apart from the K/V buffers, so that a wave's epilogue needs no barrier after the last
  // iteration (see attn_tile).
  uint8_t out[kWaves][kOutStageBytes];
  uint32_t bad_key;  // smallest key of the diagonal blocks with a non-finite V element
  // d 128: V block 0 of a tile (Bf16Kernel::kSpareV0), apart from the three buffers, so that
  // the next tile's can load during the last iteration, whatever buffer that reads. (d 192/128
  // has no room left: 16 bytes, unused.)
  // (256-byte aligned: its offset from V's first buffer is added to a read's lane address,
  // whose XOR with the chunk bits 5-7 it must not carry into; see pv.)
  alignas(256) uint8_t v0[kDqk == 128 ? kBlockBytes : 16];
};

// RNE to BF16 by the hardware conversion (v_cvt_pk_bf16_f32).
// Swizzle of the 16-byte chunks of LDS row r (see the header).
__device__ inline constexpr int swz(int r) { return ((r & 3) << 2) | ((r >> 2) & 3); }
// Swizzle of the 16-byte chunks of row r of the 128-byte part of K (d_qk = 192).
__device__ inline constexpr int swz_hi(int r) { return (r >> 1) & 7; }

__device__ inline uint32_t pack_bf16(float a, float b) {
  return __builtin_bit_cast(uint32_t, __builtin_convertvector(f32x2{a, b}, bf16x2));
}

// This wave's LDS accesses complete, then the workgroup barrier. Global loads stay in flight
// (a fence would wait for them). The scheduling barriers keep each phase's work on its side.
__device__ __forceinline__ void barrier() {
  __builtin_amdgcn_sched_barrier(0);
  asm volatile("s_waitcnt lgkmcnt(0)\n\ts_barrier" ::: "memory");
  __builtin_amdgcn_sched_barrier(0);
}

// Waits until at most n of this wave's vector memory operations are outstanding (they retire
// in order). The LDS-DMA loads below are inline assembly, so the compiler does not count them.
// n is 0, 2 (a V block), kKLoads (a K block) or kKLoads + 2; for d_qk = 128, 0, 2 or 4.
template <int kKLoads>
__device__ __forceinline__ void wait_vmcnt(int n) {
  if (kKLoads == 3 && n >= 5)
    asm volatile("s_waitcnt vmcnt(5)" ::: "memory");
  else if (n >= 4)
    asm volatile("s_waitcnt vmcnt(4)" ::: "memory");
  else if (kKLoads == 3 && n >= 3)
    asm volatile("s_waitcnt vmcnt(3)" ::: "memory");
  else if (n >= 2)
    asm volatile("s_waitcnt vmcnt(2)" ::: "memory");
  else
    asm volatile("s_waitcnt vmcnt(0)" ::: "memory");
}

// Until at most kQ + a K block's loads (k) + a V block's (v) of this wave's vector memory
// operations are outstanding: kQ, the next tile's Q^T loads (attn_tile's first tail
// iteration), or 0.
template <int kQ, int kKLoads>
__device__ __forceinline__ void wait_vmcnt_past_q(bool k, bool v) {
  if (k && v)
    asm volatile("s_waitcnt vmcnt(%0)" ::"n"(kQ + kKLoads + 2) : "memory");
  else if (k)
    asm volatile("s_waitcnt vmcnt(%0)" ::"n"(kQ + kKLoads) : "memory");
  else if (v)
    asm volatile("s_waitcnt vmcnt(%0)" ::"n"(kQ + 2) : "memory");
  else
    asm volatile("s_waitcnt vmcnt(%0)" ::"n"(kQ) : "memory");
}

// 64 rows of K or V (16 KiB) from global memory straight into LDS (global_load_lds_dwordx4):
// each instruction of a wave fills 1 KiB of LDS, M0 + 16 x lane, so wave w writes rows
// 4w + 32i + lane / 16 (i = 0, 1) at position lane % 16, and loads the global chunk that the
// swizzle puts there. The loads go out as inline assembly: the compiler would otherwise make
// every LDS read wait for every LDS-DMA load in flight (it cannot tell the buffers apart), and
// the prefetch two blocks ahead would be lost. s_nop 0: the one wait state between the
// compiler's SALU write of M0 and an LDS-DMA load that reads it.
__device__ __forceinline__ void dma_block(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                          int seqlen, int wave, int lane) {
  const uint32_t chunk = static_cast<uint32_t>((lane & 15) ^ swz(4 * wave + (lane >> 4)));
  // Computed where it is used: hoisted out of the key loop, the six buffers' M0 values of
  // each of K and V would hold 12 scalar registers (spilled).
  uint32_t first = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(buf)) + 4 * wave * kRowBytes;
  asm volatile("" : "+s"(first));
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint32_t key = static_cast<uint32_t>(min(kb + 4 * wave + 32 * i + (lane >> 4), seqlen - 1));
    const uint32_t voff = key * row_bytes + 16u * chunk;
    const uint32_t m0 = first + 32 * i * kRowBytes;
    asm volatile("s_nop 0\n\tglobal_load_lds_dwordx4 %0, %1" ::"v"(voff), "s"(base), "{m0}"(m0) : "memory");
  }
}

// 128 bytes of each of 64 rows (8 KiB; BF16: the part d 128-191 of K) into LDS, one
// instruction a wave: wave w writes rows 8w + lane / 8 at position lane % 8 and loads the chunk
// that swz_hi puts there. The bytes' offset from the row's start, col, goes into the lane
// offset (no second base).
__device__ __forceinline__ void dma_block_hi(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                             uint32_t col, int kb, int seqlen, int wave, int lane) {
  const int row = 8 * wave + (lane >> 3);
  const uint32_t chunk = static_cast<uint32_t>((lane & 7) ^ swz_hi(row));
  uint32_t m0 = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(buf)) + 8 * wave * kHiRowBytes;
  asm volatile("" : "+s"(m0));
  const uint32_t key = static_cast<uint32_t>(min(kb + row, seqlen - 1));
  const uint32_t voff = key * row_bytes + col + 16u * chunk;
  asm volatile("s_nop 0\n\tglobal_load_lds_dwordx4 %0, %1" ::"v"(voff), "s"(base), "{m0}"(m0) : "memory");
}

// A whole K block: the 256-byte part of its rows, then (d_qk = 192) the 128-byte part.
template <int kDqk>
__device__ __forceinline__ void dma_k_block(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                            int seqlen, int wave, int lane) {
  dma_block(buf, base, row_bytes, kb, seqlen, wave, lane);
  if constexpr (Dims<kDqk>::kHasHi)
    dma_block_hi(buf + kBlockBytes, base, row_bytes, kRowBytes, kb, seqlen, wave, lane);
}

// 64 rows of K or V (16 KiB) to registers: thread t takes 16-byte chunk t % 16 of rows t / 16
// and t / 16 + 32. Rows past the sequence read the last row (never used unmasked). The row
// offset is 32-bit (the host sends larger K and V views to the baseline kernel): a uniform
// 64-bit base plus a 32-bit lane offset takes two registers fewer per address. kAsm (BF16
// d 192/128): the loads are inline assembly and their user waits for them explicitly
// (Bf16Kernel::wait_staged): the compiler's own wait counted neither the LDS-DMA loads nor
// the next tile's Q^T loads issued after them, and so waited for those too (the emulator
// faults on a register read while its load is in flight). At d 128 that was slower (S 2K
// 936.2 -> 933.2 TFLOP/s predicted).
struct Stage {
  u32x4 x[2];
};

template <bool kAsm>
__device__ __forceinline__ void load_block(Stage& st, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                           int seqlen, int tid) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint32_t key = static_cast<uint32_t>(min(kb + (tid >> 4) + 32 * i, seqlen - 1));
    const uint32_t voff = key * row_bytes + 16u * static_cast<uint32_t>(tid & 15);
    if constexpr (kAsm)
      asm volatile("global_load_dwordx4 %0, %1, %2" : "=v"(st.x[i]) : "v"(voff), "s"(base) : "memory");
    else
      st.x[i] = *global_cast<const u32x4>(base + voff);
  }
}

__device__ __forceinline__ void store_block(lptr<uint8_t> buf, const Stage& st, int tid) {
  const int r = tid >> 4, c = tid & 15;
#pragma unroll
  for (int i = 0; i < 2; ++i)
    *reinterpret_cast<lptr<u32x4>>(buf + (r + 32 * i) * kRowBytes + ((c ^ swz(r)) << 4)) = st.x[i];
}

// The chunks of a block in LDS that store_block writes, back into registers. A block loaded by
// LDS DMA (dma_block) puts in each thread's chunks exactly the bytes that its own loads
// brought: once the thread's loads are complete it reads them without a barrier.
__device__ __forceinline__ void read_block(Stage& st, lptr<uint8_t> buf, int tid) {
  const int r = tid >> 4, c = tid & 15;
#pragma unroll
  for (int i = 0; i < 2; ++i)
    st.x[i] = *reinterpret_cast<lptr<u32x4>>(buf + (r + 32 * i) * kRowBytes + ((c ^ swz(r)) << 4));
}

// V of a diagonal block: keys past the sequence become 0, and so do non-finite elements, whose
// smallest key goes to the LDS slot (rows at or after it see it and become NaN).
__device__ __forceinline__ void sanitize_v(Stage& st, int kb, int seqlen, int tid, lptr<uint32_t> bad_slot) {
  // A first pass only asks whether the lane's 16 elements hold a non-finite one, in 2.5 VALU
  // ops a word instead of the zeroing pass's ~8 (non-finite V is rare): bit 15 of a half's
  // (x & 0x7F80) + 0x80 is set for an exponent of all ones (Inf, NaN) alone, and the halves
  // cannot carry into each other. A lane with a key past the sequence (its second, 32 keys
  // on) always takes the zeroing pass.
  uint32_t acc = 0;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int w = 0; w < 4; ++w) acc |= (st.x[i][w] & 0x7F807F80u) + 0x00800080u;
  // (a wave-wide decision: a per-lane branch saved EXEC in scalar registers the d 192/128
  // kernel does not have to spare)
  if (__builtin_amdgcn_ballot_w64((acc & 0x80008000u) != 0u || kb + (tid >> 4) + 32 >= seqlen) == 0) return;
  int bad_key = 0x7FFFFFFF;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int key = kb + (tid >> 4) + 32 * i;
    const bool past = key >= seqlen;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      uint32_t x = st.x[i][w];
      const bool bad_lo = (x & 0x7F80u) == 0x7F80u;
      const bool bad_hi = (x & 0x7F800000u) == 0x7F800000u;
      bad_key = (bad_lo || bad_hi) && !past ? min(bad_key, key) : bad_key;
      x = bad_lo || past ? x & 0xFFFF0000u : x;
      x = bad_hi || past ? x & 0x0000FFFFu : x;
      st.x[i][w] = x;
    }
  }
  if (bad_key != 0x7FFFFFFF) __hip_atomic_fetch_min(bad_slot, static_cast<uint32_t>(bad_key), __ATOMIC_RELAXED,
                                                    __HIP_MEMORY_SCOPE_WORKGROUP);
}

// A lane's value and that of its partner lane (l ^ 32, the same query row) in some order, by
// v_permlane32_swap: one VALU op instead of an LDS round trip (ds_bpermute). Lanes l and l ^ 32
// get the same pair, swapped, so a commutative reduction of it agrees in both.
__device__ __forceinline__ f32x2 both_halves(float x) {
  const auto r = __builtin_amdgcn_permlane32_swap(float_to_bits(x), float_to_bits(x), false, true);
  return f32x2{bits_to_float(r[0]), bits_to_float(r[1])};
}

template <int kDqk>
struct Wave {
  int lane, half, ql, qrow;
  f32x2 sc;         // |softmax scale| * log2(e), twice (the operand of v_pk_mul_f32)
  // LDS byte offsets of this lane's reads for step / column block 0; the others differ in the
  // swizzled chunk bits only (an XOR, see scores and pv). kaddr_hi: the K rows' 128-byte part.
  uint32_t kaddr;
  uint32_t kaddr_hi;
  uint32_t vaddr;
  f32x16 o[4];      // O^T, dv = 32 jd + 8g + 4h + r in register 4g + r
  f32x16 s[2];      // scores of the block in flight
  f32x16 zero;      // d 128: zeros, the scores' first accumulator (opaque, kept in registers)
  u32x4 p[2][2];    // P of the block to multiply, BF16 pairs: [32-key half][MFMA t]
  float m;
  f32x2 l;          // row sum of this lane's keys, in two halves (added at the end)
  int q0;           // the wave's first query row (uniform)
};

// The schedule of a run of n MFMAs that take r LDS reads each: the reads of the first kAhead
// MFMAs first, then each MFMA followed by the reads of the one kAhead later, so that every
// read has kAhead MFMAs (32 clocks each) to return in. The compiler's own order issued most
// reads just before their MFMA and waited for them there. Three ahead is the timing model's
// best (2: lgkmcnt waits 19% of wave time at d 192, S 16K; 4 and 6: slightly slower, and
// each read ahead holds its registers longer).
inline constexpr int kAhead = 3;
// Issue priorities (s_setprio): the matrix phases above the trailing waves' softmax above the
// leading waves' softmax (see attn_tile).
inline constexpr int kPrioMatrix = 2;
inline constexpr int kPrioTrailSoftmax = 1;
// The kinds of key-loop iteration (attn_tile).
inline constexpr int kSteadyIter = 0, kGeneralIter = 1, kTailIter = 2;
// extra: reads for MFMAs issued outside the groups first (inline assembly, see scores).
template <int n, int r, int extra = 0>
__device__ __forceinline__ void sched_reads_ahead() {
  __builtin_amdgcn_sched_group_barrier(0x100, (kAhead + extra) * r, 0);  // 0x100: LDS reads
#pragma unroll
  for (int i = 0; i < n - kAhead; ++i) {
    __builtin_amdgcn_sched_group_barrier(0x008, 1, 0);  // 0x008: MFMA
    __builtin_amdgcn_sched_group_barrier(0x100, r, 0);
  }
  __builtin_amdgcn_sched_group_barrier(0x008, kAhead, 0);
}

// As sched_reads_ahead, and `tail` reads (the next phase's first) among the last MFMAs: kEarly,
// one more with each of the last `tail` groups of reads; otherwise one after each of the last
// `tail` MFMAs but the first of them (tail = kAhead: one before each of the last kAhead), which
// have no reads of their own (d 192/128: its scores' first MFMAs are inline assembly, which the
// scheduler places on its own as soon as their reads are issued, so the reads go last there).
template <int n, int r, int tail, bool kEarly>
__device__ __forceinline__ void sched_reads_ahead_tail() {
  static_assert(tail <= kAhead && tail <= n - kAhead, "one read after each of the last MFMAs");
  __builtin_amdgcn_sched_group_barrier(0x100, kAhead * r, 0);
#pragma unroll
  for (int i = 0; i < n - kAhead - (kEarly ? tail : 0); ++i) {
    __builtin_amdgcn_sched_group_barrier(0x008, 1, 0);
    __builtin_amdgcn_sched_group_barrier(0x100, r, 0);
  }
  if constexpr (kEarly) {
#pragma unroll
    for (int i = 0; i < tail; ++i) {
      __builtin_amdgcn_sched_group_barrier(0x008, 1, 0);
      __builtin_amdgcn_sched_group_barrier(0x100, r + 1, 0);
    }
    __builtin_amdgcn_sched_group_barrier(0x008, kAhead, 0);
  } else {
    __builtin_amdgcn_sched_group_barrier(0x008, kAhead - tail, 0);
#pragma unroll
    for (int i = 0; i < tail; ++i) {
      __builtin_amdgcn_sched_group_barrier(0x100, 1, 0);
      __builtin_amdgcn_sched_group_barrier(0x008, 1, 0);
    }
  }
}

// Q^T as the B operand, d = 16c + 8h .. + 7 of query ql in register c (held by the caller
// across tiles: the next tile's rows are loaded during the last iteration of this one).
template <int kDqk>
using QRegs = u32x4[Dims<kDqk>::kSteps];

// S^T = K Q^T for one 64-key block in LDS.
// The first MFMA of a chain with an inline-constant zero accumulator (inline assembly: the
// compiler copies a zero accumulator into registers first, 8 v_mov_b64 a block on the VALU
// that the other wave's softmax runs on). The compiler counts it as neither an MFMA nor a
// hazard source: its result is read only by the chain's next MFMA, as its exactly
// overlapping accumulator, which needs no wait states. The result is early-clobber, as the
// compiler makes it for its own MFMAs with results over 128 bits: not over the operands.
__device__ __forceinline__ f32x16 mfma_from_zero(bf16x8 a, bf16x8 b) {
  f32x16 d;
  asm("v_mfma_f32_32x32x16_bf16 %0, %1, %2, 0" : "=&v"(d) : "v"(a), "v"(b));
  return d;
}

// LDS offset of the first K buffer (Lds: behind V's three).
inline constexpr uint32_t kKOffset = 3 * kBlockBytes;
static_assert(offsetof(Lds<128>, k) == kKOffset && offsetof(Lds<192>, k) == kKOffset);
// The K read of score MFMA (step c, half sb).
template <int kDqk>
__device__ __forceinline__ u32x4 k_read(const Wave<kDqk>& w, lptr<uint8_t> kbuf, int c, int sb,
                                        uint32_t kadd = 0) {
  // Chunk 2c + h of row ql, swizzled: (2c + h) ^ x = 2c ^ (h ^ x), so step c flips bits 5-7
  // (bits 5-6 in the 128-byte part, its step c - 8 = c & 7). w.kaddr and w.kaddr_hi also hold
  // the first K buffer's LDS offset (kKOffset; kaddr_hi that of its 128-byte part), so that
  // what is left, the buffer's place among the three and the half, fits the read's 16-bit
  // offset field (with the K buffers from 64 KiB on in that field, each read took a v_or).
  // kadd: the buffer's offset from the first when it is not a constant (a multiple of 256
  // bytes, so it commutes with the XOR of bits 5-7): one add a block for the lane's address
  // instead of one a read.
  const uint32_t at = c < Dims<kDqk>::kLoSteps ? ((w.kaddr + kadd) ^ (c << 5)) + sb * 32 * kRowBytes
                                               : ((w.kaddr_hi + kadd) ^ ((c & 7) << 5)) + sb * 32 * kHiRowBytes;
  return *reinterpret_cast<lptr<u32x4>>(kbuf - kKOffset + at);
}
// The first kPreReads score MFMAs' K reads (in their order: step 0 of both halves, then step
// 1's), issued by the caller among the last P·V MFMAs (pv_scores). d 192/128: three (with two,
// the second step's first score MFMA waited for its read, issued only after the last P·V
// MFMA: S 2K 1004.6 TFLOP/s predicted against 1010.0, lgkmcnt 5.7% -> 4.0% of wave time);
// d 128: three was no faster than two.
template <int kDqk>
inline constexpr int kPreReads = kDqk == 128 ? 2 : 3;

// kPre: the first kPre reads given (pre), issued by the caller.
template <int kDqk, int kPre = 0>
__device__ __forceinline__ void scores(Wave<kDqk>& w, const QRegs<kDqk>& q, lptr<uint8_t> kbuf,
                                       const u32x4* pre = nullptr, uint32_t kadd = 0) {
  using D = Dims<kDqk>;
  // The two 32-key halves' MFMAs alternate: two independent accumulation chains.
#pragma unroll
  for (int c = 0; c < D::kSteps; ++c) {
#pragma unroll
    for (int sb = 0; sb < 2; ++sb) {
      const u32x4 k = 2 * c + sb < kPre ? pre[2 * c + sb] : k_read(w, kbuf, c, sb, kadd);
      if (kDqk != 128 && c == 0)
        w.s[sb] = mfma_from_zero(__builtin_bit_cast(bf16x8, k), __builtin_bit_cast(bf16x8, q[c]));
      else
        w.s[sb] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, k),
                                                          __builtin_bit_cast(bf16x8, q[c]),
                                                          kDqk == 128 && c == 0 ? w.zero : w.s[sb], 0, 0, 0);
    }
  }
  if constexpr (kDqk == 128)
    sched_reads_ahead<2 * D::kSteps, 1, -kPre>();
  else
    sched_reads_ahead<2 * D::kSteps - 2, 1, 2 - kPre>();
}

// O^T += V^T P^T for one 64-key block in LDS. MFMA t of a 32-key half takes score registers
// 8t .. 8t + 7 as its slots: keys 16t + 4h + 0..3 and 16t + 8 + 4h + 0..3, the two quads that
// the two transposing reads deliver.
// kTail: also the first kTail K reads of the scores of kbuf into pre, one after each of the last
// MFMAs but the first (pv_scores). vadd, kadd: the V and K buffers' offsets from vbuf and kbuf
// when they are not constants (multiples of 256 bytes, see k_read).
template <int kDqk, int kTail = 0>
__device__ __forceinline__ void pv(Wave<kDqk>& w, lptr<uint8_t> vbuf, lptr<uint8_t> kbuf = nullptr,
                                   u32x4* pre = nullptr, uint32_t vadd = 0, uint32_t kadd = 0) {
  const uint32_t va = w.vaddr + vadd;
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int jd = 0; jd < 4; ++jd) {
        // Second quad: 8 rows on (row bit 3, so swizzle bit 1 of the chunk, byte bit 5);
        // column block jd: chunk + 4 jd (byte bits 6-7).
        const int off = (32 * sb + 16 * t) * kRowBytes;
        const i16x4 lo = __builtin_amdgcn_ds_read_tr16_b64_v4i16(
            reinterpret_cast<lptr<i16x4>>(vbuf + (va ^ (jd << 6)) + off));
        const i16x4 hi = __builtin_amdgcn_ds_read_tr16_b64_v4i16(
            reinterpret_cast<lptr<i16x4>>(vbuf + (va ^ (jd << 6) ^ (1 << 5)) + off + 8 * kRowBytes));
        const bf16x8 va = __builtin_bit_cast(bf16x8, __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7));
        w.o[jd] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(va, __builtin_bit_cast(bf16x8, w.p[sb][t]), w.o[jd], 0, 0,
                                                          0);
      }
#pragma unroll
  for (int i = 0; i < kTail; ++i) pre[i] = k_read(w, kbuf, i / 2, i % 2, kadd);
  if constexpr (kTail > 0)
    sched_reads_ahead_tail<16, 2, kTail, kDqk == 128>();
  else
    sched_reads_ahead<16, 2>();
}

// P·V of one block, then the scores of the next: the scores' first K reads go out among the
// last P·V MFMAs, which have none of their own left. After them (the scores' own pattern), the
// first score MFMAs waited for their reads: at S 8K, d 192/128, 2.4% and 1.0% of the waves'
// time on the waits before the two chains' first MFMAs (a per-pc count of the model's waits).
template <int kDqk>
__device__ __forceinline__ void pv_scores(Wave<kDqk>& w, const QRegs<kDqk>& q, lptr<uint8_t> vbuf,
                                          lptr<uint8_t> kbuf, uint32_t vadd = 0, uint32_t kadd = 0) {
  u32x4 pre[kPreReads<kDqk>];
  pv<kDqk, kPreReads<kDqk>>(w, vbuf, kbuf, pre, vadd, kadd);
  scores<kDqk, kPreReads<kDqk>>(w, q, kbuf, pre, kadd);
}

// Scores times the scale pair, rounded, in place (v_pk_mul_f32, two an instruction).
__device__ __forceinline__ void scale_scores(f32x16 (&s)[2], f32x2 sc) {
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; v += 2) {
      const f32x2 x = f32x2{s[sb][v], s[sb][v + 1]} * sc;
      s[sb][v] = x[0];
      s[sb][v + 1] = x[1];
    }
}

// The first half of the softmax of the scores of block jb (keys 64 jb .. 64 jb + 63), the
// same for every element type: masked, scaled, the row's maximum of the block (returned) and
// the lazy rescale of m, the row sum and the output. kMask false: the caller knows that every
// row of the wave sees the whole block (no test, no branch). kScale false: the scores are left
// unscaled (the caller folds the scale into its shift); the maximum and m are scaled values.
// kHalves: fixed lengths, the masked block's whole half without compares (see below; BF16:
// the FP8 d 192/128 kernel spilled with it).
// kFirst: the tile's first block, known at compile time: the sums start here (see below).
template <bool kAny, bool kMask = true, bool kScale = true, bool kHalves = false, bool kFirst = false, class W>
__device__ __forceinline__ float block_max_rescale(W& w, int jb) {
  const int kb = jb * kKeyBlock;
  // Only a block that reaches past the wave's first row holds keys some of its rows must not
  // see (keys past the sequence lie past every valid row, so in such a block too). The test
  // is uniform (a scalar branch around the selects, which rewrite the scores in place: a
  // second copy of the whole softmax made the register allocator spill).
  if (kMask && kb + kKeyBlock - 1 > w.q0) {
    // key_of(kb + 32 sb, v, h) <= qrow, with the lane's part on the right so that the
    // register's part is an inline constant (hoisted keys would take 32 registers).
    const int lim = w.qrow - kb - 4 * w.half;
    // Each compare and select takes 16 clocks (the select waits 2 wait states for the VCC the
    // compare writes). Fixed lengths: this is the wave's diagonal block, and its 32 rows are
    // one half of it (w.q0 - kb is 0 or 32, uniform), so one 32-key half is whole: none of it
    // seen by the lower rows, all of it by the upper ones; only the other half is compared.
    static_assert(!(kAny && kHalves), "fixed lengths only");
    const bool lower = kHalves && w.q0 == kb;
    const bool upper = kHalves && !lower;
#pragma unroll
    for (int sb = 0; sb < 2; ++sb) {
      if (sb == 1 && lower) {
#pragma unroll
        for (int v = 0; v < 16; ++v) w.s[sb][v] = -__builtin_inff();
      } else if (sb == 1 || !upper) {
#pragma unroll
        for (int v = 0; v < 16; ++v)
          w.s[sb][v] = key_of(32 * sb, v, 0) <= lim ? w.s[sb][v] : -__builtin_inff();
      }
    }
  }
  // Scaled scores rounded before the max, so that the row's largest one minus m is exactly 0
  // (an fma of the raw score against -m leaves the product's rounding error, up to 2^39 for
  // scores near 2^64, in the exponent). Unscaled (kScale false), the maximum is scaled once:
  // rounding is monotonic, so it is the same value.
  if constexpr (kScale) scale_scores(w.s, w.sc);
  float mx = w.s[0][0];
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; ++v) mx = fmaxf(mx, w.s[sb][v]);
  const f32x2 mxs = both_halves(mx);
  mx = fmaxf(mxs[0], mxs[1]);
  if constexpr (!kScale) mx *= w.sc[0];
  // The first block always moves m (from -inf): alpha = 0 clears nothing but zeros.
  const bool grow = mx > w.m + 0.5f;
  if constexpr (kFirst) {
    // The sums start at this block: set to zero rather than multiplied by alpha = 0, so the
    // tile's own zeroing of them is dead (a runtime test here, in the loop, spilled).
    if (grow) w.m = mx;
    // Opaque: a known zero row sum became v_pk_add_f32 with an inline constant, whose high
    // dword the ISA leaves undefined (the emulator refuses it).
    float zero = 0.0f;
    asm volatile("" : "+v"(zero));
    w.l = zero;
#pragma unroll
    for (auto& o : w.o) o = decltype(o + o){};  // FP8: its row-sum accumulator too
  } else if (__builtin_amdgcn_ballot_w64(grow) != 0) {
    const float m_new = grow ? mx : w.m;
    float alpha = __builtin_amdgcn_exp2f(w.m - m_new);
    // Any lengths: a row that sees no key keeps m = -inf, and exp2(-inf + inf) would make its
    // zero sums NaN.
    if constexpr (kAny) alpha = m_new == -__builtin_inff() ? 1.0f : alpha;
    w.m = m_new;
    w.l *= alpha;
#pragma unroll
    for (auto& o : w.o) o *= alpha;  // FP8: its row-sum accumulator too
  }
  return mx;
}

// Softmax of the scores of block jb into P (BF16), with the lazy rescale.
// kFold: the scale folded into the shift (d 128; at d 192/128 the compiler's LDS schedule
// fell apart at 256 registers). Any lengths: a row that sees no key (m = -inf) takes the
// large-|m| path below, whose scaled scores then meet neg_m = 0.
template <bool kAny, bool kMask, bool kFold, int kDqk, bool kFirst = false>
__device__ __forceinline__ void softmax_block(Wave<kDqk>& w, int jb) {
  block_max_rescale<kAny, kMask, !kFold, !kAny, kFirst>(w, jb);
  // s - m by v_pk_add_f32 (two scores an instruction; s + (-m) rounds as s - m does), or, with
  // kFold, s * scale - m by one v_pk_fma_f32 on the unscaled scores: the exact product against
  // the rounded m leaves the row's largest score the rounding error of m = round(max * scale),
  // at most half an ulp of m, below 2^-8 while |m| < 2^16. A wave with a larger |m| (huge
  // scores) scales its scores first, as rounded values, and multiplies them by 1. The pairs
  // are opaque to the compiler, which otherwise splits the packed operations.
  f32x2 neg_m = {-w.m, -w.m};
  // With fewer keys than queries a row may see no key: its m stays -inf and its
  // probabilities must be 0 (exp2(-inf - 0)), not exp2(-inf + inf).
  if constexpr (kAny) neg_m = w.m == -__builtin_inff() ? f32x2{0.0f, 0.0f} : neg_m;
  f32x2 sc = w.sc;
  if constexpr (kFold) {
    if (__builtin_amdgcn_ballot_w64(!(__builtin_fabsf(w.m) < 0x1p16f)) != 0) {
      scale_scores(w.s, sc);
      sc = f32x2{1.0f, 1.0f};
    }
    asm volatile("" : "+v"(neg_m), "+v"(sc));
  } else {
    asm volatile("" : "+v"(neg_m));
  }
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; v += 2) {
      const f32x2 s2 = {w.s[sb][v], w.s[sb][v + 1]};
      const f32x2 x = kFold ? __builtin_elementwise_fma(s2, sc, neg_m) : s2 + neg_m;
      w.s[sb][v] = x[0];
      w.s[sb][v + 1] = x[1];
    }
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      uint32_t pw[4];
#pragma unroll
      for (int e2 = 0; e2 < 4; ++e2) {
        const float p0 = __builtin_amdgcn_exp2f(w.s[sb][8 * t + 2 * e2]);
        const float p1 = __builtin_amdgcn_exp2f(w.s[sb][8 * t + 2 * e2 + 1]);
        pw[e2] = pack_bf16(p0, p1);
        // The two rounded values into the two halves of the row sum (one v_pk_add_f32).
        w.l += f32x2{bits_to_float(pw[e2] << 16), bits_to_float(pw[e2] & 0xFFFF0000u)};
      }
      w.p[sb][t] = u32x4{pw[0], pw[1], pw[2], pw[3]};
    }
}

// The BF16 parts of the ping-pong kernel (attn_tile's K), d_qk 128 or 192; kAny: the
// any-lengths instantiation (varlen batches, seqlen_k > seqlen_q; see SeqGeom).
template <int kDqk, bool kAny = false>
struct Bf16Kernel {
  static constexpr bool kAnyLengths = kAny;
  static constexpr bool kUnrollSteady = kDqk == 128;
  // attn_tile's first tail iteration out of the loop (d 192/128: no gain, S 2K 1002.7 -> 1002.5).
  static constexpr bool kPeelFirstTail = kDqk == 128;
  // The next tile's Q^T one iteration after the wave's last P·V (attn_tile).
  static constexpr bool kLateQ = kDqk == 128;
  // The leading waves' first softmax of a tile sets the sums instead of scaling them by 0
  // (block_max_rescale's kFirst). d 192/128: S 2K 1053.6 -> 1045.0 with it (the compiler's
  // schedule of the prologue), so not there.
  static constexpr bool kFirstSums = kDqk == 128;
  // The staged V blocks' loads as inline assembly, waited for explicitly (load_block).
  static constexpr bool kAsmStaged = kDqk != 128;
  // V block 0 in its own LDS buffer (Lds::v0), loaded by LDS DMA during the previous tile's
  // last iteration (on the diagonal too: the prologue sanitizes it in place).
  static constexpr bool kSpareV0 = kDqk == 128;
  // The general iterations' (and the steady remainder's) buffer offsets added once to the
  // reads' lane addresses (pv, k_read); d 128: no faster (S 2K 991.3 -> 990.9).
  static constexpr bool kFoldOffsets = kDqk != 128;
  using D = Dims<kDqk>;
  using Lds = zyfa::kernels::Lds<kDqk>;
  using Wave = zyfa::kernels::Wave<kDqk>;
  using QRegs = zyfa::kernels::QRegs<kDqk>;
  using Stage = zyfa::kernels::Stage;
  static constexpr int kElemBytes = 2;
  static constexpr int kKBlockBytes = D::kKBlockBytes;
  static constexpr int kVBlockBytes = kBlockBytes;

  // Q^T of the lane's query row (half: lane / 32), as stored.
  __device__ static __forceinline__ void load_q(QRegs& q, gptr<const uint8_t> qbase, int half) {
#pragma unroll
    for (int c = 0; c < D::kSteps; ++c) q[c] = *global_cast<const u32x4>(qbase + 2 * (16 * c + 8 * half));
  }
  // The score scale and LDS read offsets; returns the sign flip of Q^T.
  template <class Args>
  __device__ static __forceinline__ uint32_t setup(Wave& w, const Args& a, const TileCoords&) {
    const float scale = a.scale_log2;
    w.sc = f32x2{fabsf(scale), fabsf(scale)};
    // Kept in one VGPR pair, opaque: the scalar registers are the scarcer ones here, and a
    // scale the compiler can see it splats into 16 VGPRs (a pair per v_pk_mul_f32 of a score
    // tile).
    asm volatile("" : "+v"(w.sc));
    // With the first K buffer's LDS offset (k_read); opaque, so that the compiler does not
    // take the constant back out of the XORs.
    w.kaddr = kKOffset + w.ql * kRowBytes + ((w.half ^ swz(w.ql)) << 4);
    w.kaddr_hi = kKOffset + kBlockBytes + w.ql * kHiRowBytes + ((w.half ^ swz_hi(w.ql)) << 4);
    asm volatile("" : "+v"(w.kaddr));
    if constexpr (D::kHasHi) asm volatile("" : "+v"(w.kaddr_hi));
    // Transposing read, lane m of its 16-lane group: 4 columns (8 bytes) of key row m / 4 of
    // the quad, columns 16 gq + 4 (m % 4) of the 32-column block.
    const int m16 = w.lane & 15, gq = (w.lane >> 4) & 1;
    const int r = 4 * w.half + (m16 >> 2);  // row within the pair of quads, 0..7
    const int chunk = 2 * gq + ((m16 >> 1) & 1);
    w.vaddr = r * kRowBytes + ((chunk ^ swz(r)) << 4) + 8 * (m16 & 1);
    w.p[0][0] = w.p[0][1] = w.p[1][0] = w.p[1][1] = u32x4{};
    return scale < 0.0f ? 0x80008000u : 0u;
  }
  __device__ static __forceinline__ void dma_k(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                               int kb, int seqlen, int wave, int lane) {
    dma_k_block<kDqk>(buf, base, row_bytes, kb, seqlen, wave, lane);
  }
  __device__ static __forceinline__ void dma_v(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                               int kb, int seqlen, int wave, int lane) {
    dma_block(buf, base, row_bytes, kb, seqlen, wave, lane);
  }
  __device__ static __forceinline__ void load_v(Stage& st, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                                int seqlen, int tid) {
    load_block<kAsmStaged>(st, base, row_bytes, kb, seqlen, tid);
  }
  __device__ static __forceinline__ void sanitize_v(Stage& st, int kb, int seqlen, int tid, lptr<uint32_t> bad) {
    zyfa::kernels::sanitize_v(st, kb, seqlen, tid, bad);
  }
  __device__ static __forceinline__ void store_v(lptr<uint8_t> buf, const Stage& st, int tid) {
    store_block(buf, st, tid);
  }
  // Until only this iteration's loads are in flight: a K block's and a V block's (2).
  __device__ static __forceinline__ void wait_loads(bool k, bool v) {
    wait_vmcnt<D::kKLoads>(D::kKLoads * k + 2 * v);
  }
  // Until a staged block's loads (load_v) are complete, with the loads issued after them left
  // in flight: a K block's (k) and the next tile's Q^T (q).
  __device__ static __forceinline__ void wait_staged(bool k, bool q) {
    if (q)
      wait_vmcnt_past_q<D::kSteps, D::kKLoads>(k, false);
    else
      wait_vmcnt_past_q<0, D::kKLoads>(k, false);
  }
  // The same when the next tile's Q^T loads went out just before this iteration's.
  __device__ static __forceinline__ void wait_loads_past_q(bool k, bool v) {
    wait_vmcnt_past_q<D::kSteps, D::kKLoads>(k, v);
  }
  // kadd, vadd: the buffer's offset from kbuf or vbuf when it is not a constant (attn_tile).
  __device__ static __forceinline__ void scores(Wave& w, const QRegs& q, lptr<uint8_t> kbuf, uint32_t kadd = 0) {
    zyfa::kernels::scores(w, q, kbuf, nullptr, kadd);
  }
  __device__ static __forceinline__ void pv(Wave& w, lptr<uint8_t> vbuf, uint32_t vadd = 0) {
    zyfa::kernels::pv(w, vbuf, nullptr, nullptr, vadd);
  }
  __device__ static __forceinline__ void pv_scores(Wave& w, const QRegs& q, lptr<uint8_t> vbuf, lptr<uint8_t> kbuf,
                                                   uint32_t vadd = 0, uint32_t kadd = 0) {
    zyfa::kernels::pv_scores(w, q, vbuf, kbuf, vadd, kadd);
  }
  template <bool kMask = true, bool kFirst = false>
  __device__ static __forceinline__ void softmax(Wave& w, int jb) {
    softmax_block<kAny, kMask, kDqk == 128, kDqk, kFirst>(w, jb);
  }
  __device__ static __forceinline__ float out_scale(const Wave&) { return 1.0f; }
  __device__ static __forceinline__ float row_sum(const Wave& w) {
    const f32x2 ls = both_halves(w.l[0] + w.l[1]);
    return ls[0] + ls[1];
  }
};

// Where a tile's sequence lies and what it sees. Fixed lengths: sequence b of the tensors'
// batch, seqlen queries and as many keys (the any-lengths kernels: seqlen_k keys). Varlen: rows
// cu_seqlens[b] .. cu_seqlens[b + 1] of the packed tensors (batch 0), clamped into the tensors
// and the maxima by varlen::span_of, so that bad device prefix sums move no access out of q,
// k, v, out or lse. Query i sees keys j <= i + shift (bottom-right causal); a row with
// i + shift < 0 sees none.
struct SeqGeom {
  int lq, lk;     // queries and keys of the sequence
  int shift;      // lk - lq
  int bt;         // the tensors' batch index
  int64_t q_row;  // the sequence's first row in q/out, and in k/v
  int64_t k_row;
};

using LengthsKernargPtr = __attribute__((address_space(4))) const AttnLengthsArgs*;

template <bool kAny, class Args>
__device__ __forceinline__ SeqGeom seq_geom(const Args& a, int b) {
  SeqGeom g{a.seqlen, a.seqlen, 0, b, 0, 0};
  if constexpr (kAny) {
    LengthsKernargPtr xp = (LengthsKernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
    asm volatile("" : "+s"(xp));
    const auto& x = *xp;
    g.lk = x.seqlen_k;
    if (x.cu_seqlens_q != 0) {
      // Scalar loads (the constant address space): the prefix sums are not written while
      // the kernel runs.
      using cptr = __attribute__((address_space(4))) const int32_t*;
      const cptr cq = reinterpret_cast<cptr>(x.cu_seqlens_q), ck = reinterpret_cast<cptr>(x.cu_seqlens_k);
      const varlen::Span sq = varlen::span_of(cq[b], cq[b + 1], x.total_q, a.seqlen);
      const varlen::Span sk = varlen::span_of(ck[b], ck[b + 1], x.total_k, x.seqlen_k);
      g.lq = sq.length;
      g.lk = sk.length;
      g.bt = 0;
      g.q_row = sq.start;
      g.k_row = sk.start;
    }
    g.shift = g.lk - g.lq;
  }
  return g;
}

// The LSE's rows per (batch, head): seqlen, or total_q for varlen (AttnLengthsArgs::lse_rows).
template <bool kAny, class Args>
__device__ __forceinline__ int64_t lse_rows(const Args& a) {
  if constexpr (!kAny) return a.seqlen;
  LengthsKernargPtr xp = (LengthsKernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
  return xp->lse_rows;
}

// Key blocks that rows first_row .. first_row + rows - 1 of the sequence see (rows past the
// sequence see nothing): through the last row's last key, within the keys.
template <bool kAny>
__device__ __forceinline__ int key_blocks(const SeqGeom& g, int first_row, int rows) {
  if constexpr (!kAny) return (min(g.lq, first_row + rows) + kKeyBlock - 1) / kKeyBlock;
  const int end = min(g.lk, min(g.lq, first_row + rows) + g.shift);  // one past the last key
  return end > 0 ? (end + kKeyBlock - 1) / kKeyBlock : 0;
}

// The kernel-argument words that one part of a tile reads, in one batch of scalar loads: the
// empty asm uses them all, so that their loads issue together and are waited for once. In the
// compiler's own order they came in up to three dependent groups, each a scalar memory latency
// on the way from a tile's last iteration to the next tile's first loads. kStart: attn_tile's
// (K's, V's and the scale); otherwise start_tile_loads' (Q's and K's).
template <bool kStart, class Args>
__device__ __forceinline__ void batch_tile_args(const Args& a) {
  const auto& x = kStart ? a.v : a.q;
  const auto& xs = kStart ? a.v_stride : a.q_stride;
  const float scale = kStart ? a.scale_log2 : 0.0f;
  asm volatile("" ::"s"(a.div_n_tiles.magic), "s"(a.div_n_tiles.shift), "s"(a.div_heads.magic),
               "s"(a.div_heads.shift), "s"(a.div_group.magic), "s"(a.div_group.shift), "s"(a.heads),
               "s"(a.seqlen), "s"(a.k), "s"(a.k_stride[0]), "s"(a.k_stride[1]), "s"(a.k_stride[2]), "s"(x),
               "s"(xs[0]), "s"(xs[1]), "s"(xs[2]), "s"(scale));
}
// start_tile_loads' with V's pointer and strides as well (kSpareV0: V block 0 of the tile).
template <class Args>
__device__ __forceinline__ void batch_tile_args_v(const Args& a) {
  asm volatile("" ::"s"(a.div_n_tiles.magic), "s"(a.div_n_tiles.shift), "s"(a.div_heads.magic),
               "s"(a.div_heads.shift), "s"(a.div_group.magic), "s"(a.div_group.shift), "s"(a.heads),
               "s"(a.seqlen), "s"(a.k), "s"(a.k_stride[0]), "s"(a.k_stride[1]), "s"(a.k_stride[2]), "s"(a.q),
               "s"(a.q_stride[0]), "s"(a.q_stride[1]), "s"(a.q_stride[2]), "s"(a.v), "s"(a.v_stride[0]),
               "s"(a.v_stride[1]), "s"(a.v_stride[2]));
}
// The epilogue's.
template <class Args>
__device__ __forceinline__ void batch_out_args(const Args& a) {
  asm volatile("" ::"s"(a.out), "s"(a.lse), "s"(a.o_stride[0]), "s"(a.o_stride[1]), "s"(a.o_stride[2]),
               "s"(a.seqlen), "s"(a.heads));
}

// BF16: the early Q^T and the leading waves on the tile's upper rows. A wave's rows of the
// next tile's Q^T start once its last scores are done (attn_tile), and waves 0-3, whose softmax
// follows their matrix phase, own the tile's upper half (the rows that see the most blocks):
// the last iteration is then only the last waves' P·V, not also their masked softmax, and the
// waves that finish early are the ones whose Q^T goes out early. Each alone was slower (the
// early Q^T at d 128: S 2K 926.7 -> 913.8 TFLOP/s; the upper rows leading without it: 920.4);
// the FP8 d 192/128 HIP body spilled 5 VGPRs with the early Q^T and keeps both as they were.
template <class K>
__device__ constexpr bool early_q() {
  return K::kElemBytes == 2;
}
// The tile's 32-row block that wave `wave` owns.
template <class K>
__device__ __forceinline__ int row_block(int wave) {
  return early_q<K>() ? wave ^ (kWaves / 2) : wave;
}

// The loads that start a tile: its rows of Q^T (as stored: the sign of a negative scale is
// applied once they have arrived) and its K blocks 0-2 into K buffers 0-2. Issued by the
// tile's prologue, or during the previous tile's last iteration, when no wave reads K any
// more (its last scores were before that iteration's barrier), so that their latency passes
// under that iteration and the epilogue instead of holding up the prologue. known: the
// tile's sequence when the caller has it (any lengths: its prefix sums are not read twice,
// which took one scalar register too many). kQ, kK: which of the two (a wave's Q^T rows may
// start earlier than the K blocks, see attn_tile).
template <class K, bool kQ = true, bool kK = true>
__device__ __forceinline__ void start_tile_loads(typename K::QRegs& q, lptr<uint8_t> kbuf, uint32_t tile_word,
                                                 uint32_t n_tiles, int wave, int lane,
                                                 const SeqGeom* known = nullptr, lptr<uint8_t> v0buf = nullptr,
                                                 bool* v0_started = nullptr) {
  KernargPtr ap = kernargs();
  asm volatile("" : "+s"(ap));
  const auto& a = *ap;
  constexpr bool kAny = K::kAnyLengths;
  if constexpr (!kAny) {
    if (v0_started)
      batch_tile_args_v(a);
    else
      batch_tile_args<false>(a);
  }
  const TileCoords tc = tile_coords(a, tile_word, n_tiles);
  const SeqGeom g = known ? *known : seq_geom<kAny>(a, tc.b);
  const int seqlen = g.lk;
  const int tile_q0 = tc.tile * kTileRows;
  const int n = key_blocks<kAny>(g, tile_q0, kTileRows);
  const int qload = min(tile_q0 + row_block<K>(wave) * kWaveRows + (lane & 31), g.lq - 1);
  // (Fixed lengths: the expressions of the fixed-length kernels, which compile as before.)
  const gptr<const uint8_t> qbase = global<const uint8_t>(a.q) +
      (kAny ? g.bt * a.q_stride[0] + (g.q_row + qload) * a.q_stride[1] + tc.h * a.q_stride[2]
            : tc.b * a.q_stride[0] + static_cast<int64_t>(qload) * a.q_stride[1] + tc.h * a.q_stride[2]) *
          K::kElemBytes;
  if constexpr (kQ) K::load_q(q, qbase, lane >> 5);
  if constexpr (!kK) return;
  const gptr<const uint8_t> kbase = global<const uint8_t>(a.k) +
      (kAny ? g.bt * a.k_stride[0] + g.k_row * a.k_stride[1] + tc.hk * a.k_stride[2]
            : tc.b * a.k_stride[0] + tc.hk * a.k_stride[2]) *
          K::kElemBytes;
  const uint32_t k_row = static_cast<uint32_t>(a.k_stride[1] * K::kElemBytes);
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    // Opaque, as buf_offset in attn_tile: hoisted M0 values would hold scalar registers.
    int off = i * K::kKBlockBytes;
    asm volatile("" : "+s"(off));
    if (i < n) K::dma_k(kbuf + off, kbase, k_row, i * kKeyBlock, seqlen, wave, lane);
  }
  if constexpr (K::kSpareV0) {
    // V block 0 by LDS DMA unless the tile sees no key (on the tile's diagonal, the prologue
    // sanitizes it in LDS).
    if (v0_started) {
      *v0_started = n > 0;
      if (*v0_started) {
        const gptr<const uint8_t> vbase = global<const uint8_t>(a.v) +
            (kAny ? g.bt * a.v_stride[0] + g.k_row * a.v_stride[1] + tc.hk * a.v_stride[2]
                  : tc.b * a.v_stride[0] + tc.hk * a.v_stride[2]) *
                K::kElemBytes;
        K::dma_v(v0buf, vbase, static_cast<uint32_t>(a.v_stride[1] * K::kElemBytes), 0, seqlen, wave, lane);
      }
    }
  }
}

// A wave's output, 32 rows of 256 bytes (BF16, d_v 128), by store instructions that each
// write whole 128-byte lines: every line of the output is then requested from the L2 once.
// Stored straight from the lanes that hold it (16 bytes of one row a lane, 32 rows an
// instruction) it was requested four times. In two rounds of one 128-byte half of each row,
// through the wave's own 4 KiB of LDS (rows of 128 bytes, chunk c of row r at position
// c ^ swz_hi(r): the 16 rows of a write phase and the 2 rows x 8 chunks of a read phase fall
// on distinct banks): lane l then stores chunk l % 8 of row 8 i + l / 8. chunk[jd][p]: the
// lane's 16 bytes of row ql at dv 32 jd + 16 p + 8 half. rows: the wave's rows inside the
// sequence (the others are not stored).
__device__ __forceinline__ void store_rows_by_lines(lptr<uint8_t> stage, const u32x4 (&chunk)[4][2],
                                                    gptr<uint8_t> row0, int64_t row_bytes, int rows) {
  // The lane id computed afresh (two VALU ops) from an opaque mask, so that it is not hoisted:
  // a lane-derived value live through the key loop, where the kernel uses all 256 VGPRs, cost
  // the loop's LDS schedule.
  uint32_t ones = ~0u;
  asm volatile("" : "+s"(ones));
  const int lane = static_cast<int>(__builtin_amdgcn_mbcnt_hi(ones, __builtin_amdgcn_mbcnt_lo(ones, 0u)));
  const int ql = lane & 31, half = lane >> 5;
  const int r_of = lane >> 3, c = lane & 7;
#pragma unroll
  for (int round = 0; round < 2; ++round) {
#pragma unroll
    for (int jd = 0; jd < 2; ++jd)
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        const int cl = 4 * jd + 2 * p + half;
        *reinterpret_cast<lptr<u32x4>>(stage + ql * 128 + ((cl ^ swz_hi(ql)) << 4)) = chunk[2 * round + jd][p];
      }
    // Other lanes' bytes: the wave's LDS accesses run in order, the compiler must keep them so.
    asm volatile("" ::: "memory");
    // The four reads first, waited for together: read under each store's condition, each was
    // issued and waited for alone, four LDS latencies a round.
    u32x4 x[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = 8 * i + r_of;
      x[i] = *reinterpret_cast<lptr<u32x4>>(stage + r * 128 + ((c ^ swz_hi(r)) << 4));
    }
    asm volatile("" : "+v"(x[0]), "+v"(x[1]), "+v"(x[2]), "+v"(x[3]));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = 8 * i + r_of;
      if (r < rows) *global_cast<u32x4>(row0 + r * row_bytes + 128 * round + 16 * c) = x[i];
    }
    asm volatile("" ::: "memory");
  }
}

// An iteration's wait for its loads (K::wait_loads); past_q: the next tile's Q^T loads went out
// just before them and stay in flight (BF16 only, attn_tile's tail iterations).
template <class K>
__device__ __forceinline__ void wait_iteration_loads(bool past_q, bool k, bool v) {
  if constexpr (K::kElemBytes == 2) {
    if (past_q) {
      K::wait_loads_past_q(k, v);
      return;
    }
  }
  K::wait_loads(k, v);
}

// One query tile. next_word: the tile that follows (kNoTileWord: none), whose first loads
// the last iteration starts; prefetched: this tile's were started so (into q, which passes
// from tile to tile). v0_ready: this tile's V block 0 was started so too (K::kSpareV0);
// v0_next: set when the last iteration starts the next tile's. K names the element type's
// parts (Bf16Kernel below, Fp8Kernel in attn_fwd_fp8_gfx950.h): its wave state, Q^T, LDS,
// staging, loads, MFMA phases and P.
template <class K>
__device__ __forceinline__ void attn_tile(typename K::Lds& lds, typename K::QRegs& q, uint32_t tile_word,
                                          uint32_t next_word, bool prefetched, uint32_t n_tiles, int wave, int lane,
                                          int tid, bool v0_ready, bool& v0_next) {
  // Read the arguments afresh for every tile (hoisted, they would hold scalar registers).
  KernargPtr ap = kernargs();
  asm volatile("" : "+s"(ap));
  // Opaque per tile: values derived from the wave index (its row offset, LDS offsets) are
  // otherwise hoisted out of the tile loop and held in scalar registers (spilled).
  asm volatile("" : "+s"(wave));
  constexpr bool kAny = K::kAnyLengths;
  // Any lengths: the lane masks of the tile (tid == 0, the row's first half) recomputed per
  // tile from an opaque lane id; held across the persistent loop like the fixed-length
  // kernels', they took the scalar registers that the sequence's geometry needs (spilled).
  if constexpr (kAny) asm volatile("" : "+v"(tid), "+v"(lane));
  const auto& a = *ap;
  if constexpr (!kAny && K::kElemBytes == 2) batch_tile_args<true>(a);
  const TileCoords tc = tile_coords(a, tile_word, n_tiles);
  const int b = tc.b, h = tc.h, hk = tc.hk, tile = tc.tile;
  const SeqGeom sg = seq_geom<kAny>(a, b);
  const int seqlen = sg.lk;  // K and V rows are clamped to the sequence's last key
  const int tile_q0 = tile * kTileRows;
  const int q0 = tile_q0 + row_block<K>(wave) * kWaveRows;

  // Blocks of the tile (all waves load them) and of this wave (the ones it computes; the
  // last holds its diagonal; none when its rows are all past the sequence, or see no key).
  // Any lengths: n_w = -1 when the tile sees no key (n = 0), so that the last iteration
  // (j = n - 1) computes nothing either.
  const int n = key_blocks<kAny>(sg, tile_q0, kTileRows);
  int n_w;
  if constexpr (kAny)
    n_w = n == 0 ? -1 : (q0 < sg.lq ? key_blocks<kAny>(sg, q0, kWaveRows) : 0);
  else
    n_w = q0 < seqlen ? min(q0 + kWaveRows - 1, seqlen - 1) / kKeyBlock + 1 : 0;

  typename K::Wave w;
  w.lane = lane;
  w.half = lane >> 5;
  w.ql = lane & 31;
  // The mask's rows are in key space: row i's last key is i + shift.
  w.qrow = q0 + w.ql + sg.shift;
  w.q0 = q0 + sg.shift;
  const bool qvalid = (kAny ? q0 + w.ql : w.qrow) < sg.lq;
  // The score scale, the LDS read offsets (and the descales) of the element type; the sign
  // flip of Q^T that a negative score scale asks for.
  const uint32_t q_sign = K::setup(w, a, tc);

  constexpr int kElem = K::kElemBytes;
  const gptr<const uint8_t> kbase =
      global<const uint8_t>(a.k) + (sg.bt * a.k_stride[0] + sg.k_row * a.k_stride[1] + hk * a.k_stride[2]) * kElem;
  const gptr<const uint8_t> vbase =
      global<const uint8_t>(a.v) + (sg.bt * a.v_stride[0] + sg.k_row * a.v_stride[1] + hk * a.v_stride[2]) * kElem;
  const uint32_t k_row = static_cast<uint32_t>(a.k_stride[1] * kElem);
  const uint32_t v_row = static_cast<uint32_t>(a.v_stride[1] * kElem);
  // Every register of the state defined at the start of the tile: left undefined on the paths
  // that skip the compute, they stayed live across the persistent loop and caused spills.
#pragma unroll
  for (auto& o : w.o) o = f32x16{};
  w.s[0] = w.s[1] = f32x16{};
  if constexpr (K::kElemBytes == 2) {
    w.zero = f32x16{};
    asm volatile("" : "+v"(w.zero));
  }
  w.m = -__builtin_inff();
  w.l = f32x2{};

  // Generic -> LDS address space (a C cast is clang's address-space conversion). Buffer i of
  // K is kbuf + i * kKBlockBytes (arithmetic, not an array the compiler would put in scratch).
  const lptr<uint8_t> kbuf = (lptr<uint8_t>)lds.k[0];
  const lptr<uint8_t> vbuf = (lptr<uint8_t>)lds.v[0];
  lptr<uint32_t> bad_slot = (lptr<uint32_t>)&lds.bad_key;

  // Blocks of V that some row of the tile must not see (the diagonal ones, kb >= tile_q0) go
  // through registers, where sanitize_v clears their non-finite elements; the others, and all
  // of K, by LDS DMA. Block i lives in buffer i % 3.
  // The index is opaque so that i % 3 is computed where it is used (a few SALU): strength-
  // reduced, each (j + c) % 3 became an induction variable of its own in scalar registers.
  const auto buf_offset = [](int i, int bytes) {
    uint32_t u = static_cast<uint32_t>(i);
    asm volatile("" : "+s"(u));
    return static_cast<int>(u % 3u) * bytes;
  };
  const auto kbuf_of = [&](int i) { return kbuf + buf_offset(i, K::kKBlockBytes); };
  // kSpareV0: block 0 in its own buffer, the others in i % 3.
  const lptr<uint8_t> v0buf = [&] {
    if constexpr (K::kSpareV0)
      return (lptr<uint8_t>)lds.v0;
    else
      return vbuf;
  }();
  const auto vbuf_of = [&](int i) {
    if constexpr (K::kSpareV0)
      if (i == 0) return v0buf;
    return vbuf + buf_offset(i, K::kVBlockBytes);
  };
  // Any lengths: the blocks past the first row's last key (keys past the sequence among them).
  const auto v_staged = [&](int i) {
    return kAny ? i * kKeyBlock + kKeyBlock - 1 > tile_q0 + sg.shift : i * kKeyBlock >= tile_q0;
  };

  // Prologue: the previous tile's LDS accesses are over; reset the NaN slot; Q^T, K_0, K_1,
  // K_2 (loaded here or started by the previous tile) and V_0 complete, V_1 in flight or
  // staged (its latency is paid once a tile).
  barrier();
  if (tid == 0) *bad_slot = 0x7FFFFFFFu;
  if (!prefetched) start_tile_loads<K>(q, kbuf, tile_word, n_tiles, wave, lane, kAny ? &sg : nullptr);
  typename K::Stage vs;
  // (Any lengths: a tile whose rows see no key, n = 0, loads nothing: its sequence may have
  // no key.)
  const bool any_keys = !kAny || n > 0;
  if (any_keys) {
    if (v_staged(0) && !K::kSpareV0)
      K::load_v(vs, vbase, v_row, 0, seqlen, tid);
    else if (!K::kSpareV0 || !v0_ready)  // (kSpareV0: started by the previous tile)
      K::dma_v(vbuf_of(0), vbase, v_row, 0, seqlen, wave, lane);
  }
  K::wait_loads(false, false);
  // Q^T has arrived; the sign flip here is also where the compiler waits for it (nothing else
  // is in flight), not before the first scores, after V_1's loads. Each flipped register is
  // named by an empty asm here: otherwise the compiler sank the flips past the barrier and
  // V_1's loads, and its waits for Q^T there (it does not know that the vmcnt(0) above
  // drained the counter) waited for V_1.
#pragma unroll
  for (auto& x : q) {
    x ^= q_sign;
    asm volatile("" : "+v"(x));
  }
  barrier();
  if (any_keys && v_staged(0)) {
    // kSpareV0: block 0 came by LDS DMA (this thread's chunks by its own loads, complete);
    // sanitized in place, before barrier #0 and the first P·V.
    if constexpr (K::kSpareV0) read_block(vs, v0buf, tid);
    K::sanitize_v(vs, 0, seqlen, tid, bad_slot);
    K::store_v(vbuf_of(0), vs, tid);
  }
  if (n > 1) {
    if (v_staged(1))
      K::load_v(vs, vbase, v_row, kKeyBlock, seqlen, tid);
    else
      K::dma_v(vbuf_of(1), vbase, v_row, kKeyBlock, seqlen, wave, lane);
  }
  // Waves 0-3 lead: their softmax of block j + 1 follows their matrix phase j; waves 4-7
  // compute it before their matrix phase j + 1, so that on each SIMD one wave's MFMAs run
  // while the other computes its softmax, with one barrier per iteration.
  const bool lead = wave < kWaves / 2;
  // The scores at the matrix phase's priority: at 0 the trailing waves' MFMAs waited behind
  // the leading waves' softmax (~250 clocks a tile at S 2K).
  if (n_w > 0) {
    __builtin_amdgcn_s_setprio(kPrioMatrix);
    K::scores(w, q, kbuf_of(0));
    __builtin_amdgcn_s_setprio(0);
    if (lead) {
      if constexpr (K::kFirstSums)
        K::template softmax<true, true>(w, 0);
      else
        K::softmax(w, 0);
    }
  }
  barrier();  // #0

  // Iterations 0 .. n - 2 here; the last one after the loop. An iteration is steady when
  // everything it may do it does: this wave computes both of its blocks (j, j + 1), sees every
  // key of them (no masking), and loads K_{j+3} and V_{j+2} by LDS DMA (none staged). The
  // steady iterations, all but the last few of a tile, come first and run without the tests
  // (their compare / select / branch chains were a few hundred clocks of scalar work an
  // iteration, on the trailing waves' path to the barrier). Each iteration, steady or not, has
  // one barrier, so waves with different counts stay in step.
  // Any lengths: the same tests in key space (bottom-right causal: row i's last key is
  // i + shift). No block up to j + 2 is staged when its last key is within the tile's first
  // row's, (j + 3) * kKeyBlock <= tile_q0 + shift + 1; that bound also keeps block j + 1
  // within the wave's first row (w.q0 >= tile_q0 + shift), hence within the sequence's keys
  // (a wave with rows in the sequence has w.q0 <= lk - 1). A negative tile_q0 + shift + 1
  // (rows that see no key) divides to at most 0: no steady iteration.
  const int first_staged = (kAny ? tile_q0 + sg.shift + 1 : tile_q0) / kKeyBlock;
  const int n_steady = min(min(n_w - 1, n - 3), min(first_staged - 2, (w.q0 + 1) / kKeyBlock - 1));
  // rot_tag: j % 3 when the caller knows it (0..2, the steady loop unrolled by three), so that
  // the buffers' offsets are constants; -1: computed (buf_offset). kind_tag: kSteadyIter,
  // kGeneralIter, or kTailIter: an iteration after the wave's last scores (j + 1 >= n_w),
  // which names no Q^T register (see the tail loop below).
  // The tail iteration just before whose loads the next tile's Q^T loads went out (-1: none).
  int q_at = -1;
  const auto iteration = [&](auto kind_tag, auto rot_tag, int j) {
    constexpr int kKind = decltype(kind_tag)::value;
    constexpr bool kSteady = kKind == kSteadyIter;
    constexpr bool kTail = kKind == kTailIter;
    constexpr int kRot = decltype(rot_tag)::value;
    const auto kbuf_at = [&](int c) {  // block j + c
      return kRot >= 0 ? kbuf + (kRot + c) % 3 * K::kKBlockBytes : kbuf_of(j + c);
    };
    // kRot 3: j = 0 with block 0 in the spare buffer (kSpareV0), the others as kRot 0.
    // Computed offsets (kRot < 0) go to the BF16 reads as an offset from the first buffer, added
    // once to the lane's address (pv, k_read).
    const auto voff = [&](int c) { return static_cast<uint32_t>(vbuf_of(j + c) - vbuf); };
    const auto koff = [&](int c) { return static_cast<uint32_t>(kbuf_of(j + c) - kbuf); };
    const auto vbuf_at = [&](int c) {
      if constexpr (kRot == 3)
        if (c == 0) return v0buf;
      return kRot >= 0 ? vbuf + (kRot + c) % 3 * K::kVBlockBytes : vbuf_of(j + c);
    };
    const bool load_v = kSteady || j + 2 < n, stage_v = !kSteady && load_v && v_staged(j + 2);
    const bool load_k = kSteady || j + 3 < n;
    // The loads of K_{j+3} and V_{j+2} (two blocks ahead) into the buffers of K_j and V_{j-1},
    // which every wave finished reading before barrier #j. The staged V block first, then the
    // new loads: the compiler waits for the staging registers with vmcnt(0) (it does not count
    // the LDS-DMA loads), which after the new loads waited for all of them, a memory latency
    // per staged block.
    const auto loads = [&] {
      if (!kSteady && j + 1 < n && v_staged(j + 1)) {
        // BF16 d 192/128: the staged loads are inline assembly, waited for here. Issued after
        // them: the previous iteration's K block (j >= 1, j + 2 < n), the next tile's Q^T
        // (j == q_at).
        if constexpr (K::kAsmStaged) K::wait_staged(j >= 1 && j + 2 < n, j == q_at);
        K::sanitize_v(vs, (j + 1) * kKeyBlock, seqlen, tid, bad_slot);
        K::store_v(vbuf_at(1), vs, tid);
      }
      if (stage_v) K::load_v(vs, vbase, v_row, (j + 2) * kKeyBlock, seqlen, tid);
      if (load_k) K::dma_k(kbuf_at(3), kbase, k_row, (j + 3) * kKeyBlock, seqlen, wave, lane);
      if (load_v && !stage_v) K::dma_v(vbuf_at(2), vbase, v_row, (j + 2) * kKeyBlock, seqlen, wave, lane);
    };
    // Steady trailing waves issue them first, while the leading waves' matrix phase leaves the
    // VALU nearly free: after their own matrix phase (as the leading waves do) the address
    // arithmetic queued behind the leading waves' softmax, on the way to the barrier that
    // both wait at.
    // The trailing waves' softmax runs at a priority between the matrix phases' and the leading
    // waves' softmax: when it outlasts the other wave's matrix phase, that wave's softmax
    // (which has until the barrier) would otherwise take every VALU slot from it (the older
    // wave wins a tie) and hold up this wave's matrix phase, and so both waves.
    if (kSteady && !lead) loads();
    if (!lead && (kSteady || j < n_w)) {
      __builtin_amdgcn_s_setprio(kPrioTrailSoftmax);
      K::template softmax<!kSteady>(w, j);
    }
    // Matrix phase: P·V of block j, scores of block j + 1; the leading waves' loads after it
    // (issued ahead of the phase's LDS reads, they held them back).
    __builtin_amdgcn_s_setprio(kPrioMatrix);
    if constexpr (kSteady) {
      if constexpr (kRot < 0 && K::kFoldOffsets)
        K::pv_scores(w, q, vbuf, kbuf, voff(0), koff(1));
      else if constexpr (kRot == 3) {
        // V block 0 from the spare buffer, above 64 KiB: its offset added once to the lane's
        // address, not to each of the 32 reads (past the 16-bit offset field). (As an argument
        // of pv, the compiler kept the 32 sums in registers: S 2K 741.6 TFLOP/s.)
        uint32_t d = static_cast<uint32_t>(v0buf - vbuf);
        asm volatile("" : "+s"(d));
        w.vaddr += d;
        K::pv_scores(w, q, vbuf, kbuf_at(1));
        w.vaddr -= d;
      } else
        K::pv_scores(w, q, vbuf_at(0), kbuf_at(1));
    } else {
      if constexpr (kRot < 0 && K::kFoldOffsets) {
        if (j < n_w) K::pv(w, vbuf, voff(0));
        if (!kTail && j + 1 < n_w) K::scores(w, q, kbuf, koff(1));
      } else {
        if (j < n_w) K::pv(w, vbuf_at(0));
        if (!kTail && j + 1 < n_w) K::scores(w, q, kbuf_at(1));
      }
    }
    __builtin_amdgcn_s_setprio(0);
    // A trailing wave's loads here (not steady) at its softmax's priority: at 0 their VALU
    // waited behind the leading wave's softmax, and the trailing wave reached the barrier last.
    if constexpr (!kSteady)
      if (!lead) __builtin_amdgcn_s_setprio(kPrioTrailSoftmax);
    if (!kSteady || lead) loads();
    if constexpr (!kSteady) __builtin_amdgcn_s_setprio(0);
    if (!kTail && lead && (kSteady || j + 1 < n_w)) K::template softmax<!kSteady>(w, j + 1);
    // The previous iteration's loads complete before barrier #j+1, those of this one stay
    // in flight: nobody touches their buffers before barrier #j+2. Waited for after the
    // leading waves' softmax, which gives the loads that much longer to land.
    wait_iteration_loads<K>(kTail && j == q_at, load_k, load_v);
    barrier();
  };
  using Steady = std::integral_constant<int, kSteadyIter>;
  using General = std::integral_constant<int, kGeneralIter>;
  using Tail = std::integral_constant<int, kTailIter>;
  using Rot0 = std::integral_constant<int, 0>;
  using Rot1 = std::integral_constant<int, 1>;
  using Rot2 = std::integral_constant<int, 2>;
  using RotAny = std::integral_constant<int, -1>;
  int j = 0;
  if constexpr (K::kUnrollSteady) {
    if constexpr (K::kSpareV0) {
      // Block 0 from the spare buffer: the first steady iteration of its own, then the
      // unrolled ones from j = 1.
      if (n_steady > 0) {
        iteration(Steady{}, std::integral_constant<int, 3>{}, 0);
        j = 1;
      }
      for (; j + 3 <= n_steady; j += 3) {
        iteration(Steady{}, Rot1{}, j);
        iteration(Steady{}, Rot2{}, j + 1);
        iteration(Steady{}, Rot0{}, j + 2);
      }
    } else {
      for (; j + 3 <= n_steady; j += 3) {
        iteration(Steady{}, Rot0{}, j);
        iteration(Steady{}, Rot1{}, j + 1);
        iteration(Steady{}, Rot2{}, j + 2);
      }
    }
  }
  for (; j < n_steady; ++j) iteration(Steady{}, RotAny{}, j);
  // Early Q^T (BF16, early_q): once this wave's scores are done (the waves whose rows end
  // before the diagonal finish up to three iterations before the last), its rows of the next
  // tile's Q^T start, so that of the tile's 64 or 96 KiB only the last waves' part is left for
  // the last iteration, with the K blocks; Q^T comes from HBM (no other workgroup reads it),
  // and at a tile's start the waves waited for it (d 192/128, S 2K: ~3200 clocks a wave and
  // tile). The tail iterations do not name Q^T: in the general ones the compiler waited for
  // these loads at the (skipped) scores.
  constexpr bool kEarlyQ = early_q<K>();
  for (; j + 1 < (kEarlyQ ? n_w : n); ++j) iteration(General{}, RotAny{}, j);
  if constexpr (kEarlyQ) {
    // d 128 (kPeelFirstTail): the first tail iteration peeled off the loop, so that the
    // compiler's waits in it do not merge with the loop's.
    if constexpr (K::kPeelFirstTail) {
      if (j + 1 < n) {
        iteration(Tail{}, RotAny{}, j);
        ++j;
      }
    }
    // The Q^T start. d 192/128: before the first tail iteration, whose wait leaves them in
    // flight (one more iteration to land), or just before the last iteration if there is no
    // tail. Issued inside the first tail iteration instead, after its staged block (whose wait
    // by the compiler waits for them too), the kernel spilled a VGPR.
    // d 128 (kLateQ): one iteration later, after the wave's last P·V (the peeled iteration
    // above). In the first tail iteration the trailing waves' Q^T arithmetic sat between the
    // barrier and their last (masked) softmax, and they reached the barrier last (S 2K, ~400
    // clocks a tile in each of two iterations); in the next one those waves have nothing else
    // to do. The staged V registers are waited for first, on every path (also with no next
    // tile), and the iteration that follows is peeled: otherwise the compiler's wait for
    // them, merged over both paths or the loop, also waited for the Q^T loads (~1500 clocks).
    static_assert(K::kLateQ == K::kPeelFirstTail, "the late Q^T follows the peeled first tail iteration");
    if constexpr (K::kLateQ) asm volatile("" : "+v"(vs.x[0]), "+v"(vs.x[1]));
    if (next_word != kNoTileWord) {
      start_tile_loads<K, true, false>(q, kbuf, next_word, n_tiles, wave, lane);
      q_at = j;
    }
    if constexpr (K::kLateQ) {
      if (j + 1 < n) {
        iteration(Tail{}, RotAny{}, j);
        ++j;
      }
    }
    for (; j + 1 < n; ++j) iteration(Tail{}, RotAny{}, j);
  }
  // The last iteration, j = n - 1: no scores, no staged block, no loads of its own (nor
  // pending: iteration n - 2 loads nothing), but the next tile's first loads. Outside the
  // loop, so that the compiler does not see the next tile's Q^T loads pending at the loop's
  // scores (it waited for them there, with vmcnt, in every iteration).
  {
    const int j = n - 1;
    // The next tile's first loads before this iteration's work: the trailing waves' then land
    // under their softmax too.
    // (Early Q^T: the K blocks only.)
    // (kSpareV0: and the next tile's V block 0, once every wave is past iteration 0, n >= 2.)
    v0_next = false;
    if (next_word != kNoTileWord) {
      if (K::kSpareV0 && n >= 2)
        start_tile_loads<K, !kEarlyQ, true>(q, kbuf, next_word, n_tiles, wave, lane, nullptr, v0buf, &v0_next);
      else
        start_tile_loads<K, !kEarlyQ, true>(q, kbuf, next_word, n_tiles, wave, lane);
    }
    if (!lead && j < n_w) {
      __builtin_amdgcn_s_setprio(kPrioTrailSoftmax);
      K::softmax(w, j);
    }
    __builtin_amdgcn_s_setprio(kPrioMatrix);
    if (j < n_w) K::pv(w, vbuf_of(j));
    __builtin_amdgcn_s_setprio(0);
    // BF16: no barrier here. After this iteration a wave touches no LDS that another reads or
    // writes before the next prologue's barrier (its own staging area, and the NaN slot,
    // last written before barrier #n-1), so the waves with nothing left to compute start
    // their epilogue while the others finish, instead of waiting for them.
    if constexpr (K::kElemBytes != 2) barrier();
  }

  // The output's factor besides 1 / row sum (FP8: V's descale, after the MFMA guard).
  const float o_scale = K::out_scale(w);
  const float l_row = K::row_sum(w);  // the same sum in both lanes of the row
  // (Any lengths: w.qrow, the row's last key, may be negative: a signed comparison.)
  const bool saw_bad_v = kAny ? w.qrow >= static_cast<int>(*bad_slot) : static_cast<uint32_t>(w.qrow) >= *bad_slot;
  bool row_valid = qvalid;
  if constexpr (kAny) {
    // Any lengths: whether the row is the sequence's, from its length read afresh (the lane
    // mask, held through the key loop, took scalar registers that the loop needs).
    KernargPtr vp = kernargs();
    asm volatile("" : "+s"(vp));
    row_valid = q0 + w.ql < seq_geom<kAny>(*vp, b).lq;
  }
  float inv = saw_bad_v ? __builtin_nanf("") : o_scale * __builtin_amdgcn_rcpf(l_row);
  // A row that saw no key (row sum 0) is zeros, its LSE -inf (m = -inf).
  if constexpr (kAny) inv = l_row == 0.0f && !saw_bad_v ? 0.0f : inv;
  // The output arguments read afresh here: held through the key loop they took scalar
  // registers that the loop needs (SGPR spills).
  KernargPtr ep = kernargs();
  asm volatile("" : "+s"(ep));
  const auto& e = *ep;
  if constexpr (!kAny) batch_out_args(e);
  // The sequence's rows read afresh as well (scalar loads), for the same reason.
  const SeqGeom so = seq_geom<kAny>(e, b);
  const int64_t orow_index = kAny ? so.q_row + q0 + w.ql : static_cast<int64_t>(w.qrow);
  // The two lanes of a row hold 8 bytes of every 16 of it (key_of: dv 32 jd + 8 g + 4 half).
  // Lanes j and j + 32 swap (v_permlane32_swap, every lane of the wave: the row's two lanes are
  // both valid or both not) the upper half's first 8 bytes of each 32 with the lower half's
  // last 8: lane `half` then holds dv 32 jd + 16 p + 8 half .. +7, 16 contiguous bytes.
  u32x4 chunk[4][2];
#pragma unroll
  for (int jd = 0; jd < 4; ++jd)
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      uint32_t d[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) d[e] = pack_bf16(w.o[jd][8 * p + 2 * e] * inv, w.o[jd][8 * p + 2 * e + 1] * inv);
      const auto lo = __builtin_amdgcn_permlane32_swap(d[0], d[2], false, false);
      const auto hi = __builtin_amdgcn_permlane32_swap(d[1], d[3], false, false);
      chunk[jd][p] = u32x4{lo[0], hi[0], lo[1], hi[1]};
    }
  if constexpr (K::kElemBytes == 2) {
    // Through LDS (the wave's own staging area), as whole lines.
    const gptr<uint8_t> row0 = global<uint8_t>(e.out) +
        ((kAny ? so.bt * e.o_stride[0] + (so.q_row + q0) * e.o_stride[1]
               : b * e.o_stride[0] + static_cast<int64_t>(q0) * e.o_stride[1]) +
         h * e.o_stride[2]) *
            2;
    store_rows_by_lines((lptr<uint8_t>)lds.out[0] + wave * kOutStageBytes, chunk, row0,
                        e.o_stride[1] * 2, so.lq - q0);
  } else if (row_valid) {
    // (FP8: no staging area in its LDS.) 16-byte stores, each output line requested from the
    // L2 four times.
    const gptr<uint8_t> orow = global<uint8_t>(e.out) +
        (kAny ? so.bt * e.o_stride[0] + orow_index * e.o_stride[1] + h * e.o_stride[2]
              : b * e.o_stride[0] + static_cast<int64_t>(w.qrow) * e.o_stride[1] + h * e.o_stride[2]) *
            2;
#pragma unroll
    for (int jd = 0; jd < 4; ++jd)
#pragma unroll
      for (int p = 0; p < 2; ++p) *global_cast<u32x4>(orow + 2 * (32 * jd + 16 * p + 8 * w.half)) = chunk[jd][p];
  }
  if (!row_valid) return;
  if (e.lse != 0 && w.half == 0) {
    // Natural-log sum-exp of the scaled scores: ln 2 * (m + log2(sum 2^(x - m))).
    global<float>(e.lse)[kAny ? (static_cast<int64_t>(so.bt) * e.heads + h) * lse_rows<kAny>(e) + orow_index
                              : (static_cast<int64_t>(b) * e.heads + h) * e.seqlen + w.qrow] =
        0.69314718055994531f * (w.m + __builtin_amdgcn_logf(l_row));
  }
}

// The persistent loop of a workgroup over its jobs' tiles (the kernels' whole body).
template <class K>
__device__ __forceinline__ void attn_fwd_pingpong(typename K::Lds& lds) {
  const auto& a = *kernargs();
  // The job table through the constant address space, so that its words come by scalar
  // loads (lgkmcnt): by a vector load, the compiler's vmcnt(0) for a tile's word waited for
  // every vector memory operation in flight, the next tile's first loads (started in the
  // last iteration) and the output stores included. The table is not written while a
  // kernel runs.
  const auto jt = reinterpret_cast<__attribute__((address_space(4))) const uint32_t*>(a.job_table);
  const uint32_t grid = jt[0];
  const uint32_t n_tiles = jt[1];
  const uint32_t wg = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 63;
  const int wave = __builtin_amdgcn_readfirstlane(tid >> 6);
  const uint32_t begin = jt[2 + wg];
  const uint32_t end = jt[3 + wg];
  typename K::QRegs q;
  bool prefetched = false;
  bool v0_ready = false, v0_next = false;
  uint32_t word = 2 * begin;
  while (word < 2 * end) {
    const uint32_t t = jt[3 + grid + word];
    // The next tile of this workgroup, if any: its first loads start in this tile's last
    // iteration.
    uint32_t next = kNoTileWord;
    for (++word; word < 2 * end; ++word) {
      next = jt[3 + grid + word];
      if (next != kNoTileWord) break;
    }
    if (t != kNoTileWord) {
      attn_tile<K>(lds, q, t, next, prefetched, n_tiles, wave, lane, tid, v0_ready, v0_next);
      v0_ready = v0_next;
      prefetched = next != kNoTileWord;
    }
  }
}

}  // namespace
}  // namespace zyfa::kernels
