// The HIP FP8 kernels that serve the problems beyond the generated kernels' 32-bit row offsets
// (d 128: attn_fwd_fp8_d128_hip; d 192/128: the ping-pong attn_fwd_fp8_d192_gfx950 where its
// K/V offsets still fit, else attn_fwd_fp8_d192_hip). Such problems need more than 4 GiB, so
// this runs small ones on them instead: a device that launches the HIP kernel wherever the host
// asked for the generated one, through the real AMD host path, on the emulator. The kernels'
// tiles and threads differ: the device launches the HIP kernel with the job table, tile divisor
// and shape that the host gives the same problem when a K row stride of `k_stride` bytes sends
// it there.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "host/amd/amd_backend.h"
#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/job_table.h"
#include "host/validate.h"
#include "support/seeded.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

// A problem's generated kernel, the HIP kernel that must take it instead and the K row stride
// that makes the host choose that one.
struct Fallback {
  AttnConfig cfg;
  const char* generated;
  const char* hip;
  int64_t k_stride;
};

class FallbackDevice final : public emu::EmuDevice {
 public:
  FallbackDevice(const FwdProblem& p, const Fallback& f) : problem_(p), f_(f) {}
  ~FallbackDevice() override {
    for (void* t : tables_) EmuDevice::free(t);
  }

  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    if (std::strcmp(cfg.kernel, f_.generated) != 0) return EmuDevice::launch(cfg);
    const amd::KernelInfo* k = amd::find_kernel(f_.hip);
    if (!k) return ZYFA_STATUS_INTERNAL_ERROR;
    // The same problem with K rows k_stride bytes apart is what the host sends to the HIP kernel.
    FwdProblem hip = problem_;
    hip.k.stride[1] = f_.k_stride;
    if (std::strcmp(amd::attn_kernel_name(hip), f_.hip) != 0) return ZYFA_STATUS_INTERNAL_ERROR;
    JobTable table;
    if (!build_job_table(amd::attn_job_table_params(hip), &table)) return ZYFA_STATUS_INTERNAL_ERROR;
    const size_t bytes = table.words.size() * sizeof(uint32_t);
    void* dev = nullptr;
    if (zyfa_status_t s = alloc(bytes, &dev); s != ZYFA_STATUS_SUCCESS) return s;
    tables_.push_back(dev);
    if (zyfa_status_t s = upload(dev, table.words.data(), bytes); s != ZYFA_STATUS_SUCCESS) return s;
    kernels::AttnFwdArgs args;
    if (cfg.kernarg_size != sizeof(args)) return ZYFA_STATUS_INTERNAL_ERROR;
    std::memcpy(&args, cfg.kernarg, sizeof(args));
    const void* host_table = reinterpret_cast<const void*>(static_cast<uintptr_t>(args.job_table));
    args.job_table = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dev));
    args.div_n_tiles = amd::make_attn_args(hip, dev).div_n_tiles;
    amd::LaunchConfig c = cfg;
    c.kernel = k->kernel;
    c.code_object = amd::find_code_object(k->code_object);
    c.grid[0] = table.grid();
    c.block[0] = static_cast<uint32_t>(amd::attn_kernel_shape(hip).threads);
    c.kernarg = &args;
    for (amd::MemRange& m : c.buffers)
      if (m.base == host_table) m = {dev, bytes, false};
    ++launches;
    return EmuDevice::launch(c);
  }
  int launches = 0;

 private:
  FwdProblem problem_;
  Fallback f_;
  std::vector<void*> tables_;
};

class Fp8HipFallback : public ::testing::TestWithParam<Fallback> {};

TEST_P(Fp8HipFallback, Emu) {
  const Fallback& f = GetParam();
  const AttnConfig c = seeded(f.cfg, std::string("Fp8HipFallback/") + f.hip + "/");
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
  auto device = std::make_unique<FallbackDevice>(p, f);
  FallbackDevice* dev = device.get();
  auto backend = amd::make_amd_backend(std::move(device), ZYFA_BACKEND_EMU);
  ASSERT_EQ(backend->fwd(p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  EXPECT_EQ(dev->launches, 1) << "the HIP kernel did not run";
  const CheckResult r = check_output(a, reference_fp64(a), out.data(), lse.data());
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  std::printf("%s: %s\n", c.name().c_str(), r.summary().c_str());
}

// K rows 4 GiB apart: past every kernel's 32-bit offsets but the baselines'. 16 MiB apart (and at
// most 256 rows): past the generated kernels' (K rows read up to 255 past the last), within the
// FP8 d 192/128 ping-pong kernel's.
constexpr int64_t kBeyondAll = int64_t{1} << 32, kBeyondGenerated = int64_t{1} << 24;
const auto kFp8 = ZYFA_DTYPE_FP8_E4M3;

INSTANTIATE_TEST_SUITE_P(
    Fwd, Fp8HipFallback,
    ::testing::Values(
        Fallback{AttnConfig::of(kFp8, 128, 4, 2, 300), "attn_fwd_fp8_d128", "attn_fwd_fp8_d128_hip", kBeyondAll},
        Fallback{AttnConfig::of(kFp8, 128, 3, 1, 37)
                     .with(Inputs::REALISTIC)
                     .with(Layout::BHSD)
                     .with(DescaleMode::DEVICE_PER_HEAD)
                     .with_batch(2),
                 "attn_fwd_fp8_d128", "attn_fwd_fp8_d128_hip", kBeyondAll},
        Fallback{AttnConfig::of(kFp8, 192, 4, 2, 200).with(Inputs::GAUSSIAN, 1.0), "attn_fwd_fp8_d192",
                 "attn_fwd_fp8_d192_gfx950", kBeyondGenerated},
        Fallback{AttnConfig::of(kFp8, 192, 2, 1, 100).with(Inputs::REALISTIC).with(DescaleMode::DEVICE_PER_HEAD),
                 "attn_fwd_fp8_d192", "attn_fwd_fp8_d192_hip", kBeyondAll}),
    [](const ::testing::TestParamInfo<Fallback>& i) { return std::string(i.param.hip) + "_" + i.param.cfg.name(); });

}  // namespace
}  // namespace zyfa::test
