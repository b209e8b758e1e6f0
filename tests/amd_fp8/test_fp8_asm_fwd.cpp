// The generated FP8 kernels (d_qk 128 and 192) through zyfa_fwd on the emu backend, on a matrix of
// configurations: (1) against the fp64 reference within kernel_tolerance; (2) against the CPU
// bit-model of the numerics it implements (lean P, per-64-key-block scaling, rounded-P row sum,
// lazy rescaling at 0.125 per 64-key block), where only fp32 summation order may differ;
// (3) bitwise equal under three wave interleavings; poisoned outputs and a guard past them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emu_run.h"
#include "host/numerics/bf16.h"
#include "support/fp8_model.h"
#include "support/host_run.h"
#include "support/seeded.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

// Kernel against bit-model. The model sums q.k in 8 fp32 partial sums, P.V and the row sum
// sequentially, and divides; the kernel sums in MFMA order (each 32-wide K block exactly,
// rounded once into fp32) and multiplies by a reciprocal. Those differences move scores by a
// few fp32 ulps, which
//   * flips a lean-P code (trunc at an integer) for a few elements in 10^5, and moves an output
//     across a BF16 rounding boundary now and then (one BF16 ulp, 2^-8 relative): a row then
//     differs by ~1e-4..1e-3 relative;
//   * rarely (a few rows in 10^4) flips a lazy-rescale decision, when a tile's max exceeds the
//     running max by almost exactly 0.125: from there on the row's P is computed against
//     another max and rounded differently, so that row differs at the FP8 rounding level
//     (~2e-2, LSE ~5e-3 nats), while every other row is untouched.
// So the test is per row: a row agrees when it is within kRowAgree (and its LSE within
// kLseAgree); at most 1% of rows (and at least one) may disagree, and those only at the FP8
// rounding level (kRowMax, kLseMax). Over 41 seeds of this matrix: at most 2 disagreeing rows
// (of 4000), at most 1 in 256; the worst row 1.9e-2 relative and 5.0e-3 nats. About one run in
// a thousand of Fp8_D128_Mha1_S1000_Real flips a decision on a row where the two sides land on
// opposite sides of fp64 (ZYFA_TEST_SEED=1796183346945514117, row 184: kernel 3.1e-2 and LSE
// -0.024 nats from fp64, model 2.8e-2 and +0.015, so 5.8e-2 and 0.039 nats apart): each side is
// within the LSE bound against fp64 (kLseBound, which the kernel's every row is held to below),
// so two of them may differ by more than either does from fp64; kLseMax is that bound. The model
// with another numerics choice (exact P, no block scaling, unrounded denominator) disagrees in
// most rows (ModelComparisonCanFail below).
constexpr double kRowAgree = 4e-3;       // relative L2 of a row (FP8 P rounding: ~2e-2)
constexpr double kLseAgree = 1e-3;       // nats
constexpr double kDisagreeRows = 0.01;   // fraction of rows allowed to disagree (rounded up)
constexpr double kRowMax = 0.1;          // relative L2 of any row: a wrong row is off by ~1

// LSE against fp64, tighter than kernel_tolerance (docs/numerics.md, "LSE of the generated FP8
// kernels"): a sequence's first 64 rows take their keys' unrounded 2^x, so only fp32 rounding
// is left there (the scores' relative 2^-24 times |score|, the exponentials', the sum's); every
// other row within the bound measured for the kernels' lean P over 20 seeds of each peaked input
// kind (worst 0.039 nats), with room.
constexpr double kLseFirstRows = 1e-4;  // nats, rows 0..63 of each sequence (measured: 7e-6)
constexpr double kLseBound = 0.05;      // nats, any row
constexpr double kLseMax = kLseBound;   // nats, kernel against model, any row (see above)

// The worst |LSE - fp64| over the first 64 rows of each sequence and over all rows.
struct LseError {
  double first = 0, any = 0;
  int64_t first_at = -1, any_at = -1;  // (b * heads + h) * seqlen + s
};
LseError lse_error(const AttnData& a, const ReferenceResult& ref, const std::vector<float>& lse) {
  LseError e;
  for (size_t i = 0; i < a.lse_count(); ++i) {
    double d = std::fabs(double(lse[i]) - ref.lse[i]);
    if (std::isnan(d)) d = INFINITY;
    if (!(d <= e.any)) e.any = d, e.any_at = static_cast<int64_t>(i);
    if (static_cast<int64_t>(i) % a.cfg.seqlen < 64 && !(d <= e.first)) e.first = d, e.first_at = static_cast<int64_t>(i);
  }
  return e;
}

