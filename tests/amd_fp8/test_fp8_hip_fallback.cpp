// The HIP FP8 kernels that serve the problems beyond the generated kernels' 32-bit row offsets
// (d 128: attn_fwd_fp8_d128_hip; d 192/128: the ping-pong attn_fwd_fp8_d192_gfx950 where its
// K/V offsets still fit, else attn_fwd_fp8_d192_hip; varlen batches and seqlen_k > seqlen_q:
// attn_fwd_fp8_d128_gfx950_varlen and attn_fwd_fp8_d192_gfx950_varlen). Such problems need
// more than 4 GiB, so this runs small ones on them instead: a device that launches the HIP
// kernel wherever the host asked for the generated one, through the real AMD host path, on the
// emulator. The fixed-length kernels' tiles and threads differ: the device launches the HIP
// kernel with the job table, tile divisor and shape that the host gives the same problem when
// a K row stride of `k_stride` bytes sends it there. The varlen kernels share the generated
// ones' work split (256-row tiles, 512 threads, AttnLengthsArgs, the varlen job table): the
// device checks that the host gives the problem with q rows 4 GiB apart (which sends it to
// the HIP kernel) the same shape, job table and arguments, and launches the HIP kernel with
// the host's own. The varlen cases (the shared varlen support, tests/support/varlen.h): mixed
// lengths with sequences of 0 and 1 rows and tails, chunks, a sequence of two query tiles,
// rows that see no key, seqlen_k > seqlen_q without prefix sums, GQA and MQA, both head dims,
// peaked inputs (std-1 Gaussian, RISING), against the fp64 reference with every output and
// LSE element written (poisoned before the call) and none past them; and NaN keys and values
// past a cut of each sequence, never seen by the rows before it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "host/amd/amd_backend.h"
#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/job_table.h"
#include "host/validate.h"
#include "support/host_run.h"
#include "support/seeded.h"
#include "support/varlen.h"
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

// The HIP varlen kernel in place of the generated varlen kernel. A sequence's first q row 4 GiB
// from the tensor's start is past the generated kernels' 32-bit offsets (the HIP ones address
// it with 64 bits), so the host sends the problem with that q row stride to the HIP kernel.
// The device checks that the host gives that problem the launch it gave this one (threads,
// tile rows, job-table shape, the argument struct and its tile divisor), then runs the HIP
// kernel with it. Every launch is recorded by the name of the kernel that ran.
class VarlenFallbackDevice final : public emu::EmuDevice {
 public:
  explicit VarlenFallbackDevice(const FwdProblem& p) : problem_(p) {}

  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    const std::string generated = amd::attn_kernel_name(problem_);
    if (generated != cfg.kernel) {
      ran.push_back(cfg.kernel);
      return EmuDevice::launch(cfg);
    }
    FwdProblem hip = problem_;
    hip.q.stride[1] = int64_t{1} << 32;
    const std::string name = amd::attn_kernel_name(hip);
    const std::string expected = "attn_fwd_fp8_d" + std::to_string(problem_.d_qk) + "_gfx950_varlen";
    if (name != expected) return refuse("the host sends the problem with far q rows to " + name);
    const amd::KernelInfo* k = amd::find_kernel(name.c_str());
    if (!k) return refuse("no embedded kernel " + name);
    const amd::AttnKernelShape a = amd::attn_kernel_shape(problem_), b = amd::attn_kernel_shape(hip);
    if (a.tile_rows != b.tile_rows || a.threads != b.threads || a.workgroups_per_cu != b.workgroups_per_cu ||
        cfg.block[0] != static_cast<uint32_t>(b.threads))
      return refuse("tiles or threads differ");
    if (problem_.varlen()) {
      // The job table was built on the device (varlen_job_table) for this shape.
      const varlen::Shape x = amd::varlen_shape(problem_), y = amd::varlen_shape(hip);
      if (x.batch != y.batch || x.heads != y.heads || x.tile_rows != y.tile_rows || x.block_n != y.block_n ||
          x.max_q != y.max_q || x.max_k != y.max_k || x.total_q != y.total_q || x.total_k != y.total_k ||
          x.grid != y.grid || cfg.grid[0] != static_cast<uint32_t>(y.grid))
        return refuse("the varlen job-table shapes differ");
    } else {
      const JobTableParams x = amd::attn_job_table_params(problem_), y = amd::attn_job_table_params(hip);
      if (x.batch != y.batch || x.heads != y.heads || x.heads_k != y.heads_k || x.seqlen != y.seqlen ||
          x.tile_rows != y.tile_rows || x.grid != y.grid || x.num_xcds != y.num_xcds || x.schedule != y.schedule)
        return refuse("the job-table parameters differ");
    }
    kernels::AttnLengthsArgs args;
    if (cfg.kernarg_size != sizeof(args) || k->kernarg_size != sizeof(args))
      return refuse("the kernels do not both take AttnLengthsArgs");
    std::memcpy(&args, cfg.kernarg, sizeof(args));
    const kernels::AttnLengthsArgs h = amd::make_attn_lengths_args(hip, nullptr);
    if (std::memcmp(&args.f.div_n_tiles, &h.f.div_n_tiles, sizeof(h.f.div_n_tiles)) != 0 ||
        args.lse_rows != h.lse_rows || args.total_q != h.total_q || args.total_k != h.total_k ||
        args.seqlen_k != h.seqlen_k)
      return refuse("the length arguments differ");
    amd::LaunchConfig c = cfg;
    c.kernel = k->kernel;
    c.code_object = amd::find_code_object(k->code_object);
    ran.push_back(c.kernel);
    return EmuDevice::launch(c);
  }

  std::vector<std::string> ran;  // the kernels launched, in order
  std::string mismatch;          // why the HIP kernel was not launched

 private:
  zyfa_status_t refuse(std::string why) {
    mismatch = std::move(why);
    return ZYFA_STATUS_INTERNAL_ERROR;
  }
  FwdProblem problem_;
};

