// BF16 causal attention forward, d = 128, for gfx950: 8 waves in ping-pong.
//
// A workgroup takes a query tile of 256 rows; wave w owns rows 32w .. 32w + 31 of it. K and V
// stream through LDS in 64-key blocks, double-buffered, loaded by all 512 threads (global ->
// registers one iteration ahead -> LDS). Waves 0-3 and 4-7 share the four SIMDs, one of each
// per SIMD, and run half an iteration apart: every iteration is a matrix phase (P·V of block j,
// then the scores of block j + 1: two score tiles in flight) and a vector phase (softmax of
// block j + 1), separated by workgroup barriers, and waves 4-7 pass one extra barrier first, so
// that on each SIMD one wave's MFMAs run while the other wave computes its softmax. The matrix
// phase runs at raised priority (s_setprio) so its MFMAs issue ahead of the other wave's VALU.
//
// Layouts are those of the baseline kernel (attn_fwd_common.h): scores transposed,
// S^T = K Q^T with K the A operand of v_mfma_f32_32x32x16_bf16, so lane l holds query l % 32
// and keys 8g + 4h + r (h = l / 32) of each 32-key block; P goes from registers into the B
// operand of O^T += V^T P^T, and V^T comes from LDS through ds_read_b64_tr_b16, which hands
// each lane 4 consecutive keys of its own output column.
//
// LDS rows are 256 bytes (one key); their 16-byte chunks are XOR-swizzled with the row's low
// four bits, so that the 32 K rows one MFMA operand reads, and the 16 chunks of a row that
// the loaders write, fall on distinct banks.
//
// LDS ordering (barriers numbered from the one that ends the prologue, #0): in the matrix
// phase of iteration j every wave reads K_{j+1} and V_j and writes K_{j+2} and V_{j+1} into
// the other halves of the double buffers. Waves 0-3 run that phase between barriers #2j and
// #2j+1, waves 4-7 between #2j+1 and #2j+2. The buffer K_{j+2} overwrites held K_j, last read
// before #2j; V_{j+1} overwrites V_{j-1}, last read before #2j; both are complete at #2j+2,
// before any wave's matrix phase j + 1 reads them.
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
#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "attn_fwd_common.h"

namespace zyfa::kernels {
namespace {

using namespace bf16_d128_gfx950;

typedef __attribute__((ext_vector_type(4))) short i16x4;
typedef __attribute__((ext_vector_type(2))) float f32x2;
typedef __attribute__((ext_vector_type(2))) __bf16 bf16x2;
template <typename T>
using lptr = __attribute__((address_space(3))) T*;

struct Lds {
  uint8_t k[2][kBlockBytes];
  uint8_t v[2][kBlockBytes];
  uint32_t bad_key;  // smallest key of the diagonal blocks with a non-finite V element
};

// RNE to BF16 by the hardware conversion (v_cvt_pk_bf16_f32).
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

// 64 rows of K or V (16 KiB) to registers: thread t takes 16-byte chunk t % 16 of rows t / 16
// and t / 16 + 32. Rows past the sequence read the last row (never used unmasked). The row
// offset is 32-bit (the host sends larger K and V views to the baseline kernel): a uniform
// 64-bit base plus a 32-bit lane offset takes two registers fewer per address.
struct Stage {
  u32x4 x[2];
};

__device__ __forceinline__ void load_block(Stage& st, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                           int seqlen, int tid) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const uint32_t key = static_cast<uint32_t>(min(kb + (tid >> 4) + 32 * i, seqlen - 1));
    st.x[i] = *global_cast<const u32x4>(base + (key * row_bytes + 16u * static_cast<uint32_t>(tid & 15)));
  }
}

__device__ __forceinline__ void store_block(lptr<uint8_t> buf, const Stage& st, int tid) {
  const int r = tid >> 4, c = tid & 15;
#pragma unroll
  for (int i = 0; i < 2; ++i)
    *reinterpret_cast<lptr<u32x4>>(buf + (r + 32 * i) * kRowBytes + ((c ^ (r & 15)) << 4)) = st.x[i];
}