struct Diff {
  int64_t rows = 0, disagree = 0;
  double max_row_rel = 0, lse_max = 0, rel_rms = 0;
  double exact_fraction = 0;  // elements bitwise equal to the model
  bool rows_ok() const {
    return disagree <= std::max<int64_t>(1, static_cast<int64_t>(std::ceil(kDisagreeRows * rows))) &&
           max_row_rel <= kRowMax && lse_max <= kLseMax;
  }
  std::string summary() const {
    char b[240];
    std::snprintf(b, sizeof b,
                  "vs model: %lld of %lld rows disagree, worst row %.3e, worst LSE %.3e nats, rel_rms=%.3e, "
                  "bitwise-equal=%.4f", static_cast<long long>(disagree), static_cast<long long>(rows), max_row_rel,
                  lse_max, rel_rms, exact_fraction);
    return b;
  }
};

Diff compare(const AttnData& a, const std::vector<uint16_t>& out, const std::vector<float>& lse,
             const model::ModelResult& m) {
  const AttnConfig& c = a.cfg;
  Diff d;
  double num_all = 0, den_all = 0;
  size_t equal = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t s = 0; s < c.seqlen; ++s) {
        double num = 0, den = 0;
        for (int64_t i = 0; i < c.d_v; ++i) {
          const size_t at = static_cast<size_t>(a.out_offset(b, s, h, i));
          const double o = numerics::bf16_to_float(out[at]), r = numerics::bf16_to_float(m.out[at]);
          num += (o - r) * (o - r);
          den += r * r;
          equal += out[at] == m.out[at];
        }
        double row = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
        double lse_diff = 0;
        if (c.lse) {
          const size_t at = static_cast<size_t>((b * c.heads + h) * c.seqlen + s);
          lse_diff = std::fabs(double(lse[at]) - double(m.lse[at]));
        }
        if (std::isnan(row) || std::isnan(lse_diff)) row = lse_diff = INFINITY;
        ++d.rows;
        d.disagree += row > kRowAgree || lse_diff > kLseAgree;
        d.max_row_rel = std::max(d.max_row_rel, row);
        d.lse_max = std::max(d.lse_max, lse_diff);
        num_all += num;
        den_all += den;
      }
  d.rel_rms = den_all > 0 ? std::sqrt(num_all / den_all) : std::sqrt(num_all);
  d.exact_fraction = double(equal) / double(d.rows * c.d_v);
  return d;
}

std::vector<AttnConfig> configs() {
  using C = AttnConfig;
  const auto f = ZYFA_DTYPE_FP8_E4M3;
  std::vector<AttnConfig> v;
  // Sequence edges around the 32-row wave, 64-key scale block and 128-row/128-key tiles.
  for (int64_t s : {1, 37, 64, 65, 256, 300}) v.push_back(C::of(f, 128, 4, 2, s));
  v.push_back(C::of(f, 128, 2, 2, 129).with(Layout::BHSD));                           // MHA, bhsd
  v.push_back(C::of(f, 128, 3, 1, 200).with(Layout::PACKED_QKV).without_lse());      // MQA, packed
  v.push_back(C::of(f, 128, 2, 1, 300).with(Inputs::REALISTIC));                     // most blocks far below the max
  v.push_back(C::of(f, 128, 2, 2, 160).with(Inputs::GAUSSIAN, 1.0));                 // peaked rows, rescaling
  v.push_back(C::of(f, 128, 4, 2, 100).with(DescaleMode::DEVICE_SCALAR));
  v.push_back(C::of(f, 128, 4, 2, 90).with(Layout::BHSD).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(f, 128, 4, 1, 70).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  // A negative softmax scale: the kernel takes maxima over raw accumulators, so it moves the
  // sign into Q; the largest scaled score is then the smallest dot product.
  AttnConfig negative = C::of(f, 128, 2, 1, 150).with(Inputs::GAUSSIAN, 1.0);
  negative.softmax_scale = -0.09f;
  v.push_back(negative);
  // Several jobs per persistent workgroup, eight key tiles in the longest rows.
  v.push_back(C::of(f, 128, 4, 1, 1000));
  v.push_back(C::of(f, 128, 1, 1, 1000).with(Inputs::REALISTIC));
  // d_qk 192 / d_v 128 (the same generator): tails, GQA with device descales, peaked and
  // rising rows, a negative scale, MQA without LSE, several jobs per workgroup.
  for (int64_t s : {1, 65, 300}) v.push_back(C::of(f, 192, 4, 2, s));
  v.push_back(C::of(f, 192, 4, 1, 90).with(Layout::BHSD).with(DescaleMode::DEVICE_PER_HEAD).with_batch(2));
  v.push_back(C::of(f, 192, 2, 2, 160).with(Inputs::GAUSSIAN, 1.0));
  v.push_back(C::of(f, 192, 2, 1, 200).with(Inputs::RISING));
  v.push_back(C::of(f, 192, 2, 1, 300).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_SCALAR));
  AttnConfig negative192 = C::of(f, 192, 2, 1, 150).with(Inputs::GAUSSIAN, 1.0);
  negative192.softmax_scale = -0.09f;
  v.push_back(negative192);
  v.push_back(C::of(f, 192, 3, 1, 200).without_lse());
  v.push_back(C::of(f, 192, 2, 1, 1000));
  return v;
}

