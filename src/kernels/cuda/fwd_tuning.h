// The tuning of the Hopper attention kernels: one constexpr value per instantiation, read by
// the device code (fwd_kernel.cuh, the instantiations) and by the host (tensor maps, job
// tables), so that the two cannot disagree. The values were measured on an H200
// (docs/performance.md, tuning log); to try others, change them here and rebuild.
#pragma once

namespace zyfa::cuda {

struct FwdTuning {
  int block_m;        // query rows per tile (the job table's tile_rows)
  int block_n;        // keys per block
  int stages;         // k and v tiles in flight in shared memory
  int producer_regs;  // registers per thread of the producer warpgroup (setmaxnreg)
  int consumer_regs;  // of each consumer warpgroup
  // Column chunk (elements) of one q/k TMA box: 128-byte rows where the head dim is a multiple
  // of 128 bytes' worth of elements, else 64 elements (FP8 d_qk = 192: 64-byte rows).
  int qk_chunk;
  // FP8 d_qk = 128 (lean P with a stale reference maximum): P is written as
  // 2^(x - max + p_shift). A smaller shift leaves the reference more room to trail the maximum
  // (126.5 - 56 - 8 * shift - kLeanOffset codes: 2.83 binades at 6, 0.83 at 8), so fewer key
  // blocks need the row maxima, but moves the e4m3 underflow of the smallest probabilities
  // closer to the row maximum; 6 measured as the balance (tuning step 17). The other FP8
  // kernels use 8, BF16 0.
  int stale_max_p_shift;
};

constexpr FwdTuning fwd_tuning(bool fp8, int d_qk) {
  FwdTuning t{};
  t.block_m = 128;
  t.block_n = 128;
  // BF16: two stages, which at d 128 leave room for the staged output (fwd_kernel.cuh,
  // kStagedOut); three measured the same at S 32K. FP8: three.
  t.stages = !fp8 ? 2 : 3;
  // 24 / 240 for every instantiation: FP8 had 56 / 224, equal in speed at fixed lengths, but
  // its varlen instantiation (d_qk = 128) spilled 28 bytes at 224 (docs/performance.md).
  t.producer_regs = 24;
  t.consumer_regs = 240;
  t.qk_chunk = fp8 && d_qk % 128 == 0 ? 128 : 64;
  t.stale_max_p_shift = 6;
  return t;
}

}  // namespace zyfa::cuda
