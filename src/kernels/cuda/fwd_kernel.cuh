// Causal prefill attention forward for Hopper (sm_90a): one persistent CTA per SM walking
// its slice of the job table (src/host/job_table.h; the cuda backend balances it by work,
// JobSchedule::kBalancedWork).
//
// A CTA has three warpgroups. Warpgroup 0 produces: one thread issues the bulk tensor copies
// (TMA) of q, k and v tiles into shared memory, completing on mbarriers. For FP8, v arrives
// already transposed (vᵀ, keys contiguous, from the pre-pass in transpose_v.cu), since FP8
// wgmma reads its B operand K-major only. Warpgroups
// 1 and 2 consume: each owns 64 of the 128 query rows of a tile and runs S = q kᵀ and
// O += P v with wgmma, the softmax in registers in between. Within a consumer, the q kᵀ of
// key block n+1 is issued before the P v of block n, so the tensor cores work while the
// softmax of the next block waits for its scores. FP8 at d_qk = 128 also writes the next P
// into a second register buffer while the current P v runs, so that only the rescale of O
// waits for it.
//
// Numerics: base-2 softmax with lazy rescaling (the running maximum is only moved when it grows
// by more than kRescaleThreshold). BF16: P rounded to bf16, fp32 row sums. FP8: P rounded to
// e4m3 (lean P at d_qk = 128: the e4m3 code of 2^x from one multiply-add; exact exp2 and
// conversion at d_qk = 192); the denominator is the sum of the same rounded P, computed by
// the tensor cores through eight extra rows of ones appended to vᵀ and moved into fp32
// registers after every key block. Lean P runs first against the reference maximum it has;
// the row maxima are only computed (and the reference moved) for a key block whose codes
// would leave the e4m3 range.
#pragma once

#include <cuda.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "host/job_table.h"
#include "kernels/cuda/fwd_args.h"
#include "kernels/cuda/fwd_launch.h"
#include "kernels/cuda/ptx.cuh"
#include "kernels/cuda/unseen_v.cuh"
#include "kernels/varlen/varlen_jobs.h"

namespace zyfa::cuda {

// kLengths: the instantiation for varlen batches and seqlen_k > seqlen (docs/design.md, "How
// the Hopper kernel reads them"). The fixed-length causal calls keep their own: the lengths'
// code (prefix-sum loads, the edge arithmetic) changed ptxas's schedule of the FP8 d128 kernel
// enough to cost it 12% at S = 32K, with the same instructions in its key loop.
template <bool kFp8, int kDqk, int kStages, bool kLengths = false>
struct FwdConfig {
  static constexpr bool kIsFp8 = kFp8;
  static constexpr bool kAnyLengths = kLengths;
  static constexpr FwdTuning kTuning = fwd_tuning(kFp8, kDqk);  // fwd_tuning.h
  static_assert(kTuning.stages == kStages, "instantiate with fwd_tuning(...).stages");
  static constexpr int kBlockM = kTuning.block_m;  // query rows per tile (= JobTableParams::tile_rows)
  static constexpr int kBlockN = kTuning.block_n;  // keys per block
  static constexpr int kDv = 128;
  static constexpr int kElem = kFp8 ? 1 : 2;
  // q and k tiles are stored as column chunks, each chunk [rows][kChunk] swizzled by the TMA:
  // 128-byte rows (128 B swizzle) where the head dim allows, else 64-byte rows (FP8 d_qk = 192).
  static constexpr int kChunk = kTuning.qk_chunk;
  static constexpr int kRowBytes = kChunk * kElem;
  static constexpr int kQkChunks = kDqk / kChunk;
  static constexpr int kQkSwizzle = kRowBytes == 128 ? 1 : 2;  // descriptor code: 128 B / 64 B
  static constexpr int kQkSbo = 8 * kRowBytes;              // bytes between 8-row groups
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kKChunkBytes = kBlockN * kRowBytes;
  static constexpr int kQBytes = kQkChunks * kQChunkBytes;
  static constexpr int kKBytes = kQkChunks * kKChunkBytes;
  // v: BF16 keeps the TMA layout ([keys][64 d] chunks, 128 B swizzle, read transposed by
  // wgmma); FP8 loads vᵀ into [136 rows: 128 d + 8 rows of ones][128 keys] (128 B swizzle).
  static constexpr int kVBytes = kFp8 ? 0 : kBlockN * kDv * kElem;
  static constexpr int kVtRows = kDv + 8;
  static constexpr int kVtBytes = kFp8 ? kVtRows * kBlockN : 0;
  static constexpr int kVLoadBytes = kBlockN * kDv * kElem;  // bytes one v block brings
  static constexpr int kKMmaK = kFp8 ? 32 : 16;  // K of one wgmma
  static constexpr int kThreads = 384;
  static constexpr float kRescaleThreshold = kFp8 ? 0.125f : (kDqk == 128 ? 0.5f : 8.0f);
  static constexpr bool kLeanP = kFp8 && kDqk == 128;
  // The lean-P kernel's techniques, each measured on an H200 (docs/performance.md, tuning log):
  // kPBeforeWait: lean P of the next key block is computed and packed into a second P register
  // buffer before the wait for the current P v (the exponentials only read the score
  // registers: ptxas places a full wgmma wait before any write to an accumulator register).
  // kLeanCarry: lean P keeps its per-row bias next to the running maximum (recomputed only
  // when that moves). kF16Pack: lean P writes code * 2^-24 (saturating multiply-add) and
  // rounds it to a whole code with the f16 conversion (2^-24 is the step of the f16
  // subnormals), so one byte permute per four keys gathers the codes: 7 instructions per four
  // keys instead of 11. kStaleMax: lean P first runs against the reference maximum it has, and
  // the row maxima are only computed when a code came out above 126 (the largest finite e4m3).
  // kHoistDesc: wgmma descriptors derived from per-CTA base descriptors by one add to the
  // address field; BF16 d 128 too since its output is staged (+0.5% on the varlen batch, S 32K
  // unchanged; before, it measured 0.9% slower at S 32K); the d 192 kernels compute them in
  // full. kSumFlush: FP8 row sums leave the tensor cores' accumulator after every key block
  // (kept there over a long row, the sum loses precision: the FP8 wgmma accumulates with
  // fewer bits than fp32).
  static constexpr bool kPBeforeWait = kLeanP;
  static constexpr bool kLeanCarry = kLeanP;
  static constexpr bool kHoistDesc = kLeanP || (!kFp8 && kDqk == 128);
  static constexpr bool kF16Pack = kLeanP;
  static constexpr bool kSumFlush = kFp8;
  static constexpr bool kStaleMax = kLeanP;
  // The two consumer warpgroups take turns issuing their tensor-core work (named barriers) so
  // that one computes its softmax while the other's matrix products run. Measured on an H200
  // (docs/performance.md): neutral for BF16; for FP8, whose softmax is short, 1-1.5% slower at
  // fixed lengths (S 32K) but faster on varlen batches (d 192 +2-3%, d 128 +0.5%), whose short
  // tiles' edges and epilogues it overlaps with the other warpgroup's matrix products.
  static constexpr bool kPingpong = !kFp8 || kLengths;
  // FP8 probabilities are written as 2^(x - max + kPShift): the row maximum gets 2^8 (2^6 with
  // kStaleMax) instead of 1, so values down to 2^-14 (2^-12) of it stay normal e4m3 (instead of
  // 2^-6) and underflow starts 8 (6) binades lower. Hopper has no scaled MMA for the per-block
  // scaling of the gfx950 kernels; this per-row shift fits under e4m3's 448 (2^8 * 2^0.125 <
  // 448 for the lazy reference maximum; with kStaleMax every code is checked to be at most 126,
  // i.e. 448) and cancels exactly in O / rowsum, since the row sum comes from the same P. BF16
  // P needs no shift.
  static constexpr float kPShift = !kFp8 ? 0.0f : kStaleMax ? float(kTuning.stale_max_p_shift) : 8.0f;
  // Lean P writes the e4m3 code of 2^x as round(8x + 56 + kLeanOffset). The linear fit's code
  // error lies in [-0.689, 0]; centring it (offset -0.344) minimizes the error of spread-out
  // rows but rounds keys close to the maximum one code down, which dominates near-uniform
  // rows. Half of it was the best compromise measured (docs/performance.md, "FP8 numerics").
  static constexpr float kLeanOffset = -0.172f;
  static constexpr float kLeanBias = 56.0f + 8.0f * kPShift + kLeanOffset;