class Fp8Asm : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fp8Asm, Emu) {
  const AttnConfig c = seeded(GetParam(), "Fp8Asm/");
  AttnData a = make_attn_data(c);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  const ReferenceResult ref = reference_fp64(a);
  const model::ModelResult m = model::run_kernel_model(a, model::kernel_options(c));

  HostRun first;
  ASSERT_NO_FATAL_FAILURE(run_emu_interleavings(a, {1, 0xC0FFEEull, test_seed()}, &first));
  const CheckResult r = check_output(a, ref, first.out.data(), c.lse ? first.lse.data() : nullptr);
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  if (c.lse) {
    const LseError e = lse_error(a, ref, first.lse);
    std::printf("%s: LSE vs fp64: first 64 rows %.3e nats (at %lld), any row %.3e (at %lld)\n", c.name().c_str(),
                e.first, static_cast<long long>(e.first_at), e.any, static_cast<long long>(e.any_at));
    EXPECT_LE(e.first, kLseFirstRows) << c.name() << " seed " << c.seed << " at " << e.first_at;
    EXPECT_LE(e.any, kLseBound) << c.name() << " seed " << c.seed << " at " << e.any_at;
  }
  const Diff d = compare(a, first.out, first.lse, m);
  std::printf("%s: vs fp64: %s\n%s: %s\n", c.name().c_str(), r.summary().c_str(), c.name().c_str(),
              d.summary().c_str());
  EXPECT_TRUE(d.rows_ok()) << c.name() << " seed " << c.seed << ": " << d.summary();
}

// Test names are the configuration names; a negative scale's "-" becomes "Minus" (gtest names
// take letters, digits and '_' only).
std::string test_name(const ::testing::TestParamInfo<AttnConfig>& i) {
  std::string n = i.param.name();
  for (size_t at = n.find('-'); at != std::string::npos; at = n.find('-')) n.replace(at, 1, "Minus");
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fwd, Fp8Asm, ::testing::ValuesIn(configs()), test_name);

// The model comparison distinguishes numerics choices: the bit-model with another choice than
// the kernel's (exact P, no block scaling, the unrounded denominator) must land outside the
// bound that the kernel meets, on inputs where each choice matters.
TEST(Fp8AsmModel, ModelComparisonCanFail) {
  struct Variant {
    const char* name;
    AttnConfig cfg;
    void (*change)(model::KernelModelOptions&);
  };
  const auto f = ZYFA_DTYPE_FP8_E4M3;
  const Variant variants[] = {
      {"exact P", AttnConfig::of(f, 128, 2, 1, 300), [](model::KernelModelOptions& o) { o.p_mode = model::PMode::EXACT; }},
      {"no block scaling", AttnConfig::of(f, 128, 2, 1, 300).with(Inputs::REALISTIC),
       [](model::KernelModelOptions& o) { o.block_scaling = false; }},
      {"unrounded denominator", AttnConfig::of(f, 128, 2, 1, 300),
       [](model::KernelModelOptions& o) { o.denominator = model::Denominator::UNROUNDED_P; }},
  };
  for (const Variant& v : variants) {
    AttnConfig c = v.cfg;
    c.seed = seed_for(std::string("Fp8AsmModel/") + v.name);
    AttnData a = make_attn_data(c);
    const HostRun run = run_emu(a, 1);
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    model::KernelModelOptions o = model::kernel_options(c);
    const Diff same = compare(a, run.out, run.lse, model::run_kernel_model(a, o));
    v.change(o);
    const Diff other = compare(a, run.out, run.lse, model::run_kernel_model(a, o));
    std::printf("%s seed %llu: kernel's choice %s; %s %s\n", c.name().c_str(), static_cast<unsigned long long>(c.seed),
                same.summary().c_str(), v.name, other.summary().c_str());
    EXPECT_TRUE(same.rows_ok()) << v.name << ": " << same.summary();
    EXPECT_FALSE(other.rows_ok()) << v.name << ": the comparison does not see this choice: " << other.summary();
    EXPECT_GT(other.disagree, other.rows / 4) << v.name << ": " << other.summary();
  }
}

}  // namespace
}  // namespace zyfa::test
