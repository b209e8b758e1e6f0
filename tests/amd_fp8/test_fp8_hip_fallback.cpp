// The HIP FP8 d = 128 kernel that serves the problems beyond the generated kernel's 32-bit row
// offsets. Such problems need more than 4 GiB, so this runs small ones on it instead: a device
// that launches attn_fwd_fp8_d128_hip wherever the host asked for attn_fwd_fp8_d128 (same
// arguments, job table and launch shape), through the real AMD host path, on the emulator.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "host/amd/amd_backend.h"
#include "host/amd/code_objects.h"
#include "host/validate.h"
#include "support/seeded.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

class FallbackDevice final : public emu::EmuDevice {
 public:
  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    if (std::strcmp(cfg.kernel, "attn_fwd_fp8_d128") != 0) return EmuDevice::launch(cfg);
    const amd::KernelInfo* k = amd::find_kernel("attn_fwd_fp8_d128_hip");
    if (!k) return ZYFA_STATUS_INTERNAL_ERROR;
    amd::LaunchConfig c = cfg;
    c.kernel = k->kernel;
    c.code_object = amd::find_code_object(k->code_object);
    ++launches;
    return EmuDevice::launch(c);
  }
  int launches = 0;
};

class Fp8HipFallback : public ::testing::TestWithParam<AttnConfig> {};

TEST_P(Fp8HipFallback, Emu) {
  const AttnConfig c = seeded(GetParam(), "Fp8HipFallback/");
  AttnData a = make_attn_data(c);
  std::printf("%s: input seed %llu\n", c.name().c_str(), static_cast<unsigned long long>(c.seed));
  std::vector<uint16_t> out(a.out_count());
  std::vector<float> lse(a.lse_count() + 1);
  poison_bf16(out.data(), out.size());
  poison_f32(lse.data(), lse.size());
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_EMU;
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  ASSERT_EQ(validate_fwd(&d, &p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  auto device = std::make_unique<FallbackDevice>();
  FallbackDevice* dev = device.get();
  auto backend = amd::make_amd_backend(std::move(device), ZYFA_BACKEND_EMU);
  ASSERT_EQ(backend->fwd(p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(dev->launches, 1) << "the HIP kernel did not run";
  const CheckResult r = check_output(a, reference_fp64(a), out.data(), lse.data());
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  std::printf("%s: %s\n", c.name().c_str(), r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Fwd, Fp8HipFallback,
                         ::testing::Values(AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 4, 2, 300),
                                           AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 3, 1, 37)
                                               .with(Inputs::REALISTIC)
                                               .with(Layout::BHSD)
                                               .with(DescaleMode::DEVICE_PER_HEAD)
                                               .with_batch(2)),
                         [](const ::testing::TestParamInfo<AttnConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