  // Shared-memory layout (offsets from a 1024-byte-aligned base).
  static constexpr int kOffQ = 0;
  static constexpr int kOffK = kOffQ + kQBytes;
  static constexpr int kOffV = kOffK + kStages * kKBytes;
  static constexpr int kOffVt = kOffV + kStages * kVBytes;
  static constexpr int kOffBar = kOffVt + kStages * kVtBytes;
  // barriers: q_full, q_empty, k_full[S], k_empty[S], v_full[S], v_empty[S]
  static constexpr int kNumBars = 2 + 4 * kStages;
  static constexpr int kOffUnseen = kOffBar + kNumBars * 8;  // 2 words (unseen_v.cuh)
  // d 128: each consumer warp stages its 16 output rows in shared memory (stmatrix) and
  // sends them as bulk copies, instead of 32 scattered 4-byte stores per thread; without the
  // ping-pong both warpgroups' epilogues leave the tensor cores idle, so a short epilogue
  // counts at short sequences (docs/performance.md, tuning log). Rows of 256 bytes padded to
  // 272: the eight rows of one 8x8 matrix fall in different banks. FP8 d 192 measured 1% slower
  // with it at S 32K. BF16 d 128 makes room for it with two k/v stages instead of three
  // (fwd_tuning.h): +1.5% on the varlen batch, S 4K +3%, S 32K unchanged (varlen step 22).
  static constexpr bool kStagedOut = kDqk == 128;
  static constexpr int kStageRow = kDv * 2 + 16;
  static constexpr int kStageBytes = 64 * kStageRow;
  static constexpr int kOffO = (kOffUnseen + 8 + 127) / 128 * 128;
  static constexpr int kSmemBytes = (kStagedOut ? kOffO + 2 * kStageBytes : kOffUnseen + 8) + 1024;  // + alignment slack

