// The MI355X timing model on micro-kernels whose cycle counts follow by hand from the model's
// constants (src/emu/timing/mi355x.h), and the LDS bank-conflict cost of address patterns.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "emu/timing/memory_cost.h"
#include "emu/timing/mi355x.h"
#include "micro_kernel.h"

namespace zyfa::emu::timing {
namespace {

// Predicted clocks of one workgroup of `threads` work-items on an otherwise idle MI355X.
uint64_t cycles_of(const char* kernel, uint32_t threads = 64) {
  // Buffers on 128-byte lines, so that a load of 256 contiguous bytes touches two.
  alignas(128) static uint32_t in[1024], out[1024];
  MicroLaunch l("timing.co", kernel, threads);
  l.out = out;
  l.out_bytes = sizeof(out);
  l.in = in;
  l.in_bytes = sizeof(in);
  const Prediction p = predict_micro(l);
  EXPECT_EQ(p.cus_simulated, 1);
  return p.cycles;
}

constexpr uint64_t L = kWorkgroupLaunchCycles;  // the wave's first issue slot (SIMD 0)
uint64_t round_up4(uint64_t x) { return (x + 3) / 4 * 4; }

TEST(TimingModel, MfmaChainIsMatrixPipeBound) {
  // 32 MFMAs of 8 passes back to back; the wave ends when the last one leaves the pipe.
  EXPECT_EQ(cycles_of("k_mfma_chain"), L + 32 * 8 * kMfmaCyclesPerPass);
}

TEST(TimingModel, ValuChainIssuesEveryFourClocks) {
  // 64 VALU operations, one per issue slot; s_endpgm in the slot after the last.
  EXPECT_EQ(cycles_of("k_valu_chain"), L + 64 * kValuCycles);
}

TEST(TimingModel, TranscendentalsAreQuarterRate) {
  EXPECT_EQ(cycles_of("k_trans_chain"), L + 15 * kTransCycles + kIssuePeriod);
}

TEST(TimingModel, WaitcntWaitsForLoadLatency) {
  // s_load at L, usable at L + SMEM latency; v_lshlrev then; the global load one slot later
  // touches two 128-byte lines from HBM: 256 bytes through the CU's share of L2 bandwidth and
  // of HBM bandwidth (all of it: the only busy CU), then the L2 latency and the extra of a
  // miss; s_endpgm at the first slot after it.
  const uint64_t issue = L + kSmemLatency + kIssuePeriod;
  const uint64_t l2 = issue + uint64_t(2 * kCacheLineBytes / kL2BytesPerClkPerCu);
  const uint64_t hbm = uint64_t(std::ceil(double(issue) + 2 * kCacheLineBytes / hbm_bytes_per_clk_per_cu(1)));
  EXPECT_EQ(cycles_of("k_load_latency"), round_up4(std::max(l2, hbm) + kVmemLatency + kHbmExtraLatency));
}

TEST(TimingModel, LdsBankConflictsSerialize) {
  // First read one slot after the address VALU; eight reads one slot apart. Without conflicts
  // each takes one LDS clock; with every lane in bank 0 each takes 64 and they queue.
  const uint64_t first = L + kIssuePeriod;
  EXPECT_EQ(cycles_of("k_lds_no_conflict"), round_up4(first + 7 * kIssuePeriod + 1 + kLdsLatency));
  EXPECT_EQ(cycles_of("k_lds_conflict"), round_up4(first + 8 * 64 + kLdsLatency));
}

TEST(TimingModel, TwoWavesOnOneSimdOverlapMfmaAndValu) {
  // Wave 0's 32 MFMAs keep the matrix pipe busy 32 x 32 clocks and need 32 VALU issue slots;
  // wave 4's 224 VALU operations need 224 more: 256 slots of 4 clocks = 1024 clocks, the
  // same as the matrix pipe, so the two overlap completely instead of taking 2048 clocks.
  const uint64_t c = cycles_of("k_mfma_valu_two_waves", 320);
  const uint64_t matrix = 32 * 8 * kMfmaCyclesPerPass;
  EXPECT_GE(c, L + matrix);
  // The prologue (readfirstlane, s_nop 1, s_cmp, taken branch) delays the first MFMA by 36
  // clocks; wave 4's VALU operations may delay an MFMA issue by at most a slot or two.
  EXPECT_GE(c, L + 36 + matrix);
  EXPECT_LE(c, L + 36 + matrix + 8);
}

TEST(TimingModel, LdsBankCyclesOfAddressPatterns) {
  std::array<uint64_t, 256> a{};
  auto fill = [&](int dwords, uint64_t lane_stride) {
    for (int l = 0; l < 64; ++l)
      for (int k = 0; k < dwords; ++k) a[l * 4 + k] = l * lane_stride + 4 * k;
  };
  fill(1, 4);
  EXPECT_EQ(lds_bank_cycles(a.data(), 1, ~0ull), 1u);  // 64 lanes, 64 banks
  fill(1, 0);
  EXPECT_EQ(lds_bank_cycles(a.data(), 1, ~0ull), 1u);  // one dword: broadcast
  fill(1, 8);
  EXPECT_EQ(lds_bank_cycles(a.data(), 1, ~0ull), 2u);  // two lanes per even bank
  fill(2, 8);
  EXPECT_EQ(lds_bank_cycles(a.data(), 2, ~0ull), 2u);  // b64: two phases of 32 lanes
  fill(4, 16);
  EXPECT_EQ(lds_bank_cycles(a.data(), 4, ~0ull), 4u);  // b128: four phases of 16 lanes
  fill(4, 256);
  EXPECT_EQ(lds_bank_cycles(a.data(), 4, ~0ull), 64u);  // b128, every lane on banks 0-3
  fill(1, 4);
  EXPECT_EQ(lds_bank_cycles(a.data(), 1, 0xFull), 1u);
}

}  // namespace
}  // namespace zyfa::emu::timing
