// zyfa_fp8_quantize's options on the gfx950 kernels (fp8_rotate.hip) run by the emulator: every
// case against the fp64 rotation, and codes, descale and counter bitwise equal to the cpu
// backend (the arithmetic rule of docs/api.md, "Quantize options"), under two interleavings.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/rotation_quantize.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

// 14 rows (batch 1, seqlen 7, 2 heads): a partial last tile for every head_dim.
RotCase make(zyfa_dtype_t dt, int64_t d, zyfa_rotation_t rot, bool smooth, bool stat, bool count, bool peaked) {
  return RotCase::of(dt, d, rot, smooth, stat, count, peaked, 1, 7, 2);
}

const RotCase kCases[] = {
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, false, true, true),
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, true, true, true, true),
    make(ZYFA_DTYPE_FP32, 192, ZYFA_ROTATION_DCT3_HADAMARD64, true, true, true, true),
    make(ZYFA_DTYPE_BF16, 192, ZYFA_ROTATION_DCT3_HADAMARD64, false, false, false, false),
    make(ZYFA_DTYPE_BF16, 64, ZYFA_ROTATION_HADAMARD, true, false, false, false),
    make(ZYFA_DTYPE_BF16, 32, ZYFA_ROTATION_HADAMARD, false, true, true, true),
    make(ZYFA_DTYPE_FP32, 256, ZYFA_ROTATION_HADAMARD, false, false, false, true),
    make(ZYFA_DTYPE_BF16, 100, ZYFA_ROTATION_NONE, true, true, true, true),
    make(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, true, false, true, true).as_bhsd(),
    make(ZYFA_DTYPE_FP32, 192, ZYFA_ROTATION_DCT3_HADAMARD64, false, true, true, false).as_bhsd(),
    // 900 and 300 rows: the staged kernels' waves each take two groups of 64 rows (the second
    // loaded while the first is transformed) and end on a partial group.
    RotCase::of(ZYFA_DTYPE_BF16, 128, ZYFA_ROTATION_HADAMARD, false, true, true, true, 1, 300, 3),
    RotCase::of(ZYFA_DTYPE_BF16, 64, ZYFA_ROTATION_HADAMARD, false, false, false, false, 2, 50, 3),
};

class EmuRotQuantize : public ::testing::TestWithParam<RotCase> {};

TEST_P(EmuRotQuantize, MatchesFp64AndCpuBitwise) {
  RotCase c = GetParam();
  c.seed = seed_for("emu_" + c.name());
  std::printf("%s seed %llu\n", c.name().c_str(), (unsigned long long)c.seed);
  const RotInputs in = make_rot_inputs(c);
  const RotResult cpu = run_rot_quantize(ZYFA_BACKEND_CPU, c, in, host_memory());
  ASSERT_EQ(check_rot_result(c, in, cpu), "");
  for (const char* interleave : {"1", "77"}) {
    setenv("ZYFA_EMU_SEED", interleave, 1);
    const RotResult emu = run_rot_quantize(ZYFA_BACKEND_EMU, c, in, host_memory());
    EXPECT_EQ(check_rot_result(c, in, emu), "") << "interleaving " << interleave;
    EXPECT_EQ(compare_rot_results(emu, cpu), "") << "against the cpu backend";
  }
  unsetenv("ZYFA_EMU_SEED");
}

INSTANTIATE_TEST_SUITE_P(Cases, EmuRotQuantize, ::testing::ValuesIn(kCases),
                         [](const auto& i) { return i.param.name(); });

// Non-finite sources (tests/support/rotation_quantize.h), static and computed descale.
TEST(EmuRotQuantize, NonFiniteRowsMatchCpuBitwise) {
  for (const bool stat : {true, false}) EXPECT_EQ(nonfinite_rows_vs_cpu(ZYFA_BACKEND_EMU, stat, host_memory()), "");
}

}  // namespace
}  // namespace zyfa::test
