// FP8 e4m3 causal attention forward for gfx950, d_qk = 192 / d_v = 128: the 8-wave ping-pong
// kernel of attn_fwd_bf16_gfx950.h (its tile loop, LDS ordering, barriers and softmax max /
// lazy rescale) with the FP8 parts below. At d_qk = 128 the same parts without K's 64-byte
// part serve varlen batches and seqlen_k > seqlen_q (attn_fwd_fp8_d128_gfx950.hip; fixed
// lengths at d 128 run the generated kernel).
//
// Scores: S^T = K Q^T by v_mfma_scale_f32_32x32x64_f8f6f4 (E8M0 scales 1.0), K the A operand
// from LDS, Q^T the B operand in 24 registers, 3 steps of 64 d per 32-key half; lane l holds
// d 64c + 16h .. + 15 and 64c + 32 + 16h .. + 15 of step c (h = l / 32), as in the baseline.
// P: per 64-key block, P is computed times 2^e, e = floor(m - block max) (the block's largest
// probability is rounded to e4m3 as a value in (1/2, 1], not a subnormal), exact exp2 then RNE
// to e4m3; the PV MFMA removes 2^e through B's E8M0 scale 127 - e, and one more MFMA of the
// same P with A all ones adds the rounded values times 2^-e into the row sum. O^T += V^T P^T with V^T from LDS by ds_read_b64_tr_b8: the
// lane's A bytes 4d .. 4d + 3 are the keys of its P dword d (keys 32 sb + 8 g + 4 h + 0..3,
// d = 4 sb + g), two dwords (8 keys) a transposing read.
//
// LDS: a K block is 64 rows of d 0-127 (128 bytes, 8 KiB) then 64 rows of d 128-191 (64 bytes,
// 4 KiB); a V block 64 rows of 128 bytes. In 128-byte rows chunk c of row r sits at
// c ^ swz_hi(r) (two rows share the 64 banks: the 16 rows of a ds_read_b128 phase fall on
// distinct banks); in 64-byte rows at c ^ swz64(r) (four rows share the banks). The K rows'
// first part and V arrive by 1 KiB LDS-DMA loads (one per wave), the 64-byte part by two
// 256-byte dword LDS-DMA loads per wave.
//
// Descales: Q's and K's fold into the score scale (a negative product flips Q's signs, exact),
// V's into the output factor. A V element that some row must not see is read as 0 when
// non-finite (e4m3fn: 0x7F, 0xFF), the rows at or after it become NaN (sanitize_v).
#pragma once

#include "attn_fwd_bf16_gfx950.h"

namespace zyfa::kernels {
namespace {

typedef __attribute__((ext_vector_type(2))) int i32x2;

inline constexpr int kFp8LoRowBytes = 128;  // d 0-127 of K, and V
inline constexpr int kFp8HiRowBytes = 64;   // d 128-191 of K
inline constexpr int kFp8LoBytes = kKeyBlock * kFp8LoRowBytes;
// A K block: d 0-127, then for d_qk = 192 d 128-191.
template <int kDqk>
inline constexpr int kFp8KBlockBytes = kFp8LoBytes + (kDqk > 128 ? kKeyBlock * kFp8HiRowBytes : 0);
inline constexpr int kFp8VBlockBytes = kKeyBlock * kFp8LoRowBytes;

// Swizzle of the 16-byte chunks of row r of K's 64-byte part.
__device__ inline constexpr int swz64(int r) { return (r >> 2) & 3; }

template <int kDqk>
struct Fp8Lds {
  uint8_t k[3][kFp8KBlockBytes<kDqk>];
  uint8_t v[3][kFp8VBlockBytes];
  uint32_t bad_key;
};

struct Fp8Wave {
  int lane, half, ql, qrow;
  f32x2 sc;       // |softmax scale * log2(e) * Q's and K's descales|, twice
  uint32_t kaddr;     // LDS offsets of this lane's reads (see scores and pv)
  uint32_t kaddr_hi;
  uint32_t vaddr;
  // O^T, dv = 32 jd + 8g + 4h + r in register 4g + r of o[jd]; o[4]: the row sum of P in
  // every register (one more MFMA with A all ones), rescaled with the output.
  f32x16 o[5];
  f32x16 s[2];    // scores of the block in flight
  u32x4 p[2];     // P of the block to multiply, e4m3 codes, byte 16 sb + 4 g + r
  int p_scale;    // its E8M0 scale, 127 - e
  float m;
  f32x2 l;        // unused (the row sum is o[4]); the shared rescale scales it
  int q0;
  float v_descale;
};

// The 64-byte part of a K block (4 KiB) into LDS: two dword LDS-DMA loads a wave, load i of
// wave w writes rows 8w + 4i .. + 3 (M0 + 4 x lane), lane at dword lane % 16 of its row, and
// loads the dword that swz64 puts there.
__device__ __forceinline__ void dma_k_hi_fp8(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                             int kb, int seqlen, int wave, int lane) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = 8 * wave + 4 * i + (lane >> 4);
    const int pos = lane & 15;
    const uint32_t chunk = static_cast<uint32_t>((pos >> 2) ^ swz64(row));
    uint32_t m0 = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(buf)) + (8 * wave + 4 * i) * kFp8HiRowBytes;
    asm volatile("" : "+s"(m0));
    const uint32_t key = static_cast<uint32_t>(min(kb + row, seqlen - 1));
    const uint32_t voff = key * row_bytes + kFp8LoRowBytes + 16u * chunk + 4u * static_cast<uint32_t>(pos & 3);
    asm volatile("s_nop 0\n\tglobal_load_lds_dword %0, %1" ::"v"(voff), "s"(base), "{m0}"(m0) : "memory");
  }
}