// One call of a varlen configuration on the substituting device: outputs poisoned before the
// call, a poisoned guard after out (HostRun::kGuard elements) and after the LSE (one float).
struct VarlenHipRun {
  VarlenOutputs o;
  std::vector<std::string> ran;
  std::string mismatch;
};

VarlenHipRun run_hip_varlen(VarlenData& a) {
  VarlenHipRun r;
  r.o.out.assign(a.out_count() + HostRun::kGuard, 0);
  r.o.lse.assign(a.lse_count() + 1, 0.0f);
  poison_bf16(r.o.out.data(), r.o.out.size());
  poison_f32(r.o.lse.data(), r.o.lse.size());
  zyfa_fwd_desc_t d = a.host_desc(r.o.out.data(), a.cfg.lse ? r.o.lse.data() : nullptr);
  d.backend = ZYFA_BACKEND_EMU;
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  if ((r.o.status = validate_fwd(&d, &p)) != ZYFA_STATUS_SUCCESS ||
      (p.varlen() && (r.o.status = validate_fwd_lengths(p)) != ZYFA_STATUS_SUCCESS)) {
    r.o.error = zyfa_last_error();
    return r;
  }
  auto device = std::make_unique<VarlenFallbackDevice>(p);
  VarlenFallbackDevice* dev = device.get();
  auto backend = amd::make_amd_backend(std::move(device), ZYFA_BACKEND_EMU);
  r.o.status = backend->fwd(p);
  if (r.o.status != ZYFA_STATUS_SUCCESS) r.o.error = zyfa_last_error();
  r.ran = dev->ran;
  r.mismatch = dev->mismatch;
  return r;
}

// What a call of a configuration must launch: the job-table builder for a varlen batch, then
// the HIP varlen kernel of its head dim.
std::string hip_launches(const VarlenConfig& c) {
  const std::string kernel = "attn_fwd_fp8_d" + std::to_string(c.d_qk) + "_gfx950_varlen";
  return c.fixed ? kernel : "varlen_job_table " + kernel;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

class Fp8HipVarlenFallback : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Fp8HipVarlenFallback, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("Fp8HipVarlenFallback/" + c.name());
  VarlenData a = make_varlen_data(c);
  const VarlenHipRun r = run_hip_varlen(a);
  ASSERT_EQ(r.o.status, ZYFA_STATUS_SUCCESS) << c.name() << ": " << r.o.error << " " << r.mismatch;
  ASSERT_EQ(joined(r.ran), hip_launches(c)) << c.name() << ": the HIP varlen kernel did not run";
  const CheckResult res =
      check_varlen(a, reference_varlen_fp64(a), r.o.out.data(), c.lse ? r.o.lse.data() : nullptr,
                   varlen_kernel_tolerance(c));
  EXPECT_TRUE(res.ok()) << c.name() << " seed " << c.seed << ": " << res.summary();
  for (size_t i = a.out_count(); i < r.o.out.size(); ++i)
    ASSERT_TRUE(is_poison_bf16(r.o.out[i])) << c.name() << ": write past the output at element " << i;
  EXPECT_TRUE(is_poison_f32(r.o.lse.back())) << c.name() << ": write past the LSE";
  std::printf("%s seed %llu: %s\n", c.name().c_str(), static_cast<unsigned long long>(c.seed),
              res.summary().c_str());
}

