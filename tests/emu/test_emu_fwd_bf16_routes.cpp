// BF16 d 128 paths that the configuration matrix of test_emu_fwd.cpp does not reach: the
// baseline kernel, which the host keeps for V views that the ping-pong kernel cannot load
// (rows that are not 16 bytes apart), and a negative softmax scale on the ping-pong kernel.
// Every run is checked against the fp64 reference, twice under different interleavings for
// bitwise determinism, and the kernel the host really launched is read from the emulator's
// per-launch line ($ZYFA_EMU_STATS), so that a change of routing cannot pass unnoticed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emu_run.h"

namespace zyfa::test {
namespace {

constexpr const char* kPingPong = "attn_fwd_bf16_d128_gfx950";
constexpr const char* kBaseline = "attn_fwd_bf16_d128";

// Re-lays a BSHD V with `pad` elements after each sequence row (its row stride grows by
// `pad`). The padding holds BF16 NaNs: a kernel that read it would turn outputs into NaN.
void pad_v_rows(AttnData& a, int64_t pad) {
  const AttnConfig& c = a.cfg;
  ASSERT_EQ(c.layout, Layout::BSHD);
  int64_t st[4];
  st[3] = 1;
  st[2] = c.d_v;
  st[1] = c.heads_k * c.d_v + pad;
  st[0] = c.seqlen * st[1];
  std::vector<uint8_t> v(static_cast<size_t>(c.batch * st[0]) * 2);
  for (size_t i = 0; i < v.size(); i += 2) {
    v[i] = 0xC1;  // 0x7FC1: a quiet NaN
    v[i + 1] = 0x7F;
  }
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t h = 0; h < c.heads_k; ++h)
        for (int64_t i = 0; i < c.d_v; ++i) {
          const int64_t from = b * a.v_stride[0] + s * a.v_stride[1] + h * a.v_stride[2] + i * a.v_stride[3];
          const int64_t to = b * st[0] + s * st[1] + h * st[2] + i;
          std::memcpy(&v[to * 2], &a.v[from * 2], 2);
        }
  a.v = std::move(v);
  std::memcpy(a.v_stride, st, sizeof st);
}

// The kernel names of the emulator's launch lines in `log`, space-separated.
std::string launched(const std::string& log) {
  std::string names;
  const std::string tag = "zyfa emu: ";
  for (size_t at = log.find(tag); at != std::string::npos; at = log.find(tag, at + 1)) {
    const size_t b = at + tag.size();
    names += (names.empty() ? "" : " ") + log.substr(b, log.find(' ', b) - b);
  }
  return names;
}

// Runs `a` under two interleavings, checks it against the fp64 reference, the two outputs
// bitwise equal and the launched kernel.
void run_and_check(AttnData& a, const std::string& name, const char* kernel) {
  const ReferenceResult ref = reference_fp64(a);
  std::printf("%s: input seed %llu\n", name.c_str(), static_cast<unsigned long long>(a.cfg.seed));
  const uint64_t interleavings[2] = {1, test_seed()};
  HostRun first;
  for (int i = 0; i < 2; ++i) {
    setenv("ZYFA_EMU_STATS", "1", 1);
    ::testing::internal::CaptureStderr();
    HostRun run = run_emu(a, interleavings[i]);
    const std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("ZYFA_EMU_STATS");
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << "interleaving seed " << interleavings[i] << ": " << run.error;
    EXPECT_EQ(launched(log), kernel);
    EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
    if (i == 0) {
      const CheckResult r = check_output(a, ref, run.out.data(), a.cfg.lse ? run.lse.data() : nullptr);
      EXPECT_TRUE(r.ok()) << name << " seed " << a.cfg.seed << ": " << r.summary();
      std::printf("%s: %s\n", name.c_str(), r.summary().c_str());
      first = std::move(run);
      continue;
    }
    EXPECT_EQ(0, std::memcmp(first.out.data(), run.out.data(), first.out.size() * 2))
        << "output differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
    if (a.cfg.lse)
      EXPECT_EQ(0, std::memcmp(first.lse.data(), run.lse.data(), first.lse.size() * 4))
          << "LSE differs between interleaving seeds " << interleavings[0] << " and " << interleavings[i];
  }
}

AttnData data_for(AttnConfig c, const std::string& name) {
  c.seed = seed_for(name);
  return make_attn_data(c);
}

// V rows 8 bytes past a multiple of 16: the baseline kernel. GQA 4:2, a tail tile; std 0.1
// and std 1 (peaked rows, the rescale taken and skipped).
TEST(EmuBf16D128Routes, BaselineForUnalignedVRows) {
  const std::string name = "EmuBf16D128Routes_BaselineForUnalignedVRows";
  AttnData a = data_for(AttnConfig::of(ZYFA_DTYPE_BF16, 128, 4, 2, 300), name);
  pad_v_rows(a, 4);
  run_and_check(a, name, kBaseline);
}

TEST(EmuBf16D128Routes, BaselineForUnalignedVRowsStd1) {
  const std::string name = "EmuBf16D128Routes_BaselineForUnalignedVRowsStd1";
  AttnData a = data_for(AttnConfig::of(ZYFA_DTYPE_BF16, 128, 2, 1, 200).with(Inputs::GAUSSIAN, 1.0), name);
  pad_v_rows(a, 12);
  run_and_check(a, name, kBaseline);
}

// Padding by whole 16-byte chunks keeps the ping-pong kernel (the routing is by alignment,
// not by padding).
TEST(EmuBf16D128Routes, PingPongForAlignedPaddedVRows) {
  const std::string name = "EmuBf16D128Routes_PingPongForAlignedPaddedVRows";
  AttnData a = data_for(AttnConfig::of(ZYFA_DTYPE_BF16, 128, 2, 1, 300), name);
  pad_v_rows(a, 8);
  run_and_check(a, name, kPingPong);
}

// A negative softmax scale (folded into Q by the kernel): std 1 inputs, so that the sign
// decides which keys dominate; GQA, a tail tile, LSE checked.
TEST(EmuBf16D128Routes, PingPongNegativeScale) {
  const std::string name = "EmuBf16D128Routes_PingPongNegativeScale";
  AttnConfig c = AttnConfig::of(ZYFA_DTYPE_BF16, 128, 4, 2, 300).with(Inputs::GAUSSIAN, 1.0);
  c.softmax_scale = -0.09f;
  AttnData a = data_for(c, name);
  run_and_check(a, name, kPingPong);
}

TEST(EmuBf16D128Routes, PingPongNegativeScaleRising) {
  const std::string name = "EmuBf16D128Routes_PingPongNegativeScaleRising";
  AttnConfig c = AttnConfig::of(ZYFA_DTYPE_BF16, 128, 2, 1, 300).with(Inputs::RISING);
  c.softmax_scale = -0.125f;
  AttnData a = data_for(c, name);
  run_and_check(a, name, kPingPong);
}

}  // namespace
}  // namespace zyfa::test
