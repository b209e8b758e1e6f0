// Varlen batches and seqlen_k > seqlen_q (bottom-right causal) on the gfx950 kernels, run by
// the emulator: the shared varlen matrix against the fp64 reference (mixed lengths with 0, 1
// and tails, chunked prefill, rows that see no key, GQA/MQA, both head dims and dtypes, std-0.1
// and peaked inputs); NaN past each sequence's visible keys and in the rows of no sequence
// never seen; and bad device prefix sums, which the public API refuses on this host-memory
// backend, sent to the kernels through the backend itself: the emulator faults on any access
// outside the buffers, so a call that succeeds touched only q, k, v, out, lse and its tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "emu_run.h"
#include "host/amd/amd_backend.h"
#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/validate.h"
#include "support/host_run.h"
#include "support/varlen.h"

namespace zyfa::test {
namespace {

// The shared matrix, plus lengths that reach the kernels' steady state (several 64-key blocks
// and 256-row tiles per sequence, a chunk far from the start).
std::vector<VarlenConfig> emu_varlen_matrix() {
  std::vector<VarlenConfig> m = varlen_matrix();
  const std::vector<int32_t> long_q = {700, 1, 300, 0, 520}, long_k = {1100, 1, 300, 20, 520};
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3})
    for (int64_t d : {128, 192}) m.push_back(VarlenConfig::of(dt, d, 2, 1, "Long", long_q, long_k).with(Inputs::RISING));
  return m;
}

class Varlen : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Varlen, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("Varlen/" + c.name());
  std::string summary;
  const std::string diff = host_varlen_difference(c, ZYFA_BACKEND_EMU, varlen_kernel_tolerance(c), &summary);
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
  std::printf("%s seed %llu: %s\n", c.name().c_str(), (unsigned long long)c.seed, summary.c_str());
}

