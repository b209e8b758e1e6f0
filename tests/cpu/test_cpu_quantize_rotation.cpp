// zyfa_fp8_quantize's options on the cpu backend against an fp64 rotation (the options alone and
// combined, peaked and std-0.1 inputs), zyfa_rotation_matrix (orthogonal, the documented R), the
// older descriptor size, and the field checks (status, message naming the field, nothing written).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/rotation_quantize.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

using Param = std::tuple<int, bool, bool, bool>;  // rotation/dim choice, smooth, static, peaked

RotCase case_of(const Param& p) {
  RotCase c;
  const int which = std::get<0>(p);
  static const zyfa_rotation_t rots[] = {ZYFA_ROTATION_NONE, ZYFA_ROTATION_HADAMARD, ZYFA_ROTATION_HADAMARD,
                                         ZYFA_ROTATION_HADAMARD, ZYFA_ROTATION_DCT3_HADAMARD64};
  static const int64_t dims[] = {128, 128, 32, 256, 192};
  c.rotation = rots[which];
  c.head_dim = dims[which];
  c.smooth = std::get<1>(p);
  c.static_scale = std::get<2>(p);
  c.count = c.static_scale || which == 1;
  c.peaked = std::get<3>(p);
  c.dtype = which == 3 ? ZYFA_DTYPE_FP32 : ZYFA_DTYPE_BF16;
  c.batch = 2;
  return c;
}

class CpuRotQuantize : public ::testing::TestWithParam<Param> {};

TEST_P(CpuRotQuantize, MatchesFp64Rotation) {
  RotCase c = case_of(GetParam());
  c.seed = seed_for(c.name());
  std::printf("%s seed %llu\n", c.name().c_str(), (unsigned long long)c.seed);
  const RotInputs in = make_rot_inputs(c);
  const RotResult r = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  EXPECT_EQ(check_rot_result(c, in, r), "");
  // Deterministic: a second call gives the same bytes.
  const RotResult again = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  EXPECT_EQ(again.codes, r.codes);
  EXPECT_EQ(again.descale, r.descale);
}

INSTANTIATE_TEST_SUITE_P(Options, CpuRotQuantize,
                         ::testing::Combine(::testing::Range(0, 5), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto& i) { return case_of(i.param).name(); });

// Rows that are not contiguous with each other: (b, h, s, d) source and destination.
TEST(CpuRotQuantize, BhsdLayout) {
  for (zyfa_rotation_t rot : {ZYFA_ROTATION_HADAMARD, ZYFA_ROTATION_DCT3_HADAMARD64}) {
    RotCase c;
    c.rotation = rot;
    c.head_dim = rot == ZYFA_ROTATION_HADAMARD ? 64 : 192;
    c.batch = 2;
    c.smooth = c.static_scale = c.count = true;
    c.bhsd = true;
    c.seed = seed_for(c.name());
    std::printf("%s seed %llu\n", c.name().c_str(), (unsigned long long)c.seed);
    const RotInputs in = make_rot_inputs(c);
    const RotResult r = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
    EXPECT_EQ(check_rot_result(c, in, r), "");
  }
}

// The check can fail: codes of another R (seed), no R, or a lost smoothing mean are rejected.
TEST(CpuRotQuantize, CheckRejectsAnotherTransform) {
  RotCase c;
  c.smooth = true;
  c.seed = seed_for("CheckRejectsAnotherTransform");
  std::printf("seed %llu\n", (unsigned long long)c.seed);
  const RotInputs in = make_rot_inputs(c);
  const RotResult r = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  ASSERT_EQ(check_rot_result(c, in, r), "");
  RotInputs other_seed = in;
  other_seed.rotation_seed ^= 1;
  EXPECT_NE(check_rot_result(c, other_seed, r), "");
  RotCase unrotated = c;
  unrotated.rotation = ZYFA_ROTATION_NONE;
  EXPECT_NE(check_rot_result(unrotated, in, r), "");
  RotCase unsmoothed = c;
  unsmoothed.smooth = false;
  EXPECT_NE(check_rot_result(unsmoothed, in, r), "");
}

// docs/accuracy.md's criterion, end to end through zyfa_fwd on inputs with outlier channels:
// the rotated FP8 call's error against fp64 attention of the unquantized inputs is at most 0.6x
// the unrotated one.
class CpuRotEndToEnd : public ::testing::TestWithParam<int64_t> {};

