// BF16 d 128, BF16 d 192/128 and FP8 d 192/128 paths that the configuration matrix of
// test_emu_fwd.cpp does not reach: the BF16 baseline kernels, which the host keeps for V views
// that the ping-pong kernels cannot load (rows that are not 16 bytes apart), the generated FP8
// d 192/128 kernel on such views, a negative softmax scale, and the balanced job table that
// only shapes of more jobs than workgroups take. (The FP8 d 192/128 HIP kernels serve offsets
// beyond 32 bits only: tests/amd_fp8/test_fp8_hip_fallback.cpp runs them.)
// Every run is checked against the fp64 reference, twice under different interleavings for
// bitwise determinism, and the kernel the host really launched is read from the emulator's
// per-launch line ($ZYFA_EMU_STATS), so that a change of routing cannot pass unnoticed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emu_run.h"
#include "support/padded_rows.h"

namespace zyfa::test {
namespace {

constexpr const char* kPingPong = "attn_fwd_bf16_d128_gfx950";
constexpr const char* kBaseline = "attn_fwd_bf16_d128";
constexpr const char* kPingPong192 = "attn_fwd_bf16_d192_gfx950";
constexpr const char* kBaseline192 = "attn_fwd_bf16_d192";
constexpr const char* kFp8Generated192 = "attn_fwd_fp8_d192";

// Runs `a` under two interleavings (bitwise equal, run_emu_interleavings), checks it against
// the fp64 reference and the kernel each run launched.
void run_and_check(AttnData& a, const std::string& name, const char* kernel) {
  const ReferenceResult ref = reference_fp64(a);
  std::printf("%s: input seed %llu\n", name.c_str(), static_cast<unsigned long long>(a.cfg.seed));
  const EmuRunner launching = [&](AttnData& d, uint64_t interleave_seed) {
    setenv("ZYFA_EMU_STATS", "1", 1);
    ::testing::internal::CaptureStderr();
    HostRun run = run_emu(d, interleave_seed);
    const std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("ZYFA_EMU_STATS");
    EXPECT_EQ(launched_kernels(log), kernel) << "interleaving seed " << interleave_seed;
    return run;
  };
  HostRun first;
  ASSERT_NO_FATAL_FAILURE(run_emu_interleavings(a, {1, test_seed()}, &first, launching));
  const CheckResult r = check_output(a, ref, first.out.data(), a.cfg.lse ? first.lse.data() : nullptr);
  EXPECT_TRUE(r.ok()) << name << " seed " << a.cfg.seed << ": " << r.summary();
  std::printf("%s: %s\n", name.c_str(), r.summary().c_str());
}

// One route: a configuration, V rows padded by `pad` elements (0: none), and the kernel the
// host must launch for it.
struct Route {
  const char* name;
  AttnConfig cfg;
  int64_t pad;
  const char* kernel;
};

// `c` with a negative softmax scale (folded into Q by the kernel).
AttnConfig negative_scale(AttnConfig c, float scale) {
  c.softmax_scale = scale;
  return c;
}

std::vector<Route> routes() {
  using C = AttnConfig;
  constexpr zyfa_dtype_t bf16 = ZYFA_DTYPE_BF16;
  constexpr zyfa_dtype_t fp8 = ZYFA_DTYPE_FP8_E4M3;
  return {
      // V rows 8 bytes past a multiple of 16: the baseline kernels. GQA 4:2, a tail tile;
      // std 0.1 and std 1 (peaked rows, the rescale taken and skipped).
      {"D128BaselineForUnalignedVRows", C::of(bf16, 128, 4, 2, 300), 4, kBaseline},
      {"D128BaselineForUnalignedVRowsStd1", C::of(bf16, 128, 2, 1, 200).with(Inputs::GAUSSIAN, 1.0), 12, kBaseline},
      {"D192BaselineForUnalignedVRowsStd1", C::of(bf16, 192, 2, 1, 200).with(Inputs::GAUSSIAN, 1.0), 4, kBaseline192},
      // Padding by whole 16-byte chunks keeps the ping-pong kernels (the routing is by
      // alignment, not by padding).
      {"D128PingPongForAlignedPaddedVRows", C::of(bf16, 128, 2, 1, 300), 8, kPingPong},
      {"D192PingPongForAlignedPaddedVRows", C::of(bf16, 192, 4, 2, 300), 8, kPingPong192},
      // A negative softmax scale: std 1 or rising inputs, so that the sign decides which keys
      // dominate; GQA, a tail tile, LSE checked; for d 192 through the 1.5x longer Q^T.
      {"D128PingPongNegativeScale", negative_scale(C::of(bf16, 128, 4, 2, 300).with(Inputs::GAUSSIAN, 1.0), -0.09f), 0,
       kPingPong},
      {"D128PingPongNegativeScaleRising", negative_scale(C::of(bf16, 128, 2, 1, 300).with(Inputs::RISING), -0.125f), 0,
       kPingPong},
      {"D192PingPongNegativeScale", negative_scale(C::of(bf16, 192, 4, 2, 300).with(Inputs::GAUSSIAN, 1.0), -0.07f), 0,
       kPingPong192},
      {"D192PingPongNegativeScaleRising", negative_scale(C::of(bf16, 192, 2, 1, 300).with(Inputs::RISING), -0.1f), 0,
       kPingPong192},
      // FP8 d 192/128: the generated kernel takes V rows 8 bytes past a multiple of 16 (std 1)
      // and whole chunks of padding alike; a negative scale (std 1 with device descales, and
      // rising inputs) flips Q's signs.
      {"Fp8D192GeneratedForUnalignedVRowsStd1", C::of(fp8, 192, 2, 1, 200).with(Inputs::GAUSSIAN, 1.0), 8,
       kFp8Generated192},
      {"Fp8D192GeneratedForAlignedPaddedVRows", C::of(fp8, 192, 4, 2, 300), 16, kFp8Generated192},
      {"Fp8D192GeneratedNegativeScaleDevPerHead",
       negative_scale(C::of(fp8, 192, 4, 2, 300).with(Inputs::GAUSSIAN, 1.0).with(DescaleMode::DEVICE_PER_HEAD),
                      -0.07f),
       0, kFp8Generated192},
      {"Fp8D192GeneratedNegativeScaleRising", negative_scale(C::of(fp8, 192, 2, 1, 300).with(Inputs::RISING), -0.1f), 0,
       kFp8Generated192},
      // More pairs than the 256 workgroups (258 heads of one pair each): the balanced job
      // table (every tile alone: two-tile streams dealt as lone tiles), which no smaller shape takes.
      {"D128PingPongBalancedJobTable", C::of(bf16, 128, 258, 2, 300).with(Inputs::GAUSSIAN, 1.0), 0, kPingPong},
      {"Fp8D192GeneratedBalancedJobTable", C::of(fp8, 192, 258, 2, 300), 0, kFp8Generated192},
  };
}

class EmuFwdRoutes : public ::testing::TestWithParam<Route> {};

// Inputs seeded by the route's name, run and checked with its kernel expected to be the one
// launched.
TEST_P(EmuFwdRoutes, LaunchesItsKernelAndMatchesFp64) {
  const Route& r = GetParam();
  const std::string name = std::string("EmuFwdRoutes_") + r.name;
  AttnConfig c = r.cfg;
  c.seed = seed_for(name);
  AttnData a = make_attn_data(c);
  if (r.pad != 0) pad_v_rows(a, r.pad);
  run_and_check(a, name, r.kernel);
}

INSTANTIATE_TEST_SUITE_P(Route, EmuFwdRoutes, ::testing::ValuesIn(routes()),
                         [](const ::testing::TestParamInfo<Route>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace zyfa::test
