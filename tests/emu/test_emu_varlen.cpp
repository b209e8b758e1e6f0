// Varlen batches and seqlen_k > seqlen_q (bottom-right causal) on the gfx950 kernels, run by
// the emulator: the shared varlen matrix against the fp64 reference (mixed lengths with 0, 1
// and tails, chunked prefill, rows that see no key, GQA/MQA, both head dims and dtypes, std-0.1
// and peaked inputs); NaN past each sequence's visible keys and in the rows of no sequence
// never seen; and bad device prefix sums, which the public API refuses on this host-memory
// backend, sent to the kernels through the backend itself: the emulator faults on any access
// outside the buffers, so a call that succeeds touched only q, k, v, out, lse and its tables.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "host/amd/amd_backend.h"
#include "host/validate.h"
#include "support/host_run.h"
#include "support/varlen.h"

namespace zyfa::test {
namespace {

// The shared matrix; on this backend every configuration runs on the gfx950 kernels.
std::vector<VarlenConfig> emu_varlen_matrix() {
  std::vector<VarlenConfig> m;
  for (const VarlenConfig& c : varlen_matrix())
    if (!(c.dtype == ZYFA_DTYPE_FP8_E4M3 && c.d_qk == 128)) m.push_back(c);
  return m;
}

class Varlen : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Varlen, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("Varlen/" + c.name());
  VarlenData a = make_varlen_data(c);
  const ReferenceResult ref = reference_varlen_fp64(a);
  HostRun run = run_on_host(a, ZYFA_BACKEND_EMU);
  ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
  const CheckResult r =
      check_varlen(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr, varlen_kernel_tolerance(c));
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  EXPECT_TRUE(run.guard_intact(a.out_count())) << "write past the output";
  if (!c.lse) EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
  std::printf("%s seed %llu: %s\n", c.name().c_str(), (unsigned long long)c.seed, r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Varlen, Varlen, ::testing::ValuesIn(emu_varlen_matrix()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on: rows whose visible keys all lie
// before the cut are bitwise unchanged, rows that see one are not finite.
class VarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(VarlenUnseenNan, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("VarlenUnseenNan/" + c.name());
  const std::string diff = varlen_unseen_nan_difference(c, [](VarlenData& d) {
    HostRun r = run_on_host(d, ZYFA_BACKEND_EMU);
    return VarlenOutputs{r.status, r.error, std::move(r.out), std::move(r.lse)};
  });
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
}

std::vector<VarlenConfig> unseen_configs() {
  std::vector<VarlenConfig> m;
  for (const VarlenConfig& c : emu_varlen_matrix())
    if (c.inputs == Inputs::GAUSSIAN && c.std <= 0.1) m.push_back(c);
  return m;
}

INSTANTIATE_TEST_SUITE_P(VarlenUnseenNan, VarlenUnseenNan, ::testing::ValuesIn(unseen_configs()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// Bad prefix sums as a GPU backend receives them (device memory, never read on the host): the
// job table is built by the device kernel and the attention kernel clamps every sequence into
// the tensors, so the emulator, which faults on any access outside the launch's buffers, lets
// the call succeed, and nothing is written past out and the LSE.
TEST(VarlenBadPrefixSums, StayInBounds) {
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    const int64_t d_qk = dt == ZYFA_DTYPE_BF16 ? 128 : 192;
    VarlenConfig c = VarlenConfig::of(dt, d_qk, 2, 1, "Mixed", {40, 300, 7}, {40, 300, 7});
    c.seed = seed_for("VarlenBadPrefixSums/" + c.name());
    VarlenData a = make_varlen_data(c);
    const int32_t tq = static_cast<int32_t>(a.total_q);
    const std::vector<std::vector<int32_t>> bad = {
        {tq, 0, -5, tq + 1000},       // decreasing, negative, past the end
        {0, tq * 4, tq * 4, tq * 8},  // past the tensor
        {0, 100000, 5, 1},            // lengths above the maxima
        {-100000, -3, tq - 1, tq},    // before the tensor, a last sequence of one row
    };
    for (const std::vector<int32_t>& cu : bad) {
      VarlenData d = a;
      d.cu_q = d.cu_k = cu;
      std::vector<uint16_t> out(d.out_count() + HostRun::kGuard);
      std::vector<float> lse(d.lse_count() + 1);
      poison_bf16(out.data(), out.size());
      poison_f32(lse.data(), lse.size());
      zyfa_fwd_desc_t desc = d.host_desc(out.data(), lse.data());
      desc.backend = ZYFA_BACKEND_EMU;
      FwdProblem p;
      ASSERT_EQ(validate_fwd(&desc, &p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
      p.backend = ZYFA_BACKEND_EMU;
      // Refused by the public API on this backend (the host reads its prefix sums).
      ASSERT_NE(validate_fwd_lengths(p), ZYFA_STATUS_SUCCESS);
      auto backend = amd::make_amd_backend(std::make_unique<emu::EmuDevice>(), ZYFA_BACKEND_EMU);
      const zyfa_status_t s = backend->fwd(p);
      EXPECT_EQ(s, ZYFA_STATUS_SUCCESS) << c.name() << " cu = {" << cu[0] << ", " << cu[1] << ", " << cu[2] << ", "
                                        << cu[3] << "}: " << zyfa_last_error();
      for (size_t i = d.out_count(); i < out.size(); ++i)
        ASSERT_TRUE(is_poison_bf16(out[i])) << "write past the output at element " << i;
      EXPECT_TRUE(is_poison_f32(lse.back())) << "write past the LSE";
    }
  }
}

}  // namespace
}  // namespace zyfa::test
