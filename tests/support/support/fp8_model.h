// A CPU bit-model of the attention kernels' numerics (FP8 e4m3 and BF16), used to predict the
// error of each numerics choice against the fp64 reference and to hold kernels to it.
//
// What is modelled, per query row (rows are independent in the kernels too):
//   scores    t = (q . k in fp32 from the decoded FP8/BF16 inputs) * (scale * log2(e) * dq * dk),
//             so the softmax is in base 2;
//   max       lazy: the running max m moves only when a key tile's max exceeds it by more
//             than the threshold (0.125 FP8, 0.5 BF16 d=128, 8 BF16 d_qk=192), else P may
//             exceed 1 by up to 2^threshold;
//   P         FP8 exact: RNE_e4m3(2^x); FP8 lean: the e4m3 code written as
//             trunc(8 x + kLeanBias) clamped at 0; BF16: RNE_bf16(2^x); x = t - m (+ k);
//   scaling   per 64-key block, P is computed as 2^(x + k) with the integer k >= 0 that lifts
//             the block's largest x to (-1, 0] (the code p = 1 gets, or just below it), and
//             2^-k is applied to that block's P.V product and row sum (the scaled MFMA);
//   sum       the denominator is the fp32 sum of the same rounded P (an MFMA against ones),
//             or, for comparison, of the unrounded fp32 2^x;
//   output    acc (fp32) / sum * dv, rounded to BF16 RNE; lse = ln 2 * (m + log2(sum)), the
//             sum optionally with the row's diagonal block unrounded (lse_exact_rows).
#pragma once

#include <cstdint>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::model {

enum class PMode { EXACT, LEAN };
enum class Denominator { ROUNDED_P, UNROUNDED_P };

struct KernelModelOptions {
  PMode p_mode = PMode::EXACT;             // FP8 only; BF16 P is always RNE to BF16
  bool block_scaling = true;               // FP8 only
  Denominator denominator = Denominator::ROUNDED_P;
  float rescale_threshold = -1.0f;         // < 0: the kernels' threshold for dtype and d_qk
  int64_t tile_keys = 128;                 // keys per online-softmax step
  int64_t scale_block_keys = 64;           // keys per per-block scale
  float lean_bias = -1.0f;                 // < 0: kLeanBias
  // Extra power of two of every block's scale (FP8 block scaling only): the block maximum is
  // written as about 2^block_lift instead of 1, so the values below it stay normal e4m3 over
  // block_lift more binades (lean P has no subnormals: it drops what falls below 2^-7).
  int block_lift = 0;
  // The LSE (not the output) takes the row's last 64-key block, its diagonal block, as the
  // fp32 sum of the unrounded 2^x instead of the rounded P, in rows below lse_exact_rows:
  // rows that a few keys of the diagonal block dominate (a sequence's first rows) would
  // otherwise carry those few keys' rounding into the LSE undiluted. The output keeps the
  // rounded denominator.
  int64_t lse_exact_rows = 0;
  float lse_offset = 0.0f;  // nats added to the LSE from rounded P (the mean bias of lean P's row sums)
};

// The lazy-rescale threshold of the kernels, in base-2 units of the score.
float kernel_rescale_threshold(zyfa_dtype_t dtype, int64_t d_qk);
// The options the kernels use: FP8 lean P at d = 128, exact P at d_qk = 192, per-block
// scaling and the rounded-P denominator; BF16 with the rounded-P denominator as well.
KernelModelOptions kernel_options(const test::AttnConfig& cfg);

// Lean P. For a normal e4m3 value 2^x = 2^(E + f) (E integer, 0 <= f < 1) the code is
// 8 (E + 7) + 8 (2^f - 1) = 56 + 8 x + 8 (2^f - 1 - f). The last term lies in
// [8 (1/ln2 - 1 + log2(ln2)), 0] = [-0.6886, 0]; adding half of its minimum centres the
// linear approximation 56 + 8 x + b (b = -0.3443), so |code error| <= 0.3443 before rounding,
// and a truncating float->int conversion needs +0.5 to round: 56.5 + b centres the code error.
// The row sum (and the LSE) wants the values unbiased rather than the codes: a code error e
// is a relative value error of about e / 8 ln 2 ... e / 16 within a binade, and where every x
// of a row sits near one point of the binade (flat rows, x near 0) the centred constant
// writes every value low by up to 2%. kLeanBias is 0.0943 above it, fitted on the worst-row
// LSE error against fp64 over Gaussian std 0.1 and 1, realistic and rising inputs
// (docs/numerics.md): the largest error in either direction balances there.
inline constexpr double kLeanCentre = 4.0 * (1.4426950408889634 - 1.0 - 0.5287663729448977);
inline constexpr float kLeanBias = 56.25f;  // 56.5 + kLeanCentre + 0.0943
// The block lift of the generated FP8 kernels (KernelModelOptions::block_lift).
inline constexpr int kLeanBlockLift = 8;
// The generated FP8 kernels' LSE: a sequence's first 64 rows take their (only) block unrounded,
// and every other row's LSE is moved by kLeanLseOffset nats, which centres the error range that kLeanBias
// leaves over the peaked input kinds (docs/numerics.md, "LSE of the generated FP8 kernels").
inline constexpr int64_t kLeanLseExactRows = 64;
inline constexpr float kLeanLseOffset = -0.005f;
// The e4m3 code lean P writes for 2^x (x <= 0.125 + a block scale): one multiply-add
// (exact: 8 x is exact in fp32) and a truncating conversion that clamps below at 0.
uint8_t lean_p_code(float x, float bias);
// The e4m3 code exact P writes: RNE of the fp32 exp2(x).
uint8_t exact_p_code(float x);

struct ModelResult {
  std::vector<uint16_t> out;  // BF16, in data.out_stride layout (out_count() elements)
  std::vector<float> lse;     // (b, h, s), natural log; empty without LSE
};

ModelResult run_kernel_model(const test::AttnData& data, const KernelModelOptions& opt);

}  // namespace zyfa::model