INSTANTIATE_TEST_SUITE_P(Varlen, Varlen, ::testing::ValuesIn(emu_varlen_matrix()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on: rows whose visible keys all lie
// before the cut are bitwise unchanged, rows that see one are not finite.
class VarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(VarlenUnseenNan, Emu) {
  VarlenConfig c = GetParam();
  c.seed = seed_for("VarlenUnseenNan/" + c.name());
  const std::string diff = host_varlen_unseen_nan_difference(c, ZYFA_BACKEND_EMU);
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

// The problem of a varlen configuration's call (its prefix sums as given, unchecked), with its
// output and LSE buffers.
struct VarlenCall {
  VarlenData data;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  FwdProblem p;
};

void make_call(VarlenCall* c) {
  c->out.assign(c->data.out_count() + HostRun::kGuard, 0);
  c->lse.assign(c->data.lse_count() + 1, 0.0f);
  poison_bf16(c->out.data(), c->out.size());
  poison_f32(c->lse.data(), c->lse.size());
  zyfa_fwd_desc_t desc = c->data.host_desc(c->out.data(), c->lse.data());
  desc.backend = ZYFA_BACKEND_EMU;
  ASSERT_EQ(validate_fwd(&desc, &c->p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  c->p.backend = ZYFA_BACKEND_EMU;
}

// The gfx950 builder run on the emulator for one shape and its prefix sums (host copies, as
// the emulator's device memory): the table's words, as many as build_serial writes, and the
// host's table to compare with. The emulator faults on any access outside the buffers.
struct Tables {
  std::vector<uint32_t> device, host;
};
Tables build_both(const varlen::Shape& s, const std::vector<int32_t>& cu_q, const std::vector<int32_t>& cu_k) {
  Tables t;
  std::vector<uint32_t> starts(s.batch + 1), buckets(varlen::cost_buckets(s));
  t.host.assign(varlen::table_words(s), 0);
  const uint32_t jobs = varlen::build_serial(cu_q.data(), cu_k.data(), s, starts.data(), buckets.data(), t.host.data());
  t.host.resize(3 + s.grid + 2 * size_t{jobs});

  std::vector<uint32_t> table(varlen::table_words(s), 0xA5A5A5A5u);
  std::vector<uint32_t> scratch(varlen::scratch_layout(s).words, 0xA5A5A5A5u);
  kernels::VarlenJobTableArgs args{};
  args.cu_seqlens_q = reinterpret_cast<uint64_t>(cu_q.data());
  args.cu_seqlens_k = reinterpret_cast<uint64_t>(cu_k.data());
  args.table = reinterpret_cast<uint64_t>(table.data());
  args.scratch = reinterpret_cast<uint64_t>(scratch.data());
  args.shape = s;
  const amd::KernelInfo* k = amd::find_kernel("varlen_job_table");
  EXPECT_NE(k, nullptr);
  if (k == nullptr) return t;
  amd::LaunchConfig l{};
  l.code_object = amd::find_code_object(k->code_object);
  l.kernel = "varlen_job_table";
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = kernels::kVarlenJobThreads;
  l.block[1] = l.block[2] = 1;
  l.kernarg = &args;
  l.kernarg_size = sizeof(args);
  l.buffers = {{cu_q.data(), cu_q.size() * sizeof(int32_t), false},
               {cu_k.data(), cu_k.size() * sizeof(int32_t), false},
               {table.data(), table.size() * sizeof(uint32_t), true},
               {scratch.data(), scratch.size() * sizeof(uint32_t), true}};
  emu::EmuDevice device;
  EXPECT_EQ(device.launch(l), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  t.device.assign(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(t.host.size()));
  return t;
}

// The device builder's table equals the host one (varlen::build_serial) word for word, for the
// matrix's lengths and for bad prefix sums (both clamp them alike).
TEST(VarlenJobTable, DeviceEqualsBuildSerial) {
  for (const VarlenConfig& cfg : emu_varlen_matrix()) {
    if (cfg.fixed) continue;
    // The prefix sums as made, reversed (decreasing), and 5x - 3 (negative, past the tensors).
    for (int variant = 0; variant < 3; ++variant) {
      VarlenCall c{make_varlen_data(cfg)};
      for (std::vector<int32_t>* cu : {&c.data.cu_q, &c.data.cu_k}) {
        if (variant == 1) std::reverse(cu->begin(), cu->end());
        if (variant == 2)
          for (int32_t& x : *cu) x = 5 * x - 3;
      }
      ASSERT_NO_FATAL_FAILURE(make_call(&c));
      const Tables t = build_both(amd::varlen_shape(c.p), c.data.cu_q, c.data.cu_k);
      ASSERT_EQ(t.device, t.host) << cfg.name() << " variant " << variant;
    }
  }
}

// Long random lengths, several heads and cost buckets of many entries each: a sequence's
// pairs of one cost in a run, several sequences per cost, sequences of no key and of fewer
// keys than queries, costs that differ within a sequence (a short last tile, the lone middle
// tile), and grids that do not divide the jobs.
TEST(VarlenJobTable, RandomLengthsDeviceEqualsBuildSerial) {
  const uint64_t seed = seed_for("VarlenJobTable/RandomLengths");
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 4; ++round) {
    const int32_t batch = 1 + static_cast<int32_t>(rng() % 40), heads = 1 + static_cast<int32_t>(rng() % 8);
    const int32_t max_q = 256 + static_cast<int32_t>(rng() % 8000), max_k = max_q + static_cast<int32_t>(rng() % 4000);
    std::vector<int32_t> cu_q{3}, cu_k{5};
    for (int32_t b = 0; b < batch; ++b) {
      const int32_t lq = rng() % 6 == 0 ? 0 : static_cast<int32_t>(rng() % (max_q + 1));
      const int32_t lk = rng() % 5 == 0 ? static_cast<int32_t>(rng() % (lq + 1))
                                        : std::min(max_k, lq + static_cast<int32_t>(rng() % (max_k - lq + 1)));
      cu_q.push_back(cu_q.back() + lq);
      cu_k.push_back(cu_k.back() + lk);
    }
    const int32_t grid = std::vector<int32_t>{1, 7, 256}[rng() % 3];
    const varlen::Shape s{batch, heads, 256, 64, max_q, max_k, cu_q.back() + 2, cu_k.back() + 1, grid};
    const Tables t = build_both(s, cu_q, cu_k);
    ASSERT_EQ(t.device, t.host) << "round " << round << ": batch " << batch << ", heads " << heads << ", "
                                << (t.host.size() - 3 - grid) / 2 << " jobs";
  }
}

// Bad prefix sums as a GPU backend receives them (device memory, never read on the host): the
// job table is built by the device kernel and the attention kernel clamps every sequence into
// the tensors, so the emulator, which faults on any access outside the launch's buffers, lets
// the call succeed, and nothing is written past out and the LSE.
TEST(VarlenBadPrefixSums, StayInBounds) {
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    VarlenConfig c = VarlenConfig::of(dt, 128, 2, 1, "Mixed", {40, 300, 7}, {40, 300, 7});
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
      VarlenCall call{a};
      call.data.cu_q = call.data.cu_k = cu;
      ASSERT_NO_FATAL_FAILURE(make_call(&call));
      // Refused by the public API on this backend (the host reads its prefix sums).
      ASSERT_NE(validate_fwd_lengths(call.p), ZYFA_STATUS_SUCCESS);
      auto backend = amd::make_amd_backend(std::make_unique<emu::EmuDevice>(), ZYFA_BACKEND_EMU);
      const zyfa_status_t s = backend->fwd(call.p);
      EXPECT_EQ(s, ZYFA_STATUS_SUCCESS) << c.name() << " cu = {" << cu[0] << ", " << cu[1] << ", " << cu[2] << ", "
                                        << cu[3] << "}: " << zyfa_last_error();
      for (size_t i = call.data.out_count(); i < call.out.size(); ++i)
        ASSERT_TRUE(is_poison_bf16(call.out[i])) << "write past the output at element " << i;
      EXPECT_TRUE(is_poison_f32(call.lse.back())) << "write past the LSE";
    }
  }
}

// FP8 varlen batches run the generated varlen kernels (d 128 and 192/128; the launches read
// from the emulator's per-launch lines, so that a change of routing cannot pass unnoticed),
// bitwise alike under two interleavings of the waves. Chunks and a sequence of no query,
// std 1 (the rescale taken and skipped).
TEST(VarlenFp8Generated, LaunchesItsKernelDeterministically) {
  for (int64_t d : {128, 192}) {
    VarlenConfig c = VarlenConfig::of(ZYFA_DTYPE_FP8_E4M3, d, 4, 2, "Chunked", {1, 300, 37, 0, 100},
                                      {200, 333, 101, 50, 300}).with(Inputs::GAUSSIAN, 1.0);
    c.seed = seed_for("VarlenFp8Generated/" + c.name());
    const VarlenData data = make_varlen_data(c);
    const std::string kernel = "attn_fwd_fp8_d" + std::to_string(d) + "_varlen";
    std::vector<VarlenCall> runs;
    for (uint64_t interleave : {uint64_t{1}, test_seed()}) {
      runs.push_back(VarlenCall{data});
      VarlenCall& call = runs.back();
      ASSERT_NO_FATAL_FAILURE(make_call(&call));
      setenv("ZYFA_EMU_SEED", std::to_string(interleave).c_str(), 1);
      setenv("ZYFA_EMU_STATS", "1", 1);
      ::testing::internal::CaptureStderr();
      auto backend = amd::make_amd_backend(std::make_unique<emu::EmuDevice>(), ZYFA_BACKEND_EMU);
      const zyfa_status_t s = backend->fwd(call.p);
      const std::string log = ::testing::internal::GetCapturedStderr();
      unsetenv("ZYFA_EMU_STATS");
      unsetenv("ZYFA_EMU_SEED");
      ASSERT_EQ(s, ZYFA_STATUS_SUCCESS) << c.name() << ": " << zyfa_last_error();
      EXPECT_EQ(launched_kernels(log), "varlen_job_table " + kernel) << c.name() << ", interleaving " << interleave;
    }
    EXPECT_EQ(0, std::memcmp(runs[0].out.data(), runs[1].out.data(), runs[0].out.size() * 2))
        << c.name() << ": output differs between interleavings";
    EXPECT_EQ(0, std::memcmp(runs[0].lse.data(), runs[1].lse.data(), runs[0].lse.size() * 4))
        << c.name() << ": LSE differs between interleavings";
  }
}

}  // namespace
}  // namespace zyfa::test