  static_assert(kQChunkBytes % 1024 == 0 && kKChunkBytes % 1024 == 0 && kVBytes % 1024 == 0 &&
                kVtBytes % 1024 == 0, "tiles must keep 1024-byte alignment for the swizzle");
};

namespace detail {

struct TileCoord {
  int32_t b, h, hk, m;
};

__device__ __forceinline__ TileCoord decode_tile(uint32_t tile, uint32_t n_tiles, int32_t heads,
                                                 int32_t heads_k) {
  TileCoord c;
  const uint32_t bh = tile / n_tiles;
  c.m = static_cast<int32_t>(tile - bh * n_tiles);
  c.b = static_cast<int32_t>(bh / static_cast<uint32_t>(heads));
  c.h = static_cast<int32_t>(bh - static_cast<uint32_t>(c.b) * heads);
  c.hk = c.h / (heads / heads_k);
  return c;
}

// Where a tile's sequence lies: the tensor coordinates of its first query and key rows (the
// batch coordinate is 0 for varlen, whose sequences are packed along the rows), its lengths,
// and the first vᵀ column of its keys (FP8).
struct TileSeq {
  int32_t batch;   // tensor-map batch coordinate
  int32_t q0, k0;  // first rows of the sequence in q/out and k/v
  int32_t lq, lk;
  int32_t vt0;     // first vᵀ column (FP8 pre-pass layout)
};

// A load the compiler may neither merge with another nor hoist: tile_seq is called again where
// its values are needed, and a merged load would hold them in registers through the key loop.
__device__ __forceinline__ int32_t load_fresh(const int32_t* p) {
  int32_t v;
  asm volatile("ld.global.nc.s32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

template <class Cfg>
__device__ __forceinline__ TileSeq tile_seq(const FwdKernelArgs& args, const TileCoord& tc) {
  if constexpr (!Cfg::kAnyLengths) return {tc.b, 0, 0, args.seqlen, args.seqlen, 0};
  if (args.cu_seqlens_q == nullptr) return {tc.b, 0, 0, args.seqlen, args.seqlen_k, 0};
  const int32_t* cq = args.cu_seqlens_q + tc.b;
  const int32_t* ck = args.cu_seqlens_k + tc.b;
  const varlen::Span q = varlen::span_of(load_fresh(cq), load_fresh(cq + 1), args.total_q, args.seqlen);
  const varlen::Span k = varlen::span_of(load_fresh(ck), load_fresh(ck + 1), args.total_k, args.seqlen_k);
  return {0,           static_cast<int32_t>(q.start), static_cast<int32_t>(k.start), q.length, k.length,
          static_cast<int32_t>(varlen::group_first_column(tc.b, k.start))};
}

// The key blocks of query tile m of a sequence under the bottom-right causal mask (row i sees
// keys j <= i + lk - lq, j < lk), for rows below lq: blocks 0 .. blocks - 1 hold a key some
// row sees; blocks n >= masked hold a key some row must not see (the mask applies); blocks
// n >= exact hold the first key (walking down) of some row, which must compute its maximum
// there. The rows' last visible keys span fewer than kBlockM <= kBlockN keys, so exact and
// masked are at least blocks - 2: the edge of a tile is its last one or two blocks.
struct TileBlocks {
  int32_t blocks, masked, exact;
};
template <class Cfg>
__device__ __forceinline__ TileBlocks tile_blocks(const TileSeq& s, int32_t m) {
  static_assert(Cfg::kBlockM <= Cfg::kBlockN, "the edge of a tile must span at most two key blocks");
  const int32_t delta = s.lk - s.lq;
  const int32_t first_row = m * Cfg::kBlockM, last_row = min((m + 1) * Cfg::kBlockM, s.lq) - 1;
  const int32_t lim_max = min(last_row + delta, s.lk - 1), lim_min = min(first_row + delta, s.lk - 1);
  TileBlocks r;
  r.blocks = lim_max < 0 ? 0 : lim_max / Cfg::kBlockN + 1;
  r.masked = lim_min < 0 ? 0 : (lim_min + 1) / Cfg::kBlockN;
  r.exact = lim_min < 0 ? 0 : lim_min / Cfg::kBlockN;
  return r;
}

__device__ __forceinline__ float read_descale(const float* ptr, float value, int64_t sb, int64_t sh,
                                              int32_t b, int32_t hk) {
  return ptr ? __ldg(ptr + b * sb + hk * sh) : value;
}

// Ring position of a producer/consumer pipeline.
struct Ring {
  uint32_t index = 0, phase = 0;
  template <int kStages>
  __device__ __forceinline__ void advance() {
    if (++index == kStages) {
      index = 0;
      phase ^= 1;
    }
  }
};

// This CTA's slice of the job table (format: src/host/job_table.h).
struct JobSlice {
  const uint32_t* jobs;  // (tile_a, tile_b) pairs
  uint32_t n_tiles, begin, end;
};
__device__ __forceinline__ JobSlice cta_jobs(const uint32_t* table) {
  const uint32_t grid = table[0];
  return {table + 3 + grid, table[1], blockIdx.x < grid ? table[2 + blockIdx.x] : 0,
          blockIdx.x < grid ? table[3 + blockIdx.x] : 0};
}

// The mbarriers at Cfg::kOffBar: q_full, q_empty, then kStages each of k_full, k_empty,
// v_full, v_empty (8 bytes apart).
struct Barriers {
  uint32_t q_full, q_empty, k_full, k_empty, v_full, v_empty;
};
template <class Cfg, int kStages>
__device__ __forceinline__ Barriers barriers(uint32_t base) {
  const uint32_t bar = base + Cfg::kOffBar;
  const uint32_t k_full = bar + 16, k_empty = k_full + 8 * kStages;
  const uint32_t v_full = k_empty + 8 * kStages, v_empty = v_full + 8 * kStages;
  return {bar, bar + 8, k_full, k_empty, v_full, v_empty};
}

// Epilogue of a tile for one consumer thread: normalizes its output rows q_row[0..1] by the
// row sums (FP8: the ones-row column of O; BF16: the thread's partial sums over its lane quad),
// writes them as BF16 (NaN from row bad_v_row on: those rows see a non-finite v the kernel
// zeroed, unseen_v.cuh) and the natural-log LSE. A row that sees no key (a varlen sequence with
// fewer keys than queries) has a zero row sum: zeros and LSE -inf. `stage`: this warpgroup's
// output stage in shared memory (kStagedOut).
template <class Cfg, int kOAcc>
__device__ __forceinline__ void write_tile_output(const FwdKernelArgs& args, const TileCoord& tc, const TileSeq& seq,
                                                  const int (&q_row)[2], int col0, int lane, float vd, int bad_v_row,
                                                  const float (&row_max)[2], const float (&row_sum)[2],
                                                  const float (&o_acc)[kOAcc], uint32_t stage) {
  float total[2];
  if constexpr (Cfg::kIsFp8) {
    total[0] = row_sum[0] + o_acc[Cfg::kDv / 2];      // column 128 (a ones row of vᵀ), row0
    total[1] = row_sum[1] + o_acc[Cfg::kDv / 2 + 2];  // row0 + 8
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float s = row_sum[r];
      s += __shfl_xor_sync(0xffffffffu, s, 1);
      s += __shfl_xor_sync(0xffffffffu, s, 2);
      total[r] = s;
    }
  }
  // Staged (kStagedOut): each warp's 16 rows go through its part of the warpgroup's stage when
  // every row of the output starts on 16 bytes, as bulk copies need; else, and in the other
  // kernels, straight from the registers.
  const bool staged =
      Cfg::kStagedOut && ((reinterpret_cast<uintptr_t>(args.out) |
                           static_cast<uintptr_t>(args.o_stride[0] | args.o_stride[1] | args.o_stride[2]) * 2) &
                          15) == 0;
  auto inv_of = [&](int r) {
    return q_row[r] >= bad_v_row ? __int_as_float(0x7FC00000) : total[r] > 0.0f ? vd / total[r] : 0.0f;
  };
  if (staged) {
    const float inv[2] = {inv_of(0), inv_of(1)};
    // Rows 16 w .. 16 w + 15 of the warpgroup's stage belong to warp w alone: the lanes that
    // sent its rows of the previous tile wait until their copies have read them, then the warp
    // writes the rows as 8x8 matrices (the accumulator fragments are stmatrix's layout: lane
    // l holds row l / 4, columns 2 (l % 4) and + 1 of each) and its first 16 lanes send one
    // row each. Rows past the sequence are written to the stage and not sent.
    const int warp_row0 = q_row[0] - (lane / 4);  // the warp's first row in the tile
    const uint32_t warp_stage = stage + (warp_row0 - tc.m * Cfg::kBlockM) % 64 * Cfg::kStageRow;
    ptx::bulk_wait_read_all();
    __syncwarp();
    // Lane l gives the address of row l % 8 of matrix l / 8: matrices (r, j), (r + 1, j),
    // (r, j + 1), (r + 1, j + 1) for rows 8 r.. of columns 8 j...
    const uint32_t lane_addr = warp_stage + ((lane / 8) % 2 * 8 + lane % 8) * Cfg::kStageRow + (lane / 16) * 16;
#pragma unroll
    for (int j = 0; j < Cfg::kDv / 8; j += 2) {
      ptx::stmatrix_x4(lane_addr + 16 * j,
                       ptx::pack_bf16(o_acc[4 * j] * inv[0], o_acc[4 * j + 1] * inv[0]),
                       ptx::pack_bf16(o_acc[4 * j + 2] * inv[1], o_acc[4 * j + 3] * inv[1]),
                       ptx::pack_bf16(o_acc[4 * j + 4] * inv[0], o_acc[4 * j + 5] * inv[0]),
                       ptx::pack_bf16(o_acc[4 * j + 6] * inv[1], o_acc[4 * j + 7] * inv[1]));
    }
    ptx::fence_proxy_async();
    __syncwarp();
    const int q = warp_row0 + lane;
    if (lane < 16 && q < seq.lq) {
      const int64_t row = static_cast<int64_t>(seq.q0) + q;
      uint16_t* out = args.out + seq.batch * args.o_stride[0] + row * args.o_stride[1] + tc.h * args.o_stride[2];
      ptx::bulk_store(out, warp_stage + lane * Cfg::kStageRow, Cfg::kDv * 2);
      ptx::bulk_commit();
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (q_row[r] >= seq.lq) continue;
    const bool seen = total[r] > 0.0f;
    const float inv = q_row[r] >= bad_v_row ? __int_as_float(0x7FC00000) : seen ? vd / total[r] : 0.0f;
    const int64_t row = static_cast<int64_t>(seq.q0) + q_row[r];
    if (!staged) {
      uint16_t* out = args.out + seq.batch * args.o_stride[0] + row * args.o_stride[1] + tc.h * args.o_stride[2] + col0;
#pragma unroll
      for (int j = 0; j < Cfg::kDv / 8; ++j) {
        const uint32_t v = ptx::pack_bf16(o_acc[4 * j + 2 * r] * inv, o_acc[4 * j + 2 * r + 1] * inv);
        *reinterpret_cast<uint32_t*>(out + 8 * j) = v;
      }
    }
    if (args.lse != nullptr && (lane % 4) == 0) {
      const float lse2 = row_max[r] - Cfg::kPShift + __log2f(total[r]);
      args.lse[tc.b * args.lse_stride[0] + tc.h * args.lse_stride[1] + row] =
          seen ? lse2 * 0.69314718055994530942f : -INFINITY;
    }
  }
}

}  // namespace detail

template <class Cfg, int kStages>
__device__ __forceinline__ void fwd_producer(const FwdKernelArgs& args, const CUtensorMap* tma_q,
                                             const CUtensorMap* tma_k, const CUtensorMap* tma_v,
                                             uint32_t base) {
  using namespace ptx;
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  const detail::JobSlice js = detail::cta_jobs(args.job_table);
  const detail::Barriers bars = detail::barriers<Cfg, kStages>(base);

  if (warp == 0) {
    if (lane != 0) return;
    prefetch_tensormap(tma_q);
    prefetch_tensormap(tma_k);
    prefetch_tensormap(tma_v);
    detail::Ring kr, vr;
    uint32_t q_phase = 0;
    for (uint32_t job = js.begin; job < js.end; ++job) {
#pragma unroll 1
      for (int t = 0; t < 2; ++t) {
        const uint32_t tile = js.jobs[2 * job + t];
        if (tile == kNoTile) continue;
        const detail::TileCoord tc = detail::decode_tile(tile, js.n_tiles, args.heads, args.heads_k);
        const detail::TileSeq seq = detail::tile_seq<Cfg>(args, tc);
        const detail::TileBlocks tb = detail::tile_blocks<Cfg>(seq, tc.m);
        if (tb.blocks == 0) continue;  // no row sees a key: the consumers write zeros alone
        mbar_wait(bars.q_empty, q_phase ^ 1);
        q_phase ^= 1;
        mbar_arrive_expect_tx(bars.q_full, Cfg::kQBytes);
#pragma unroll
        for (int c = 0; c < Cfg::kQkChunks; ++c) {
          tma_load_4d(base + Cfg::kOffQ + c * Cfg::kQChunkBytes, tma_q, bars.q_full, c * Cfg::kChunk,
                      seq.q0 + tc.m * Cfg::kBlockM, tc.h, seq.batch);
        }
        // The last block first: it is masked, and with the one below it gives every row a
        // finite maximum.
#pragma unroll 1
        for (int n = tb.blocks - 1; n >= 0; --n) {
          mbar_wait(bars.k_empty + 8 * kr.index, kr.phase ^ 1);
          const uint32_t kf = bars.k_full + 8 * kr.index;
          mbar_arrive_expect_tx(kf, Cfg::kKBytes);
#pragma unroll
          for (int c = 0; c < Cfg::kQkChunks; ++c) {
            tma_load_4d(base + Cfg::kOffK + kr.index * Cfg::kKBytes + c * Cfg::kKChunkBytes, tma_k,
                        kf, c * Cfg::kChunk, seq.k0 + n * Cfg::kBlockN, tc.hk, seq.batch);
          }
          kr.template advance<kStages>();
          mbar_wait(bars.v_empty + 8 * vr.index, vr.phase ^ 1);
          const uint32_t vf = bars.v_full + 8 * vr.index;
          mbar_arrive_expect_tx(vf, Cfg::kVLoadBytes);
          if constexpr (Cfg::kIsFp8) {
            // vᵀ rows d = 0..127 of this key block; rows 128..135 keep their ones.
            tma_load_4d(base + Cfg::kOffVt + vr.index * Cfg::kVtBytes, tma_v, vf, seq.vt0 + n * Cfg::kBlockN, 0,
                        tc.hk, seq.batch);
          } else {
#pragma unroll
            for (int c = 0; c < Cfg::kDv / 64; ++c) {
              tma_load_4d(base + Cfg::kOffV + vr.index * Cfg::kVBytes + c * Cfg::kBlockN * 128, tma_v,
                          vf, c * 64, seq.k0 + n * Cfg::kBlockN, tc.hk, seq.batch);
            }
          }
          vr.template advance<kStages>();
        }
      }
    }
  }
}

template <class Cfg, int kStages>
__device__ __forceinline__ void fwd_consumer(const FwdKernelArgs& args, uint32_t base) {
  using namespace ptx;
  constexpr int kAcc = Cfg::kBlockN / 2;                 // S registers per thread (64)
  constexpr int kOAcc = Cfg::kIsFp8 ? (Cfg::kDv + 8) / 2 : Cfg::kDv / 2;  // 68 or 64
  constexpr int kPRegs = Cfg::kIsFp8 ? Cfg::kBlockN / 8 : Cfg::kBlockN / 4;  // 16 or 32
  const int wg = threadIdx.x / 128 - 1;  // 0 or 1: rows 64*wg .. 64*wg+63 of the tile
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  const int row0 = 64 * wg + 16 * warp + lane / 4;  // this thread's rows: row0 and row0 + 8
  const int col0 = 2 * (lane % 4);
  const uint32_t stage = base + Cfg::kOffO + wg * Cfg::kStageBytes;  // kStagedOut only

  const detail::JobSlice js = detail::cta_jobs(args.job_table);
  const detail::Barriers bars = detail::barriers<Cfg, kStages>(base);

  detail::Ring kr, vr;
  uint32_t q_phase = 0;
  // Tiles of this CTA so far: numbers each tile's entry of the unseen-v words (unseen_v.cuh);
  // counted, not derived from the job index, so that consecutive tiles alternate words.
  uint32_t unseen_gen = 0;

  // Turn-taking of the tensor cores between the two consumer warpgroups (barrier 1 + wg is
  // "my turn"); warpgroup 0 starts.
  auto turn_begin = [&]() {
    if constexpr (Cfg::kPingpong) named_barrier_sync(1 + wg, 256);
  };
  auto turn_end = [&]() {
    if constexpr (Cfg::kPingpong) named_barrier_arrive(2 - wg, 256);
  };
  if constexpr (Cfg::kPingpong) {
    if (wg == 1) named_barrier_arrive(1, 256);
  }

  float s_acc[kAcc];
  float o_acc[kOAcc];
  uint32_t p_a[kPRegs];
  uint32_t p_b[Cfg::kPBeforeWait ? kPRegs : 1];  // second P buffer (kPBeforeWait only)

  // Base descriptors (kHoistDesc): q of this warpgroup, and stage 0 of k, vᵀ (FP8) or v (BF16).
  // Every other tile differs only in the 14-bit address field (bytes / 16), which never
  // carries since shared-memory addresses stay below 2^18.
  const uint64_t desc_q0 =
      Cfg::kHoistDesc ? make_desc(base + Cfg::kOffQ + 64 * wg * Cfg::kRowBytes, 16, Cfg::kQkSbo, Cfg::kQkSwizzle) : 0;
  const uint64_t desc_k0 = Cfg::kHoistDesc ? make_desc(base + Cfg::kOffK, 16, Cfg::kQkSbo, Cfg::kQkSwizzle) : 0;
  const uint64_t desc_v0 = !Cfg::kHoistDesc ? 0
                           : Cfg::kIsFp8    ? make_desc(base + Cfg::kOffVt, 16, 1024, 1)
                                            : make_desc(base + Cfg::kOffV, Cfg::kBlockN * 128, 1024, 1);
  auto desc_plus = [](uint64_t d, uint32_t units) -> uint64_t {
    return (d & 0xFFFFFFFF00000000ull) | static_cast<uint32_t>(static_cast<uint32_t>(d) + units);
  };

  auto issue_qk = [&](uint32_t k_stage) {
    const uint32_t q_base = base + Cfg::kOffQ + 64 * wg * Cfg::kRowBytes;
    const uint32_t k_base = base + Cfg::kOffK + k_stage * Cfg::kKBytes;
    const uint32_t k_units = k_stage * (Cfg::kKBytes / 16);
    wgmma_fence();
#pragma unroll
    for (int c = 0; c < Cfg::kQkChunks; ++c) {
#pragma unroll
      for (int kk = 0; kk < Cfg::kChunk / Cfg::kKMmaK; ++kk) {
        const uint32_t off = kk * Cfg::kKMmaK * Cfg::kElem;
        uint64_t da, db;
        if constexpr (Cfg::kHoistDesc) {
          da = desc_plus(desc_q0, (c * Cfg::kQChunkBytes + off) / 16);
          db = desc_plus(desc_k0, k_units + (c * Cfg::kKChunkBytes + off) / 16);
        } else {
          da = make_desc(q_base + c * Cfg::kQChunkBytes + off, 16, Cfg::kQkSbo, Cfg::kQkSwizzle);
          db = make_desc(k_base + c * Cfg::kKChunkBytes + off, 16, Cfg::kQkSbo, Cfg::kQkSwizzle);
        }
        if constexpr (Cfg::kIsFp8) {
          wgmma_m64n128k32_e4m3_ss(s_acc, da, db, c + kk);  // the first one overwrites
        } else {
          wgmma_m64n128k16_bf16_ss(s_acc, da, db, c + kk);
        }
      }
    }
    wgmma_commit();
    pin(s_acc);
  };

  auto issue_pv = [&](uint32_t v_stage, uint32_t(&p)[kPRegs]) {
    pin(o_acc);
    pin(p);
    wgmma_fence();
    if constexpr (Cfg::kIsFp8) {
      const uint32_t vt_base = base + Cfg::kOffVt + v_stage * Cfg::kVtBytes;
#pragma unroll
      for (int kk = 0; kk < Cfg::kBlockN / 32; ++kk) {
        const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
        const uint64_t db = Cfg::kHoistDesc ? desc_plus(desc_v0, v_stage * (Cfg::kVtBytes / 16) + kk * 2)
                                            : make_desc(vt_base + kk * 32, 16, 1024, 1);
        wgmma_m64n136k32_e4m3_rs(o_acc, a, db);
      }
    } else {
      const uint32_t v_base = base + Cfg::kOffV + v_stage * Cfg::kVBytes;
#pragma unroll
      for (int kk = 0; kk < Cfg::kBlockN / 16; ++kk) {
        const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
        // v chunk [128 keys][64 d] with 128-byte rows; 16 keys = 2048 bytes; the next 64 d
        // (the leading dimension of a transposed operand) is the next chunk.
        const uint64_t db = Cfg::kHoistDesc
                                ? desc_plus(desc_v0, v_stage * (Cfg::kVBytes / 16) + kk * 128)
                                : make_desc(v_base + kk * 2048, Cfg::kBlockN * 128, 1024, 1);
        wgmma_m64n128k16_bf16_rs_tnspb(o_acc, a, db);
      }
    }
    wgmma_commit();
    pin(o_acc);
  };

  for (uint32_t job = js.begin; job < js.end; ++job) {
#pragma unroll 1
    for (int tt = 0; tt < 2; ++tt) {
      const uint32_t tile = js.jobs[2 * job + tt];
      if (tile == kNoTile) continue;
      const detail::TileCoord tc = detail::decode_tile(tile, js.n_tiles, args.heads, args.heads_k);
      // Where the tile's sequence lies and its key blocks are read again after the key loop
      // rather than held in registers through it: the FP8 d128 kernel has none to spare there.
      // Fixed lengths read them from the kernel parameters wherever they are needed; varlen
      // reads the prefix sums once for the tile's edge blocks (edge_seq, edge_blocks: dead
      // after the edge), since reading them again for every edge block costs a fifth of the
      // edge loop's instructions (docs/performance.md). The fixed-length kernels keep their
      // own schedule, which is 1.2% faster at S 32K than the one the varlen form gives them.
      auto where = [&]() { return detail::tile_seq<Cfg>(args, tc); };
      const detail::TileSeq first_seq = where();
      const detail::TileBlocks tb = detail::tile_blocks<Cfg>(first_seq, tc.m);
      auto edge_seq = [&]() {
        if constexpr (Cfg::kAnyLengths) return first_seq;
        else return where();
      };
      auto edge_blocks = [&]() {
        if constexpr (Cfg::kAnyLengths) return tb;
        else return detail::tile_blocks<Cfg>(where(), tc.m);
      };
      const float qd = detail::read_descale(args.q_descale_ptr, args.q_descale, args.descale_stride[0],
                                            args.descale_stride[1], tc.b, tc.hk);
      const float kd = detail::read_descale(args.k_descale_ptr, args.k_descale, args.descale_stride[2],
                                            args.descale_stride[3], tc.b, tc.hk);
      const float vd = detail::read_descale(args.v_descale_ptr, args.v_descale, args.descale_stride[4],
                                            args.descale_stride[5], tc.b, tc.hk);
      const float scale = args.scale_log2 * qd * kd;  // score units -> log2 units
      const int q_row[2] = {tc.m * Cfg::kBlockM + row0, tc.m * Cfg::kBlockM + row0 + 8};

      float row_max[2] = {-INFINITY, -INFINITY};  // running maxima, log2 units
      float lean_b[2] = {0.0f, 0.0f};             // kLeanCarry: lean P's bias of row_max
      // Lean P's unit (kF16Pack): the multiply-add writes code * 2^-24, the step of the f16
      // subnormals.
      constexpr float kLeanUnit = 0x1p-24f;
      float row_sum[2] = {0.0f, 0.0f};            // BF16: this thread's partial sums;
                                                  // FP8 (kSumFlush): the flushed row sums
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) o_acc[i] = 0.0f;

      // Softmax of the scores in s_acc (key block n): updates row_max/row_sum, writes the
      // probabilities to s_acc (BF16) and returns the factor the output must be scaled by.
      auto softmax = [&](int n, bool masked, float (&alpha)[2]) {
        if (masked) {  // edge blocks only
          // The last key each row sees (bottom-right causal mask, and the sequence's keys).
          const detail::TileSeq seq = edge_seq();
          const int delta = seq.lk - seq.lq;
          const int key_lim[2] = {min(q_row[0] + delta, seq.lk - 1), min(q_row[1] + delta, seq.lk - 1)};
#pragma unroll
          for (int j = 0; j < kAcc / 4; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int key = n * Cfg::kBlockN + 8 * j + col0 + (e & 1);
              if (key > key_lim[e >> 1]) s_acc[4 * j + e] = -INFINITY;
            }
          }
        }
        // Row maxima as two independent chains per row (shorter dependency chains).
        float mx[2], mx2[2];
        mx[0] = fmaxf(s_acc[0], s_acc[1]);
        mx[1] = fmaxf(s_acc[2], s_acc[3]);
        mx2[0] = fmaxf(s_acc[4], s_acc[5]);
        mx2[1] = fmaxf(s_acc[6], s_acc[7]);
#pragma unroll
        for (int j = 2; j < kAcc / 4; j += 2) {
          mx[0] = fmaxf(mx[0], fmaxf(s_acc[4 * j], s_acc[4 * j + 1]));
          mx[1] = fmaxf(mx[1], fmaxf(s_acc[4 * j + 2], s_acc[4 * j + 3]));
          mx2[0] = fmaxf(mx2[0], fmaxf(s_acc[4 * j + 4], s_acc[4 * j + 5]));
          mx2[1] = fmaxf(mx2[1], fmaxf(s_acc[4 * j + 6], s_acc[4 * j + 7]));
        }
        mx[0] = fmaxf(mx[0], mx2[0]);
        mx[1] = fmaxf(mx[1], mx2[1]);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
          mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
          const float m_new = mx[r] * scale;
          alpha[r] = 1.0f;
          // Lazy rescaling: move the reference maximum only when it grew by more than the
          // threshold; probabilities up to 2^threshold are then written, which every output
          // format holds exactly enough.
          if (m_new - row_max[r] > Cfg::kRescaleThreshold) {
            alpha[r] = row_max[r] == -INFINITY ? 0.0f : ex2(row_max[r] - m_new);
            row_max[r] = m_new;
            if constexpr (Cfg::kLeanCarry) lean_b[r] = (Cfg::kLeanBias - 8.0f * m_new) * kLeanUnit;
          }
        }
        if constexpr (Cfg::kLeanP) {
          // Lean P follows separately (lean_p_pack), straight into P registers.
        } else {
          // A row that has seen no key yet (in a masked block) keeps the maximum -inf: its
          // probabilities are then 0, not exp2(-inf + inf). Past the edge every row has one.
          const float ref[2] = {masked && row_max[0] == -INFINITY ? 0.0f : row_max[0],
                                masked && row_max[1] == -INFINITY ? 0.0f : row_max[1]};
#pragma unroll
          for (int j = 0; j < kAcc / 4; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              s_acc[4 * j + e] = ex2(fmaf(s_acc[4 * j + e], scale, Cfg::kPShift - ref[e >> 1]));
            }
          }
        }
        if constexpr (!Cfg::kIsFp8) {
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < kAcc / 4; ++j) sum += s_acc[4 * j + 2 * r] + s_acc[4 * j + 2 * r + 1];
            row_sum[r] = row_sum[r] * alpha[r] + sum;
          }
        }
      };

      // After the wait for a P v: row sums out of the accumulator (kSumFlush), then O rescaled.
      auto finish_pv = [&](const float (&alpha)[2]) {
        if constexpr (Cfg::kSumFlush) {
          // The finished P v holds one key block's row sums in column 128 (rows row0, row0 + 8):
          // into fp32 registers, and the accumulator restarts from zero. The zero is written
          // in place by an asm statement: a plain assignment made ptxas serialize every wgmma
          // of the loop (C7511, "insufficient register resources for the wgmma pipeline").
          row_sum[0] += o_acc[Cfg::kDv / 2];
          row_sum[1] += o_acc[Cfg::kDv / 2 + 2];
          asm volatile("mov.b32 %0, 0;" : "+f"(o_acc[Cfg::kDv / 2]));
          asm volatile("mov.b32 %0, 0;" : "+f"(o_acc[Cfg::kDv / 2 + 2]));
        }
        if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) {
          if constexpr (Cfg::kSumFlush) {
            row_sum[0] *= alpha[0];
            row_sum[1] *= alpha[1];
          }
#pragma unroll
          for (int j = 0; j < kOAcc / 4; ++j) {
            o_acc[4 * j] *= alpha[0];
            o_acc[4 * j + 1] *= alpha[0];
            o_acc[4 * j + 2] *= alpha[1];
            o_acc[4 * j + 3] *= alpha[1];
          }
        }
      };

      // kPBeforeWait: lean P (as in softmax) straight from the scores into P registers. The
      // scores are only read: a write to the accumulator registers of a wgmma makes ptxas wait
      // for every wgmma group in flight, here the P v of the previous block, which this avoids.
      // Returns (kF16Pack) the largest code of each 16-bit half's position, over all keys.
      auto lean_p_pack = [&](uint32_t(&p)[kPRegs]) -> uint32_t {
        uint32_t code_max = 0;
#pragma unroll
        for (int kk = 0; kk < Cfg::kBlockN / 32; ++kk) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {  // keys 0..15 and 16..31 of the 32-key step
            const float* sh = s_acc + 16 * kk + 8 * h;
            const float af = scale * (8.0f * kLeanUnit);
            float t[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) t[i] = __saturatef(fmaf(sh[i], af, lean_b[(i & 3) >> 1]));
            // Halves [c0 c1], [c4 c5], [c2 c3], [c6 c7]; each code in its half's low byte.
            const uint32_t h01 = pack_f16(t[0], t[1]);
            const uint32_t h45 = pack_f16(t[4], t[5]);
            const uint32_t h23 = pack_f16(t[2], t[3]);
            const uint32_t h67 = pack_f16(t[6], t[7]);
            p[4 * kk + 2 * h] = prmt(h01, h45, 0x6420);
            p[4 * kk + 2 * h + 1] = prmt(h23, h67, 0x6420);
            if constexpr (Cfg::kStaleMax) {
              code_max = __vimax3_u16x2(code_max, __vimax3_u16x2(h01, h45, h23), h67);
            }
          }
        }
        return code_max;
      };

      // Probabilities (in s_acc) to the wgmma A-operand registers.
      auto convert_p = [&](uint32_t(&p)[kPRegs]) {
        if constexpr (Cfg::kIsFp8) {
#pragma unroll
          for (int kk = 0; kk < Cfg::kBlockN / 32; ++kk) {
            const float* s = s_acc + 16 * kk;
            uint32_t w[4];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float* sh = s + 8 * h;
              w[2 * h] = static_cast<uint32_t>(pack_e4m3(sh[0], sh[1])) |
                         (static_cast<uint32_t>(pack_e4m3(sh[4], sh[5])) << 16);
              w[2 * h + 1] = static_cast<uint32_t>(pack_e4m3(sh[2], sh[3])) |
                             (static_cast<uint32_t>(pack_e4m3(sh[6], sh[7])) << 16);
            }
            p[4 * kk] = w[0];
            p[4 * kk + 1] = w[1];
            p[4 * kk + 2] = w[2];
            p[4 * kk + 3] = w[3];
          }
        } else {
#pragma unroll
          for (int i = 0; i < kPRegs; ++i) p[i] = pack_bf16(s_acc[2 * i], s_acc[2 * i + 1]);
        }
      };

      if (tb.blocks == 0) {  // no row sees a key (nothing was loaded): zeros, LSE -inf
        detail::write_tile_output<Cfg>(args, tc, edge_seq(), q_row, col0, lane, vd, INT_MAX, row_max, row_sum, o_acc, stage);
        continue;
      }
      ++unseen_gen;
      // The masked blocks' v are sanitized (unseen_v.cuh), the last block's always: keys are
      // counted from the lower one (the last two blocks when both are masked).
      auto key_block0 = [&]() { return max(detail::tile_blocks<Cfg>(where(), tc.m).blocks - 2, 0); };
      auto sanitize_v = [&](int n) {
        const uint32_t v_tile = Cfg::kIsFp8 ? base + Cfg::kOffVt + vr.index * Cfg::kVtBytes
                                            : base + Cfg::kOffV + vr.index * Cfg::kVBytes;
        detail::unseen_v_sanitize<Cfg>(v_tile, base + Cfg::kOffUnseen, unseen_gen, 128 * wg + t,
                                       (n - max(edge_blocks().blocks - 2, 0)) * Cfg::kBlockN,
                                       edge_seq().lk - n * Cfg::kBlockN);
      };

      mbar_wait(bars.q_full, q_phase);
      q_phase ^= 1;

      // The edge of the tile first: its last block, and the one below it when some row sees
      // its first key there (or it is masked). Each edge block computes its row maxima and
      // applies the mask where it is masked, one block at a time (the P v of the block above
      // runs alone before the scores); the steady-state loop below is the fixed-length one. It is one loop rather than an unrolled copy: a second inlined
      // copy of this code made ptxas serialize every wgmma of the FP8 d128 kernel (C7511).
      int n = tb.blocks - 1;
      const int edge_last = tb.exact <= tb.blocks - 2 ? tb.blocks - 2 : tb.blocks - 1;