TEST_P(CpuRotEndToEnd, RotationCutsTheAttentionError) {
  E2eCase c;
  c.d_qk = GetParam();
  c.seqlen = 192;
  c.seed = seed_for("RotationCutsTheAttentionError" + std::to_string(c.d_qk));
  std::printf("d_qk %lld seed %llu\n", (long long)c.d_qk, (unsigned long long)c.seed);
  const E2eErrors e = e2e_rotation_errors(ZYFA_BACKEND_CPU, c);
  ASSERT_EQ(e.error, "");
  std::printf("rel RMS error: plain %.4g, rotated %.4g (%.2fx), rotated + smoothed %.4g (%.2fx)\n", e.plain,
              e.rotated, e.rotated / e.plain, e.rotated_smoothed, e.rotated_smoothed / e.plain);
  EXPECT_LE(e.rotated, 0.6 * e.plain);
  EXPECT_LE(e.rotated_smoothed, 0.6 * e.plain);
}

INSTANTIATE_TEST_SUITE_P(Dims, CpuRotEndToEnd, ::testing::Values<int64_t>(128, 192),
                         [](const auto& i) { return "D" + std::to_string(i.param); });

TEST(RotationMatrix, OrthogonalAndAsDocumented) {
  const uint64_t seed = seed_for("RotationMatrix");
  std::printf("seed %llu\n", (unsigned long long)seed);
  struct K { zyfa_rotation_t kind; int64_t d; };
  for (K k : {K{ZYFA_ROTATION_HADAMARD, 32}, K{ZYFA_ROTATION_HADAMARD, 64}, K{ZYFA_ROTATION_HADAMARD, 128},
              K{ZYFA_ROTATION_HADAMARD, 256}, K{ZYFA_ROTATION_DCT3_HADAMARD64, 192}}) {
    const int64_t d = k.d;
    std::vector<float> R(size_t(d * d), std::nanf(""));
    ASSERT_EQ(zyfa_rotation_matrix(k.kind, d, seed, R.data()), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    double worst_orth = 0, worst_def = 0;
    for (int64_t i = 0; i < d; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += double(R[i * d + t]) * R[j * d + t];
        worst_orth = std::max(worst_orth, std::fabs(dot - (i == j)));
        const double want = reference_rotation(k.kind, d, seed, i, j);
        worst_def = std::max(worst_def, std::fabs(R[i * d + j] - want));
      }
    }
    EXPECT_LE(worst_orth, 1e-6) << "d " << d;
    EXPECT_LE(worst_def, 1e-7) << "d " << d;  // one float rounding of entries below 1
    std::vector<float> other(size_t(d * d));
    ASSERT_EQ(zyfa_rotation_matrix(k.kind, d, seed + 1, other.data()), ZYFA_STATUS_SUCCESS);
    EXPECT_NE(other, R) << "the seed changes the signs";
  }
  float out[4];
  EXPECT_EQ(zyfa_rotation_matrix(ZYFA_ROTATION_HADAMARD, 96, 1, out), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("head_dim = 96"), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(zyfa_rotation_matrix(ZYFA_ROTATION_DCT3_HADAMARD64, 128, 1, out), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(zyfa_rotation_matrix(ZYFA_ROTATION_NONE, 128, 1, out), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(zyfa_rotation_matrix(ZYFA_ROTATION_HADAMARD, 128, 1, nullptr), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("out"), std::string::npos);
}

// A caller compiled against the descriptor before the options (192 bytes) gets no option, even
// with garbage where the new fields now lie.
TEST(CpuRotQuantize, OlderDescriptorSizeGetsTheDefaults) {
  std::vector<uint16_t> src(128);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(0x3F80 + i);  // 1.0 upwards
  std::vector<uint8_t> want(128, 0x7F), got(128, 0x7F);
  float want_ds = 0, got_ds = 0;
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
  d.src = zyfa_tensor_bshd(src.data(), ZYFA_DTYPE_BF16, 1, 1, 1, 128);
  d.dst = zyfa_tensor_bshd(want.data(), ZYFA_DTYPE_FP8_E4M3, 1, 1, 1, 128);
  d.descale = &want_ds;
  d.backend = ZYFA_BACKEND_CPU;
  ASSERT_EQ(zyfa_fp8_quantize(h, &d), ZYFA_STATUS_SUCCESS);
  zyfa_quantize_desc_t old = d;
  std::memset(reinterpret_cast<char*>(&old) + offsetof(zyfa_quantize_desc_t, rotation), 0x55,
              sizeof(old) - offsetof(zyfa_quantize_desc_t, rotation));
  old.struct_size = 192;
  old.dst.data = got.data();
  old.descale = &got_ds;
  ASSERT_EQ(zyfa_fp8_quantize(h, &old), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_ds, want_ds);
  old.struct_size = 200;
  EXPECT_EQ(zyfa_fp8_quantize(h, &old), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("struct_size = 200"), std::string::npos);
  zyfa_destroy(h);
}

// Each bad option: its status, a message naming the field, and dst, descale, counter untouched.
TEST(CpuRotQuantize, BadOptionsNameTheFieldAndWriteNothing) {
  std::vector<uint16_t> src(2 * 192, 0x3F80);
  std::vector<uint8_t> dst(2 * 192, 0x7F);
  float descale = -3.0f;
  uint32_t counter[2] = {77, 77};
  std::vector<float> mean(2 * 192 + 1, 0.0f);
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  struct Bad {
    const char* field;
    zyfa_status_t status;
    std::function<void(zyfa_quantize_desc_t&)> edit;
  };
  const std::vector<Bad> bad = {
      {"desc->rotation = 7", ZYFA_STATUS_INVALID_ARGUMENT, [](auto& d) { d.rotation = zyfa_rotation_t(7); }},
      {"src.shape[3] = 96", ZYFA_STATUS_INVALID_ARGUMENT,
       [](auto& d) { d.rotation = ZYFA_ROTATION_HADAMARD; d.src.shape[3] = d.dst.shape[3] = 96; }},
      {"src.shape[3] = 16", ZYFA_STATUS_NOT_SUPPORTED,
       [](auto& d) { d.rotation = ZYFA_ROTATION_HADAMARD; d.src.shape[3] = d.dst.shape[3] = 16; }},
      {"src.shape[3] = 128", ZYFA_STATUS_INVALID_ARGUMENT,
       [](auto& d) { d.rotation = ZYFA_ROTATION_DCT3_HADAMARD64; d.src.shape[3] = d.dst.shape[3] = 128; }},
      {"desc->static_descale = -1", ZYFA_STATUS_INVALID_ARGUMENT, [](auto& d) { d.static_descale = -1.0f; }},
      {"desc->static_descale = nan", ZYFA_STATUS_INVALID_ARGUMENT, [](auto& d) { d.static_descale = std::nanf(""); }},
      {"desc->static_descale = 1e-40", ZYFA_STATUS_INVALID_ARGUMENT, [](auto& d) { d.static_descale = 1e-40f; }},
      {"desc->smooth_mean", ZYFA_STATUS_INVALID_ARGUMENT,
       [&](auto& d) { d.smooth_mean = reinterpret_cast<const float*>(reinterpret_cast<const char*>(mean.data()) + 2); }},
      {"desc->smooth_mean", ZYFA_STATUS_INVALID_ARGUMENT,
       [&](auto& d) { d.smooth_mean = reinterpret_cast<const float*>(d.descale); }},
      {"desc->saturated", ZYFA_STATUS_INVALID_ARGUMENT,
       [&](auto& d) { d.saturated = reinterpret_cast<uint32_t*>(dst.data()); }},
      {"desc->saturated", ZYFA_STATUS_INVALID_ARGUMENT,
       [&](auto& d) { d.saturated = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(counter) + 1); }},
      {"desc->saturated", ZYFA_STATUS_INVALID_ARGUMENT,
       [&](auto& d) { d.smooth_mean = mean.data(); d.saturated = reinterpret_cast<uint32_t*>(mean.data() + 5); }},
  };
  for (const Bad& b : bad) {
    zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
    d.src = zyfa_tensor_bshd(src.data(), ZYFA_DTYPE_BF16, 1, 1, 2, 192);
    d.dst = zyfa_tensor_bshd(dst.data(), ZYFA_DTYPE_FP8_E4M3, 1, 1, 2, 192);
    d.descale = &descale;
    d.saturated = counter;
    d.backend = ZYFA_BACKEND_CPU;
    b.edit(d);
    EXPECT_EQ(zyfa_fp8_quantize(h, &d), b.status) << b.field;
    EXPECT_NE(std::string(zyfa_last_error()).find(b.field), std::string::npos)
        << "want '" << b.field << "' in: " << zyfa_last_error();
  }
  for (uint8_t c : dst) ASSERT_EQ(c, 0x7F) << "dst written on error";
  EXPECT_EQ(descale, -3.0f);
  EXPECT_EQ(counter[0], 77u);
  zyfa_destroy(h);
}

}  // namespace
}  // namespace zyfa::test