const auto kFp8Varlen = ZYFA_DTYPE_FP8_E4M3;

// Mixed lengths with sequences of 0 and 1 rows and tails (67, 130: a tail past a full 64-row
// block); chunks (more keys than queries, a sequence of no query); a chunk of two query tiles
// (400 rows); rows that see no key (150 queries, 30 keys; a sequence of 5 queries and no key);
// seqlen_k > seqlen_q without prefix sums (no LSE); sequences of several query tiles and 64-key
// blocks (the steady key loop, a chunk 400 keys from its start). GQA and MQA, peaked inputs.
std::vector<VarlenConfig> hip_varlen_configs() {
  const std::vector<int32_t> mixed = {0, 1, 67, 130, 5};
  const std::vector<int32_t> chunk_q = {1, 64, 37, 0, 100}, chunk_k = {200, 64, 101, 50, 300};
  std::vector<VarlenConfig> m;
  for (int64_t d : {128, 192}) {
    m.push_back(VarlenConfig::of(kFp8Varlen, d, 4, 2, "Mixed", mixed, mixed).with(Inputs::GAUSSIAN, 1.0));
    m.push_back(VarlenConfig::of(kFp8Varlen, d, 4, 1, "Chunked", chunk_q, chunk_k).with(Inputs::RISING));
    m.push_back(VarlenConfig::of(kFp8Varlen, d, 2, 1, "MixedNoKey", {0, 1, 67, 40, 150}, {0, 1, 67, 300, 30})
                    .with(Inputs::GAUSSIAN, 1.0));
    m.push_back(VarlenConfig::of(kFp8Varlen, d, 2, 2, "Q70K190", {70, 70}, {190, 190})
                    .with(Inputs::GAUSSIAN, 1.0)
                    .without_lse()
                    .as_fixed());
  }
  m.push_back(VarlenConfig::of(kFp8Varlen, 128, 2, 1, "Chunks", {140, 400}, {330, 650}).with(Inputs::GAUSSIAN, 1.0));
  m.push_back(VarlenConfig::of(kFp8Varlen, 192, 2, 1, "Chunks", {140, 400}, {330, 650}).with(Inputs::RISING));
  m.push_back(VarlenConfig::of(kFp8Varlen, 128, 2, 2, "FewerKeys", {70, 5, 3}, {20, 0, 3}).with(Inputs::GAUSSIAN, 1.0));
  const std::vector<int32_t> long_q = {700, 1, 300, 0, 520}, long_k = {1100, 1, 300, 20, 520};
  for (int64_t d : {128, 192})
    m.push_back(VarlenConfig::of(kFp8Varlen, d, 2, 1, "Long", long_q, long_k).with(Inputs::RISING));
  return m;
}

INSTANTIATE_TEST_SUITE_P(HipVarlen, Fp8HipVarlenFallback, ::testing::ValuesIn(hip_varlen_configs()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on, on the HIP varlen kernels: rows
// whose visible keys all lie before the cut come out bitwise as on the clean inputs, rows that
// see one are not finite.
class Fp8HipVarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Fp8HipVarlenUnseenNan, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("Fp8HipVarlenUnseenNan/" + c.name());
  std::string launch_error;
  const std::string diff = varlen_unseen_nan_difference(c, [&](VarlenData& d) {
    VarlenHipRun r = run_hip_varlen(d);
    if (r.o.status == ZYFA_STATUS_SUCCESS && joined(r.ran) != hip_launches(c) && launch_error.empty())
      launch_error = "launched " + joined(r.ran) + ", not " + hip_launches(c);
    if (r.o.status != ZYFA_STATUS_SUCCESS) r.o.error += " " + r.mismatch;
    return std::move(r.o);
  });
  EXPECT_TRUE(launch_error.empty()) << c.name() << ": " << launch_error;
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
}

INSTANTIATE_TEST_SUITE_P(
    HipVarlen, Fp8HipVarlenUnseenNan,
    ::testing::Values(VarlenConfig::of(kFp8Varlen, 128, 4, 2, "Chunked", {1, 64, 37, 0, 100}, {200, 64, 101, 50, 300})
                          .with(Inputs::GAUSSIAN, 1.0),
                      VarlenConfig::of(kFp8Varlen, 192, 2, 1, "Mixed", {0, 1, 67, 130, 5}, {0, 1, 67, 130, 5})
                          .with(Inputs::GAUSSIAN, 1.0)),
    [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

}  // namespace
}  // namespace zyfa::test
