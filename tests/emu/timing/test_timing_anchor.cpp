// The timing model's second anchor: the reference system's FP8 d 128 key loop spends 1024
// matrix-pipe clocks per 32-query x 128-key block on QK^T and PV (plus the row-sum MFMAs) and
// keeps the matrix pipe busy 86% of its steady state. kernels/fp8_pingpong.s issues that
// schedule (two waves per SIMD trading the MFMA and softmax phases); the steady state is the
// difference between 8 and 4 blocks per wave.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "emu/timing/mi355x.h"
#include "micro_kernel.h"

namespace zyfa::emu::timing {
namespace {

Prediction run_pingpong(const char* kernel) {
  static std::vector<uint32_t> in(32768 / 4), out(16);
  return predict_micro(MicroLaunch("fp8_pingpong.co", kernel, 512).buffers(out, in));
}

TEST(TimingAnchor, Fp8PingPongKeyLoop) {
  const Prediction a = run_pingpong("k_fp8_pingpong_4"), b = run_pingpong("k_fp8_pingpong_8");
  ASSERT_TRUE(a.ok && b.ok);
  constexpr int kWaves = 8, kAddedBlocks = 4;
  const double clocks = double(b.cycles) - double(a.cycles);
  const double matrix = double(b.stats.matrix_busy) - double(a.stats.matrix_busy);
  const double per_block = matrix / (kWaves * kAddedBlocks);
  const double busy = matrix / kSimdsPerCu / clocks;
  std::printf("%s\n", b.json().c_str());
  std::printf("steady state: %.0f clocks per block and SIMD pair, %.1f matrix-pipe clocks per block, "
              "matrix pipe busy %.1f%% (reference: 1024 + row sum, 86%%)\n",
              clocks / kAddedBlocks, per_block, 100 * busy);
  // 16 MFMAs of 16 passes (QK^T and PV, 1024 clocks) and 2 row-sum MFMAs of 8 passes.
  EXPECT_DOUBLE_EQ(per_block, 16 * 16 * kMfmaCyclesPerPass + 2 * 8 * kMfmaCyclesPerPass);
  EXPECT_NEAR(busy, 0.86, 0.05);
}

}  // namespace
}  // namespace zyfa::emu::timing