// V of a diagonal block: keys past the sequence become 0, and so do non-finite elements, whose
// smallest key goes to the LDS slot (rows at or after it see it and become NaN).
__device__ __forceinline__ void sanitize_v(Stage& st, int kb, int seqlen, int tid, lptr<uint32_t> bad_slot) {
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

struct Wave {
  int lane, half, ql, qrow;
  f32x2 sc;         // |softmax scale| * log2(e), twice (the operand of v_pk_mul_f32)
  u32x4 q[8];       // Q^T as the B operand: d = 16c + 8h .. + 7 of query ql
  // LDS byte offsets of this lane's reads for step / column block 0; the others differ in the
  // swizzled chunk bits only (an XOR, see scores and pv).
  uint32_t kaddr;
  uint32_t vaddr;
  f32x16 o[4];      // O^T, dv = 32 jd + 8g + 4h + r in register 4g + r
  f32x16 s[2];      // scores of the block in flight
  u32x4 p[2][2];    // P of the block to multiply, BF16 pairs: [32-key half][MFMA t]
  float m;
  f32x2 l;          // row sum of this lane's keys, in two halves (added at the end)
  int q0;           // the wave's first query row (uniform)
};

// S^T = K Q^T for one 64-key block in LDS.
__device__ __forceinline__ void scores(Wave& w, lptr<uint8_t> kbuf) {
#pragma unroll
  for (int sb = 0; sb < 2; ++sb) {
    w.s[sb] = f32x16{};
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      // Chunk 2c + h of row ql, swizzled: (2c + h) ^ x = 2c ^ (h ^ x), so step c flips bits 5-7.
      const u32x4 k = *reinterpret_cast<lptr<u32x4>>(kbuf + (w.kaddr ^ (c << 5)) + sb * 32 * kRowBytes);
      w.s[sb] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, k),
                                                        __builtin_bit_cast(bf16x8, w.q[c]), w.s[sb], 0, 0, 0);
    }
  }
}

// O^T += V^T P^T for one 64-key block in LDS. MFMA t of a 32-key half takes score registers
// 8t .. 8t + 7 as its slots: keys 16t + 4h + 0..3 and 16t + 8 + 4h + 0..3, the two quads that
// the two transposing reads deliver.
__device__ __forceinline__ void pv(Wave& w, lptr<uint8_t> vbuf) {
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int jd = 0; jd < 4; ++jd) {
        // Second quad: 8 rows on (row bit 3, so swizzle bit 3 of the chunk, byte bit 7);
        // column block jd: chunk + 4 jd (byte bits 6-7).
        const int off = (32 * sb + 16 * t) * kRowBytes;
        const i16x4 lo = __builtin_amdgcn_ds_read_tr16_b64_v4i16(
            reinterpret_cast<lptr<i16x4>>(vbuf + (w.vaddr ^ (jd << 6)) + off));
        const i16x4 hi = __builtin_amdgcn_ds_read_tr16_b64_v4i16(
            reinterpret_cast<lptr<i16x4>>(vbuf + (w.vaddr ^ (jd << 6) ^ (1 << 7)) + off + 8 * kRowBytes));
        const bf16x8 va = __builtin_bit_cast(bf16x8, __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7));
        w.o[jd] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(va, __builtin_bit_cast(bf16x8, w.p[sb][t]), w.o[jd], 0, 0,
                                                          0);
      }
}