#pragma unroll 1
      for (bool pending = false;; --n) {
        if (pending) {  // the block above: its P v first, alone
          turn_begin();
          issue_pv(vr.index, p_a);
          turn_end();
          wgmma_wait<0>();
          pin(o_acc);
          mbar_arrive(bars.v_empty + 8 * vr.index);
          vr.template advance<kStages>();
        }
        mbar_wait(bars.k_full + 8 * kr.index, kr.phase);
        turn_begin();
        issue_qk(kr.index);
        turn_end();
        wgmma_wait<0>();
        pin(s_acc);
        mbar_arrive(bars.k_empty + 8 * kr.index);
        kr.template advance<kStages>();
        if (n == 0) mbar_arrive(bars.q_empty);
        float alpha[2];
        softmax(n, n >= edge_blocks().masked, alpha);
        if (pending) finish_pv(alpha);
        if constexpr (Cfg::kPBeforeWait) {
          lean_p_pack(p_a);
        } else {
          convert_p(p_a);
        }
        // This block's v: non-finite elements zeroed before P v, and the rows that see the
        // first key that had one written as NaN (unseen_v.cuh). The last block always (every
        // tile passes the sanitizer's barrier, which the shared words rely on), the one below
        // when it is masked.
        mbar_wait(bars.v_full + 8 * vr.index, vr.phase);
        if (!pending || n >= edge_blocks().masked) sanitize_v(n);
        pending = true;
        if (n == edge_last) break;
      }
      // One steady-state step: scores of block n are computed while P of block n+1 (in p_cur)
      // meets v; P of block n goes to p_next (= p_cur unless kPBeforeWait).
      auto step = [&](int n, uint32_t(&p_cur)[kPRegs], uint32_t(&p_next)[kPRegs]) {
        mbar_wait(bars.k_full + 8 * kr.index, kr.phase);
        mbar_wait(bars.v_full + 8 * vr.index, vr.phase);
        turn_begin();
        issue_qk(kr.index);
        issue_pv(vr.index, p_cur);
        turn_end();
        wgmma_wait<1>();
        pin(s_acc);
        mbar_arrive(bars.k_empty + 8 * kr.index);
        kr.template advance<kStages>();
        if (n == 0) mbar_arrive(bars.q_empty);
        float alpha[2] = {1.0f, 1.0f};
        if constexpr (Cfg::kStaleMax) {
          // Codes above 126 (either half): the reference maximum is too far behind for this
          // block; compute the row maxima (which moves the reference) and lean P again.
          const uint32_t code_max = lean_p_pack(p_next);
          if (__any_sync(0xffffffffu, ((code_max + 0x00010001u) & 0xFF80FF80u) != 0)) {
            softmax(n, false, alpha);
            lean_p_pack(p_next);
          }
          pin(p_next);
        } else {
          softmax(n, false, alpha);
          if constexpr (Cfg::kPBeforeWait) {
            lean_p_pack(p_next);
            pin(p_next);
          }
        }
        wgmma_wait<0>();
        pin(o_acc);
        mbar_arrive(bars.v_empty + 8 * vr.index);
        vr.template advance<kStages>();
        finish_pv(alpha);
        if constexpr (!Cfg::kPBeforeWait) convert_p(p_next);
      };
      auto last_pv = [&](uint32_t(&p_cur)[kPRegs]) {
        mbar_wait(bars.v_full + 8 * vr.index, vr.phase);
        turn_begin();
        issue_pv(vr.index, p_cur);
        turn_end();
        wgmma_wait<0>();
        pin(o_acc);
        mbar_arrive(bars.v_empty + 8 * vr.index);
        vr.template advance<kStages>();
      };
      if constexpr (Cfg::kPBeforeWait) {
        // Unrolled by two so that each P buffer keeps a fixed role (no run-time indexing).
        --n;
#pragma unroll 1
        for (; n >= 1; n -= 2) {
          step(n, p_a, p_b);
          step(n - 1, p_b, p_a);
        }
        if (n == 0) {
          step(0, p_a, p_b);
          last_pv(p_b);
        } else {
          last_pv(p_a);
        }
      } else {
#pragma unroll 1
        for (--n; n >= 0; --n) step(n, p_a, p_a);
        last_pv(p_a);
      }

      const detail::TileSeq out_seq = where();
      const int first_bad = detail::unseen_v_first_key(base + Cfg::kOffUnseen, unseen_gen);
      const int bad_v_row = first_bad == detail::kUnseenNone
                                ? INT_MAX
                                : key_block0() * Cfg::kBlockN + first_bad - (out_seq.lk - out_seq.lq);
      detail::write_tile_output<Cfg>(args, tc, out_seq, q_row, col0, lane, vd, bad_v_row, row_max, row_sum, o_acc, stage);
    }
  }
  // The shared memory of the CTA must outlive the bulk copies' reads of the last stage.
  if constexpr (Cfg::kStagedOut) bulk_wait_read_all();
}

