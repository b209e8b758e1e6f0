// Properties of the kernel bit-model that the kernels rely on, and its error against fp64
// staying inside the kernel tolerances of docs/numerics.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "host/numerics/bf16.h"
#include "support/fp8_model.h"

namespace zyfa::model {
namespace {

using test::AttnConfig;
using test::AttnData;

AttnConfig small(zyfa_dtype_t dt, int64_t dq, test::Inputs in, double std, int64_t S) {
  AttnConfig c;
  c.dtype = dt;
  c.d_qk = dq;
  c.heads = 2;
  c.heads_k = 1;
  c.seqlen = S;
  c.inputs = in;
  c.std = std;
  c.seed = test::seed_for(c.name());
  return c;
}

// With every V equal to one value, a weighted average whose weights sum to one returns it
// exactly: the rounded-P denominator sums the very P that multiply V, in the same order.
TEST(Fp8Model, RoundedDenominatorKeepsWeightsSummingToOne) {
  AttnConfig c = small(ZYFA_DTYPE_FP8_E4M3, 128, test::Inputs::REALISTIC, 0.1, 700);
  AttnData a = test::make_attn_data(c);
  std::memset(a.v.data(), 0x38, a.v.size());  // every v code is 1.0 (also the packed gaps)
  const float vd = a.v_descale[0];
  for (PMode p : {PMode::EXACT, PMode::LEAN}) {
    for (bool scaling : {true, false}) {
      KernelModelOptions o;
      o.p_mode = p;
      o.block_scaling = scaling;
      const ModelResult r = run_kernel_model(a, o);
      for (size_t i = 0; i < r.out.size(); ++i) {
        ASSERT_EQ(numerics::bf16_to_float(r.out[i]), vd) << "element " << i;
      }
      // The unrounded denominator still counts the probabilities lean P flushes to zero,
      // so without per-block scaling the rows shrink.
      o.denominator = Denominator::UNROUNDED_P;
      const ModelResult u = run_kernel_model(a, o);
      double mean = 0;
      for (uint16_t b : u.out) mean += numerics::bf16_to_float(b);
      mean /= static_cast<double>(u.out.size());
      if (p == PMode::LEAN && !scaling) EXPECT_LT(mean, vd * 0.999) << "rows did not shrink";
    }
  }
}

struct Case {
  zyfa_dtype_t dtype;
  int64_t d_qk;
  test::Inputs inputs;
  double std;
};

class ModelAccuracy : public ::testing::TestWithParam<Case> {};

// The kernels' own choices stay inside kernel_tolerance(): otherwise the tolerance could not
// be met by a correct kernel.
TEST_P(ModelAccuracy, KernelChoiceWithinKernelTolerance) {
  const Case k = GetParam();
  const AttnConfig c = small(k.dtype, k.d_qk, k.inputs, k.std, 1000);
  const AttnData a = test::make_attn_data(c);
  const test::ReferenceResult ref = test::reference_fp64(a);
  const ModelResult r = run_kernel_model(a, kernel_options(c));
  const test::CheckResult chk = test::check_output(a, ref, r.out.data(), r.lse.data());
  std::printf("%s: %s\n", c.name().c_str(), chk.summary().c_str());
  EXPECT_TRUE(chk.ok()) << c.name() << " seed " << c.seed << ": " << chk.summary();
}

INSTANTIATE_TEST_SUITE_P(
    Model, ModelAccuracy,
    ::testing::Values(Case{ZYFA_DTYPE_BF16, 128, test::Inputs::GAUSSIAN, 0.1},
                      Case{ZYFA_DTYPE_BF16, 192, test::Inputs::REALISTIC, 0.1},
                      Case{ZYFA_DTYPE_FP8_E4M3, 128, test::Inputs::GAUSSIAN, 0.1},
                      Case{ZYFA_DTYPE_FP8_E4M3, 128, test::Inputs::GAUSSIAN, 1.0},
                      Case{ZYFA_DTYPE_FP8_E4M3, 128, test::Inputs::REALISTIC, 0.1},
                      Case{ZYFA_DTYPE_FP8_E4M3, 192, test::Inputs::GAUSSIAN, 1.0},
                      Case{ZYFA_DTYPE_FP8_E4M3, 192, test::Inputs::REALISTIC, 0.1}),
    [](const ::testing::TestParamInfo<Case>& i) {
      const Case& k = i.param;
      return small(k.dtype, k.d_qk, k.inputs, k.std, 1000).name();
    });

// Per-block scaling keeps far-below-max probabilities normal: on realistic inputs it lowers
// the error of lean P clearly (the bit-model measures about 2x at S = 1000).
TEST(Fp8Model, BlockScalingHelpsLeanPOnRealisticInputs) {
  const AttnConfig c = small(ZYFA_DTYPE_FP8_E4M3, 128, test::Inputs::REALISTIC, 0.1, 1000);
  const AttnData a = test::make_attn_data(c);
  const test::ReferenceResult ref = test::reference_fp64(a);
  KernelModelOptions o;
  o.p_mode = PMode::LEAN;
  double err[2];
  for (int s = 0; s < 2; ++s) {
    o.block_scaling = s == 1;
    const ModelResult r = run_kernel_model(a, o);
    err[s] = test::check_output(a, ref, r.out.data(), r.lse.data()).rel_rms;
  }
  std::printf("lean P rel RMS: without scaling %.3e, with %.3e\n", err[0], err[1]);
  EXPECT_LT(err[1], 0.8 * err[0]) << "seed " << c.seed;
}

// With every probability treated exactly the model reduces to rounding the output once.
TEST(Fp8Model, Bf16WithoutPRoundingIsNearExact) {
  const AttnConfig c = small(ZYFA_DTYPE_BF16, 128, test::Inputs::GAUSSIAN, 1.0, 300);
  const AttnData a = test::make_attn_data(c);
  const test::ReferenceResult ref = test::reference_fp64(a);
  KernelModelOptions o;
  o.denominator = Denominator::UNROUNDED_P;
  const ModelResult r = run_kernel_model(a, o);
  const test::CheckResult chk = test::check_output(a, ref, r.out.data(), r.lse.data());
  // BF16 P rounding (2^-9 relative RMS) and the output rounding: below 3e-3.
  EXPECT_LT(chk.rel_rms, 3e-3) << chk.summary();
  EXPECT_LT(chk.lse_max_abs, 1e-4) << chk.summary();
}

}  // namespace
}  // namespace zyfa::model