// Q^T as the B operand: step c in q[2c] (d 64c + 16h .. + 15) and q[2c + 1] (+ 32).
template <int kDqk>
using Fp8QRegs = u32x4[kDqk / 32];

struct Fp8Stage {
  u32x4 x;
};

// kDqk: 192, or 128 (then K blocks hold d 0-127 only, two score steps); kAny: the any-lengths
// instantiation (varlen batches, seqlen_k > seqlen_q; see SeqGeom).
template <int kDqk, bool kAny = false>
struct Fp8Kernel {
  static_assert(kDqk == 128 || kDqk == 192, "d_qk 128 or 192");
  static constexpr bool kAnyLengths = kAny;
  static constexpr bool kUnrollSteady = true;
  // Options of the BF16 kernel's (Bf16Kernel) that attn_tile reads: off here.
  static constexpr bool kAsmStaged = false, kSpareV0 = false, kFoldOffsets = false, kFirstSums = false;
  static constexpr int kSteps = kDqk / 64;  // score MFMAs of 64 d per 32-key half
  static constexpr int kKLoads = kDqk > 128 ? 3 : 1;  // LDS-DMA loads of a K block per wave
  using Lds = Fp8Lds<kDqk>;
  using Wave = Fp8Wave;
  using QRegs = Fp8QRegs<kDqk>;
  using Stage = Fp8Stage;
  static constexpr int kElemBytes = 1;
  static constexpr int kKBlockBytes = kFp8KBlockBytes<kDqk>;
  static constexpr int kVBlockBytes = kFp8VBlockBytes;

  __device__ static __forceinline__ void load_q(QRegs& q, gptr<const uint8_t> qbase, int half) {
#pragma unroll
    for (int c = 0; c < kSteps; ++c)
#pragma unroll
      for (int part = 0; part < 2; ++part)
        q[2 * c + part] = *global_cast<const u32x4>(qbase + 64 * c + 32 * part + 16 * half);
  }
  // The score scale (descales folded in), V's descale, the LDS read offsets; returns the sign
  // flip of Q^T.
  template <class Args>
  __device__ static __forceinline__ uint32_t setup(Wave& w, const Args& a, const TileCoords& tc) {
    const float qd = load_descale(a.q_descale_ptr, a.q_descale, a.descale_stride[0], a.descale_stride[1], tc.b, tc.hk);
    const float kd = load_descale(a.k_descale_ptr, a.k_descale, a.descale_stride[2], a.descale_stride[3], tc.b, tc.hk);
    w.v_descale =
        load_descale(a.v_descale_ptr, a.v_descale, a.descale_stride[4], a.descale_stride[5], tc.b, tc.hk);
    const float scale = a.scale_log2 * qd * kd;
    w.sc = f32x2{fabsf(scale), fabsf(scale)};
    asm volatile("" : "+v"(w.sc));  // one VGPR pair (see Bf16Kernel::setup)
    w.kaddr = w.ql * kFp8LoRowBytes + ((w.half ^ swz_hi(w.ql)) << 4);
    w.kaddr_hi = w.ql * kFp8HiRowBytes + ((w.half ^ swz64(w.ql)) << 4);
    // Transposing read of lane 2k + c of 16-lane group G: 8 bytes (columns 16 (G % 2) + 8c ..)
    // of key row k of the 8 that its group's lanes receive: rows 4h + k % 4 + 8 (k / 4) of the
    // pair of P dwords (+ 16 per pair, see pv).
    const int grp = (w.lane >> 4) & 1, k = (w.lane & 15) >> 1, c = w.lane & 1;
    const int r = 4 * w.half + (k & 3) + 8 * (k >> 2);
    w.vaddr = r * kFp8LoRowBytes + ((grp ^ swz_hi(r)) << 4) + 8 * c;
    w.p[0] = w.p[1] = u32x4{};
    w.p_scale = 127;
    return scale < 0.0f ? 0x80808080u : 0u;
  }