template <class Cfg, int kStages>
__global__ void __launch_bounds__(384, 1)
    fwd_kernel(const __grid_constant__ FwdKernelArgs args, const __grid_constant__ CUtensorMap tma_q,
               const __grid_constant__ CUtensorMap tma_k, const __grid_constant__ CUtensorMap tma_v) {
  using namespace ptx;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* base_ptr = smem_raw + (base - raw);

  if (threadIdx.x == 0) {
    // The layout of detail::barriers, spelled out here: written through its struct, this block
    // changed the register allocation of the whole kernel.
    const uint32_t bar = base + Cfg::kOffBar;
    mbar_init(bar, 1);                // q_full: the producer's expect_tx arrival
    mbar_init(bar + 8, 256);          // q_empty: every consumer thread
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bar + 16 + 8 * s, 1);                    // k_full
      mbar_init(bar + 16 + 8 * (kStages + s), 256);      // k_empty
      mbar_init(bar + 16 + 8 * (2 * kStages + s), 1);    // v_full
      mbar_init(bar + 16 + 8 * (3 * kStages + s), 256);  // v_empty
    }
    fence_mbar_init();
    reinterpret_cast<uint32_t*>(base_ptr + Cfg::kOffUnseen)[0] = 0u;
    reinterpret_cast<uint32_t*>(base_ptr + Cfg::kOffUnseen)[1] = 0u;
  }
  if constexpr (Cfg::kIsFp8) {
    // The eight rows of ones below d = 128 in every vᵀ stage make the tensor cores compute the
    // row sum of the rounded probabilities (e4m3 1.0 = 0x38). The TMA never writes them.
    for (int s = 0; s < kStages; ++s) {
      uint32_t* ones = reinterpret_cast<uint32_t*>(base_ptr + Cfg::kOffVt + s * Cfg::kVtBytes +
                                                   Cfg::kDv * Cfg::kBlockN);
      for (int i = threadIdx.x; i < 8 * Cfg::kBlockN / 4; i += Cfg::kThreads) ones[i] = 0x38383838u;
    }
    fence_proxy_async();
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    setmaxnreg_dec<Cfg::kTuning.producer_regs>();
    fwd_producer<Cfg, kStages>(args, &tma_q, &tma_k, &tma_v, base);
  } else {
    setmaxnreg_inc<Cfg::kTuning.consumer_regs>();
    fwd_consumer<Cfg, kStages>(args, base);
  }
}

}  // namespace zyfa::cuda