// Softmax of the scores of block kb (keys kb .. kb + 63) into P, with the lazy rescale.
__device__ __forceinline__ void softmax_block(Wave& w, int jb) {
  const int kb = jb * kKeyBlock;
  // Only a block that reaches past the wave's first row holds keys some of its rows must not
  // see (keys past the sequence lie past every valid row, so in such a block too). The test
  // is uniform (a scalar branch around the selects, which rewrite the scores in place: a
  // second copy of the whole softmax made the register allocator spill).
  if (kb + kKeyBlock - 1 > w.q0) {
    // key_of(kb + 32 sb, v, h) <= qrow, with the lane's part on the right so that the
    // register's part is an inline constant (hoisted keys would take 32 registers).
    const int lim = w.qrow - kb - 4 * w.half;
#pragma unroll
    for (int sb = 0; sb < 2; ++sb)
#pragma unroll
      for (int v = 0; v < 16; ++v)
        w.s[sb][v] = key_of(32 * sb, v, 0) <= lim ? w.s[sb][v] : -__builtin_inff();
  }
  // Scaled scores rounded before the max, so that the row's largest one minus m is exactly 0
  // (an fma of the raw score against -m leaves the product's rounding error, up to 2^39 for
  // scores near 2^64, in the exponent).
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; v += 2) {
      const f32x2 x = f32x2{w.s[sb][v], w.s[sb][v + 1]} * w.sc;
      w.s[sb][v] = x[0];
      w.s[sb][v + 1] = x[1];
    }
  float mx = w.s[0][0];
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; ++v) mx = fmaxf(mx, w.s[sb][v]);
  const f32x2 mxs = both_halves(mx);
  mx = fmaxf(mxs[0], mxs[1]);
  // The first block always moves m (from -inf): alpha = 0 clears nothing but zeros.
  const bool grow = mx > w.m + 0.5f;
  if (__builtin_amdgcn_ballot_w64(grow) != 0) {
    const float m_new = grow ? mx : w.m;
    const float alpha = __builtin_amdgcn_exp2f(w.m - m_new);
    w.m = m_new;
    w.l *= alpha;
#pragma unroll
    for (int jd = 0; jd < 4; ++jd) w.o[jd] *= alpha;
  }
  // s - m by v_pk_add_f32 (two scores an instruction; s + (-m) rounds as s - m does). The pair
  // is opaque to the compiler, which otherwise splits the packed add into two v_sub.
  f32x2 neg_m = {-w.m, -w.m};
  asm volatile("" : "+v"(neg_m));
#pragma unroll
  for (int sb = 0; sb < 2; ++sb)