  __device__ static __forceinline__ void dma_k(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                               int kb, int seqlen, int wave, int lane) {
    dma_block_hi(buf, base, row_bytes, 0, kb, seqlen, wave, lane);
    if constexpr (kDqk > 128) dma_k_hi_fp8(buf + kFp8LoBytes, base, row_bytes, kb, seqlen, wave, lane);
  }
  __device__ static __forceinline__ void dma_v(lptr<uint8_t> buf, gptr<const uint8_t> base, uint32_t row_bytes,
                                               int kb, int seqlen, int wave, int lane) {
    dma_block_hi(buf, base, row_bytes, 0, kb, seqlen, wave, lane);
  }

  // A V block to registers: thread t takes chunk t % 8 of row t / 8 (rows past the sequence
  // read the last row; sanitize_v clears them).
  __device__ static __forceinline__ void load_v(Stage& st, gptr<const uint8_t> base, uint32_t row_bytes, int kb,
                                                int seqlen, int tid) {
    const uint32_t key = static_cast<uint32_t>(min(kb + (tid >> 3), seqlen - 1));
    st.x = *global_cast<const u32x4>(base + (key * row_bytes + 16u * static_cast<uint32_t>(tid & 7)));
  }
  __device__ static __forceinline__ void store_v(lptr<uint8_t> buf, const Stage& st, int tid) {
    const int r = tid >> 3, c = tid & 7;
    *reinterpret_cast<lptr<u32x4>>(buf + r * kFp8LoRowBytes + ((c ^ swz_hi(r)) << 4)) = st.x;
  }
  // Keys past the sequence become 0, and so do non-finite codes (low 7 bits all ones), whose
  // smallest key goes to the LDS slot.
  __device__ static __forceinline__ void sanitize_v(Stage& st, int kb, int seqlen, int tid, lptr<uint32_t> bad) {
    const int key = kb + (tid >> 3);
    const bool past = key >= seqlen;
    uint32_t any = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t x = st.x[i];
      // 0x80 in each byte whose low 7 bits are all ones (+1 carries into bit 7 only there).
      const uint32_t nf = ((x & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u;
      any |= nf;
      st.x[i] = past ? 0u : x & ~((nf >> 7) * 0xFFu);
    }
    if (any != 0 && !past)
      __hip_atomic_fetch_min(bad, static_cast<uint32_t>(key), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  }

  // Until only this iteration's loads are in flight: a K block's three and a V block's one.
  // (d_qk = 128: a K block's one.)
  __device__ static __forceinline__ void wait_loads(bool k, bool v) {
    if (kKLoads == 1 && k && v)
      asm volatile("s_waitcnt vmcnt(2)" ::: "memory");
    else if (k && v)
      asm volatile("s_waitcnt vmcnt(4)" ::: "memory");
    else if (kKLoads == 1 && k)
      asm volatile("s_waitcnt vmcnt(1)" ::: "memory");
    else if (k)
      asm volatile("s_waitcnt vmcnt(3)" ::: "memory");
    else if (v)
      asm volatile("s_waitcnt vmcnt(1)" ::: "memory");
    else
      asm volatile("s_waitcnt vmcnt(0)" ::: "memory");
  }

  // S^T = K Q^T for one 64-key block in LDS: step c's two 16-byte pieces of row ql are chunks
  // 4c + h and 4c + 2 + h (c < 2, 128-byte part), or h and 2 + h of the 64-byte part.
  __device__ static __forceinline__ void scores(Wave& w, const QRegs& q, lptr<uint8_t> kbuf) {
    w.s[0] = w.s[1] = f32x16{};
#pragma unroll
    for (int c = 0; c < kSteps; ++c)
#pragma unroll
      for (int sb = 0; sb < 2; ++sb) {
        u32x4 k[2];
#pragma unroll
        for (int part = 0; part < 2; ++part) {
          const uint32_t at = c < 2 ? (w.kaddr ^ ((4 * c + 2 * part) << 4)) + sb * 32 * kFp8LoRowBytes
                                    : kFp8LoBytes + (w.kaddr_hi ^ ((2 * part) << 4)) + sb * 32 * kFp8HiRowBytes;
          k[part] = *reinterpret_cast<lptr<u32x4>>(kbuf + at);
        }
        const i32x8 ka = __builtin_bit_cast(i32x8, __builtin_shufflevector(k[0], k[1], 0, 1, 2, 3, 4, 5, 6, 7));
        const i32x8 qb =
            __builtin_bit_cast(i32x8, __builtin_shufflevector(q[2 * c], q[2 * c + 1], 0, 1, 2, 3, 4, 5, 6, 7));
        w.s[sb] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(ka, qb, w.s[sb], 0, 0, 0, 127, 0, 127);
      }
    sched_reads_ahead<2 * kSteps, 2>();
  }

  // O^T += V^T P^T: column block jd's A operand is 4 transposing reads, pair pr of P dwords
  // (keys 16 pr + 4h + 0..3 and + 8) at rows 16 pr + the lane's row; chunk 2 jd + G % 2.
  // The steady iterations' matrix phase (attn_tile): here P·V, then the scores.
  __device__ static __forceinline__ void pv_scores(Wave& w, const QRegs& q, lptr<uint8_t> vbuf, lptr<uint8_t> kbuf) {
    pv(w, vbuf);
    scores(w, q, kbuf);
  }
  __device__ static __forceinline__ void pv(Wave& w, lptr<uint8_t> vbuf) {
    const i32x8 pb = __builtin_bit_cast(i32x8, __builtin_shufflevector(w.p[0], w.p[1], 0, 1, 2, 3, 4, 5, 6, 7));
#pragma unroll
    for (int jd = 0; jd < 4; ++jd) {
      i32x2 v[4];
#pragma unroll
      for (int pr = 0; pr < 4; ++pr)
        v[pr] = __builtin_amdgcn_ds_read_tr8_b64_v2i32(
            reinterpret_cast<lptr<i32x2>>(vbuf + (w.vaddr ^ (jd << 5)) + 16 * pr * kFp8LoRowBytes));
      const i32x8 va = {v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1], v[3][0], v[3][1]};
      w.o[jd] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(va, pb, w.o[jd], 0, 0, 0, 127, 0, w.p_scale);
    }
    // The row sum of the same rounded P (times 2^-e): A all e4m3 1.0 (0x38).
    const i32x8 ones = {0x38383838, 0x38383838, 0x38383838, 0x38383838,
                        0x38383838, 0x38383838, 0x38383838, 0x38383838};
    w.o[4] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(ones, pb, w.o[4], 0, 0, 0, 127, 0, w.p_scale);
    sched_reads_ahead<4, 4>();
  }

  // Softmax of the scores of block jb into P (e4m3 codes and their scale); kMask as in
  // block_max_rescale.
  template <bool kMask = true>
  __device__ static __forceinline__ void softmax(Wave& w, int jb) {
    xdl16_read_guard();  // the scores' and P·V's MFMAs wrote s and o
    const float mx = block_max_rescale<kAny, kMask>(w, jb);
    // The scaled scores as rounded: opaque, so that the compiler cannot fuse their product
    // with the shift below into one multiply-add, whose unrounded product differs from the
    // rounded maximum by up to 2^39 for scores near 2^64 (exp2 of that is 0 or inf).
#pragma unroll
    for (int sb = 0; sb < 2; ++sb) asm volatile("" : "+v"(w.s[sb]));
    const int e = static_cast<int>(fminf(__builtin_floorf(w.m - mx), 126.0f));
    f32x2 neg_shift = {static_cast<float>(e) - w.m, static_cast<float>(e) - w.m};
    // A row that sees no key (fewer keys than queries) keeps m = -inf: probabilities 0.
    if constexpr (kAny) neg_shift = w.m == -__builtin_inff() ? f32x2{0.0f, 0.0f} : neg_shift;
    asm volatile("" : "+v"(neg_shift));
#pragma unroll
    for (int sb = 0; sb < 2; ++sb)
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        float p[4];
#pragma unroll
        for (int r = 0; r < 4; r += 2) {
          const f32x2 x = f32x2{w.s[sb][4 * g + r], w.s[sb][4 * g + r + 1]} + neg_shift;
          p[r] = __builtin_amdgcn_exp2f(x[0]);
          p[r + 1] = __builtin_amdgcn_exp2f(x[1]);
        }
        int c = __builtin_amdgcn_cvt_pk_fp8_f32(p[0], p[1], 0, false);
        c = __builtin_amdgcn_cvt_pk_fp8_f32(p[2], p[3], c, true);
        w.p[sb][g] = static_cast<uint32_t>(c);
      }
    w.p_scale = 127 - e;
  }

  __device__ static __forceinline__ float out_scale(const Wave& w) {
    xdl16_read_guard();  // the epilogue reads the last P·V MFMAs' results
    return w.v_descale;
  }
  __device__ static __forceinline__ float row_sum(const Wave& w) { return w.o[4][0]; }
};

}  // namespace
}  // namespace zyfa::kernels