#pragma unroll
    for (int v = 0; v < 16; v += 2) {
      const f32x2 x = f32x2{w.s[sb][v], w.s[sb][v + 1]} + neg_m;
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

__device__ __forceinline__ void attn_tile(Lds& lds, uint32_t tile_word, uint32_t n_tiles, int wave, int lane,
                                          int tid) {
  // Read the arguments afresh for every tile (hoisted, they would hold scalar registers).
  KernargPtr ap = kernargs();
  asm volatile("" : "+s"(ap));
  const auto& a = *ap;
  const int seqlen = a.seqlen;
  const uint32_t bh = fast_div(tile_word, a.div_n_tiles);
  const int tile = static_cast<int>(tile_word - bh * n_tiles);
  const uint32_t bq = fast_div(bh, a.div_heads);
  const int b = static_cast<int>(bq);
  const int h = static_cast<int>(bh - bq * static_cast<uint32_t>(a.heads));
  const int hk = static_cast<int>(fast_div(static_cast<uint32_t>(h), a.div_group));
  const int tile_q0 = tile * kTileRows;
  const int q0 = tile_q0 + wave * kWaveRows;

  // Blocks of the tile (all waves load them) and of this wave (the ones it computes; the
  // last holds its diagonal; none when its rows are all past the sequence).
  const int key_end = min(seqlen, tile_q0 + kTileRows);
  const int n = (key_end + kKeyBlock - 1) / kKeyBlock;
  const int n_w = q0 < seqlen ? min(q0 + kWaveRows - 1, seqlen - 1) / kKeyBlock + 1 : 0;

  Wave w;
  w.lane = lane;
  w.half = lane >> 5;
  w.ql = lane & 31;
  w.qrow = q0 + w.ql;
  w.q0 = q0;
  const bool qvalid = w.qrow < seqlen;
  const int qload = qvalid ? w.qrow : seqlen - 1;
  const float scale = a.scale_log2;
  w.sc = f32x2{fabsf(scale), fabsf(scale)};
  // Kept in one VGPR pair, opaque: the scalar registers are the scarcer ones here, and a scale
  // the compiler can see it splats into 16 VGPRs (a pair per v_pk_mul_f32 of a score tile).
  asm volatile("" : "+v"(w.sc));
  const uint32_t q_sign = scale < 0.0f ? 0x80008000u : 0u;

  const gptr<const uint8_t> qbase = global<const uint8_t>(a.q) +
      (b * a.q_stride[0] + static_cast<int64_t>(qload) * a.q_stride[1] + h * a.q_stride[2]) * 2;
  const gptr<const uint8_t> kbase = global<const uint8_t>(a.k) + (b * a.k_stride[0] + hk * a.k_stride[2]) * 2;
  const gptr<const uint8_t> vbase = global<const uint8_t>(a.v) + (b * a.v_stride[0] + hk * a.v_stride[2]) * 2;
  const uint32_t k_row = static_cast<uint32_t>(a.k_stride[1] * 2);
  const uint32_t v_row = static_cast<uint32_t>(a.v_stride[1] * 2);

#pragma unroll
  for (int c = 0; c < 8; ++c) {
    w.q[c] = *global_cast<const u32x4>(qbase + 2 * (16 * c + 8 * w.half));
    w.q[c] ^= q_sign;
  }
  w.kaddr = w.ql * kRowBytes + ((w.half ^ (lane & 15)) << 4);
  {
    // Transposing read, lane m of its 16-lane group: 4 columns (8 bytes) of key row m / 4 of
    // the quad, columns 16 gq + 4 (m % 4) of the 32-column block.
    const int m16 = lane & 15, gq = (lane >> 4) & 1;
    const int r = 4 * w.half + (m16 >> 2);  // row within the pair of quads, 0..7
    const int chunk = 2 * gq + ((m16 >> 1) & 1);
    w.vaddr = r * kRowBytes + ((chunk ^ r) << 4) + 8 * (m16 & 1);
  }
  // Every register of the state defined at the start of the tile: left undefined on the paths
  // that skip the compute, they stayed live across the persistent loop and caused spills.
#pragma unroll
  for (int jd = 0; jd < 4; ++jd) w.o[jd] = f32x16{};
  w.s[0] = w.s[1] = f32x16{};
  w.p[0][0] = w.p[0][1] = w.p[1][0] = w.p[1][1] = u32x4{};
  w.m = -__builtin_inff();
  w.l = f32x2{};

  // Generic -> LDS address space (a C cast is clang's address-space conversion). Buffer i of
  // K is kbuf + i * kBlockBytes (arithmetic, not an array the compiler would put in scratch).
  const lptr<uint8_t> kbuf = (lptr<uint8_t>)lds.k[0];
  const lptr<uint8_t> vbuf = (lptr<uint8_t>)lds.v[0];
  lptr<uint32_t> bad_slot = (lptr<uint32_t>)&lds.bad_key;

  // Prologue: the previous tile's LDS reads are over; reset the NaN slot; K_0, K_1, V_0.
  barrier();
  if (tid == 0) *bad_slot = 0x7FFFFFFFu;
  // Two staging sets (the loop's): K_0 and V_0, then K_1 (its load latency is paid once a tile).
  Stage ks, vs;
  load_block(ks, kbase, k_row, 0, seqlen, tid);
  load_block(vs, vbase, v_row, 0, seqlen, tid);
  barrier();
  store_block(kbuf, ks, tid);
  if (n > 1) load_block(ks, kbase, k_row, kKeyBlock, seqlen, tid);
  if (tile_q0 == 0) sanitize_v(vs, 0, seqlen, tid, bad_slot);
  store_block(vbuf, vs, tid);
  if (n > 1) store_block(kbuf + kBlockBytes, ks, tid);
  barrier();
  if (n_w > 0) {
    scores(w, kbuf);
    softmax_block(w, 0);
  }
  barrier();  // #0
  if (n > 2) load_block(ks, kbase, k_row, 2 * kKeyBlock, seqlen, tid);
  if (n > 1) load_block(vs, vbase, v_row, kKeyBlock, seqlen, tid);
  if (wave >= kWaves / 2) barrier();  // waves 4-7 run half an iteration behind

  for (int j = 0; j < n; ++j) {
    // Matrix phase: P·V of block j, scores of block j + 1.
    __builtin_amdgcn_s_setprio(1);
    if (j < n_w) pv(w, vbuf + (j & 1) * kBlockBytes);
    if (j + 1 < n_w) scores(w, kbuf + ((j + 1) & 1) * kBlockBytes);
    __builtin_amdgcn_s_setprio(0);
    if (j + 2 < n) store_block(kbuf + (j & 1) * kBlockBytes, ks, tid);
    if (j + 1 < n) {
      if ((j + 1) * kKeyBlock >= tile_q0) sanitize_v(vs, (j + 1) * kKeyBlock, seqlen, tid, bad_slot);
      store_block(vbuf + ((j + 1) & 1) * kBlockBytes, vs, tid);
    }
    if (j + 3 < n) load_block(ks, kbase, k_row, (j + 3) * kKeyBlock, seqlen, tid);
    if (j + 2 < n) load_block(vs, vbase, v_row, (j + 2) * kKeyBlock, seqlen, tid);
    barrier();
    // Vector phase: softmax of block j + 1.
    if (j + 1 < n_w) softmax_block(w, j + 1);
    barrier();
  }
  if (wave < kWaves / 2) barrier();

  const f32x2 ls = both_halves(w.l[0] + w.l[1]);
  const float l_row = ls[0] + ls[1];  // the same sum in both lanes of the row
  const bool saw_bad_v = static_cast<uint32_t>(w.qrow) >= *bad_slot;
  if (!qvalid) return;
  const float inv = saw_bad_v ? __builtin_nanf("") : __builtin_amdgcn_rcpf(l_row);
  // The output arguments read afresh here: held through the key loop they took scalar
  // registers that the loop needs (SGPR spills).
  KernargPtr ep = kernargs();
  asm volatile("" : "+s"(ep));
  const auto& e = *ep;
  const gptr<uint8_t> orow = global<uint8_t>(e.out) +
      (b * e.o_stride[0] + static_cast<int64_t>(w.qrow) * e.o_stride[1] + h * e.o_stride[2]) * 2;
#pragma unroll
  for (int jd = 0; jd < 4; ++jd)
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const uint32_t lo = pack_bf16(w.o[jd][4 * g] * inv, w.o[jd][4 * g + 1] * inv);
      const uint32_t hi = pack_bf16(w.o[jd][4 * g + 2] * inv, w.o[jd][4 * g + 3] * inv);
      typedef __attribute__((ext_vector_type(2))) unsigned u32x2;
      *global_cast<u32x2>(orow + 2 * key_of(32 * jd, 4 * g, w.half)) = u32x2{lo, hi};
    }
  if (e.lse != 0 && w.half == 0) {
    // Natural-log sum-exp of the scaled scores: ln 2 * (m + log2(sum 2^(x - m))).
    global<float>(e.lse)[(static_cast<int64_t>(b) * e.heads + h) * e.seqlen + w.qrow] =
        0.69314718055994531f * (w.m + __builtin_amdgcn_logf(l_row));
  }
}

}  // namespace
}  // namespace zyfa::kernels

using zyfa::kernels::AttnFwdArgs;

// The argument is declared so that the kernarg segment has its size; the body reads it
// through the kernarg pointer (attn_fwd_common.h).
extern "C" __global__ __launch_bounds__(zyfa::kernels::bf16_d128_gfx950::kThreads) void attn_fwd_bf16_d128_gfx950(
    AttnFwdArgs) {
  using namespace zyfa::kernels;
  __shared__ Lds lds;
  const auto& a = *kernargs();
  const gptr<const uint32_t> jt = global<const uint32_t>(a.job_table);
  const uint32_t grid = jt[0];
  const uint32_t n_tiles = jt[1];
  const uint32_t wg = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 63;
  const int wave = __builtin_amdgcn_readfirstlane(tid >> 6);
  const uint32_t begin = jt[2 + wg];
  const uint32_t end = jt[3 + wg];
  for (uint32_t word = 2 * begin; word < 2 * end; ++word) {
    const uint32_t t = jt[3 + grid + word];
    if (t != kNoTileWord) attn_tile(lds, t, n_tiles, wave, lane, tid);
  }
}
