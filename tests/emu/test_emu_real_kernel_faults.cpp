// The real AMD kernels, made wrong on purpose, must be stopped by the emulator: a copy of the
// code object with one s_waitcnt replaced by s_nop 0, and one with the s_nop that spaces an
// MFMA result from its read shortened by one. The copies run through the shared AMD host path
// (real kernel arguments, job tables, launch) on a device that substitutes the patched bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/device/emu_device.h"
#include "emu/isa/isa_ops.h"
#include "emu/loader/code_object.h"
#include "emu/semantics/mfma.h"
#include "host/amd/amd_backend.h"
#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/validate.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

constexpr uint32_t kSNop0 = 0xBF800000u;  // SOPP s_nop 0

struct Patch {
  std::string object;      // CodeObject::name
  uint64_t pc = 0;         // image offset of the instruction to replace
  uint32_t word = kSNop0;  // its new first dword
};

class PatchingDevice final : public emu::EmuDevice {
 public:
  explicit PatchingDevice(Patch p) : patch_(std::move(p)) {}
  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    if (patch_.object != cfg.code_object->name) return EmuDevice::launch(cfg);
    std::vector<uint8_t> bytes(cfg.code_object->data, cfg.code_object->data + cfg.code_object->size);
    const emu::LoadedCodeObject original(bytes.data(), bytes.size());
    const uint64_t at = patch_.pc - original.text_begin() + original.text_file_offset();
    std::memcpy(bytes.data() + at, &patch_.word, 4);
    const emu::LoadedCodeObject patched(bytes.data(), bytes.size());
    return run(cfg, patched);
  }

 private:
  Patch patch_;
};

const amd::CodeObject& code_object_of(const char* kernel) {
  const amd::KernelInfo* k = amd::find_kernel(kernel);
  if (!k) throw std::runtime_error(std::string("no embedded kernel ") + kernel);
  return *amd::find_code_object(k->code_object);
}

// Instructions of one kernel: from its entry to the next kernel's entry (or the end of .text).
std::vector<emu::Instruction> kernel_instructions(const emu::LoadedCodeObject& obj, const char* kernel) {
  const emu::KernelInfo* k = obj.find_kernel(kernel);
  uint64_t end = obj.text_end();
  for (const auto& other : obj.kernels())
    if (other.entry > k->entry && other.entry < end) end = other.entry;
  std::vector<emu::Instruction> out;
  for (const auto& in : obj.instructions())
    if (in.pc >= k->entry && in.pc < end) out.push_back(in);
  return out;
}

struct Outcome {
  zyfa_status_t status;
  std::string message;
};

Outcome run_patched(const AttnConfig& c, const Patch& patch) {
  AttnData a = make_attn_data(c);
  std::vector<uint16_t> out(a.out_count());
  std::vector<float> lse(a.lse_count() + 1);
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_EMU;
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  if (validate_fwd(&d, &p) != ZYFA_STATUS_SUCCESS) return {ZYFA_STATUS_INVALID_ARGUMENT, zyfa_last_error()};
  auto backend = amd::make_amd_backend(std::make_unique<PatchingDevice>(patch), ZYFA_BACKEND_EMU);
  const zyfa_status_t s = backend->fwd(p);
  return {s, s == ZYFA_STATUS_SUCCESS ? "" : zyfa_last_error()};
}

AttnConfig small(zyfa_dtype_t dt, int64_t d_qk) {
  AttnConfig c;
  c.dtype = dt;
  c.d_qk = d_qk;
  c.heads = 2;
  c.heads_k = 1;
  c.seqlen = 37;
  c.seed = seed_for("RealKernelFaults");
  return c;
}

// A configuration; the kernel patched is the one the AMD host path launches for it (the
// host may route a configuration to another kernel, e.g. a generated assembly one).
struct KernelCase {
  const char* label;
  zyfa_dtype_t dtype;
  int64_t d_qk;
};

std::string launched_kernel(const KernelCase& kc) {
  AttnData a = make_attn_data(small(kc.dtype, kc.d_qk));
  std::vector<uint16_t> out(a.out_count());
  std::vector<float> lse(a.lse_count() + 1);
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_EMU;
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  if (validate_fwd(&d, &p) != ZYFA_STATUS_SUCCESS)
    throw std::runtime_error(std::string("invalid configuration: ") + zyfa_last_error());
  return amd::attn_kernel_name(p);
}

const std::vector<KernelCase> kKernelCases = {
    {"Bf16_D128", ZYFA_DTYPE_BF16, 128}, {"Bf16_D192", ZYFA_DTYPE_BF16, 192},
    {"Fp8_D128", ZYFA_DTYPE_FP8_E4M3, 128}, {"Fp8_D192", ZYFA_DTYPE_FP8_E4M3, 192}};

class RealKernel : public ::testing::TestWithParam<KernelCase> {};

// The unpatched copy runs (the device itself is sound), the s_waitcnt right before the
// kernel's first MFMA removed is caught, and over all of the kernel's s_waitcnt removed one
// at a time, each run either faults or is a wait the kernel did not need.
TEST_P(RealKernel, RemovedWaitcntIsCaught) {
  const KernelCase kc = GetParam();
  const std::string name = launched_kernel(kc);
  std::printf("%s runs %s\n", kc.label, name.c_str());
  const char* kernel = name.c_str();
  const amd::CodeObject& co = code_object_of(kernel);
  const emu::LoadedCodeObject obj(co.data, co.size);
  const auto insts = kernel_instructions(obj, kernel);
  const AttnConfig c = small(kc.dtype, kc.d_qk);

  Patch identity{co.name, insts.front().pc, insts.front().word0};
  const Outcome clean = run_patched(c, identity);
  ASSERT_EQ(clean.status, ZYFA_STATUS_SUCCESS) << clean.message;

  uint64_t before_mfma = 0;
  std::vector<uint64_t> waits;
  for (const auto& in : insts) {
    if (in.enc == emu::Encoding::kSopp && in.op == emu::op::S_WAITCNT) waits.push_back(in.pc);
    if (in.enc == emu::Encoding::kVop3p && std::string(in.name).find("mfma") != std::string::npos && !before_mfma) {
      ASSERT_FALSE(waits.empty());
      before_mfma = waits.back();
    }
  }
  ASSERT_NE(before_mfma, 0u) << "no MFMA in " << kernel;
  const Outcome targeted = run_patched(c, {co.name, before_mfma, kSNop0});
  EXPECT_EQ(targeted.status, ZYFA_STATUS_KERNEL_FAULT)
      << "s_waitcnt at pc 0x" << std::hex << before_mfma << " removed, but the run succeeded";
  EXPECT_NE(targeted.message.find("still in flight"), std::string::npos) << targeted.message;
  std::printf("%s: waitcnt at 0x%llx removed -> %s\n", kernel, (unsigned long long)before_mfma,
              targeted.message.c_str());

  int caught = 0;
  for (uint64_t pc : waits) caught += run_patched(c, {co.name, pc, kSNop0}).status == ZYFA_STATUS_KERNEL_FAULT;
  std::printf("%s: %d of %zu s_waitcnt removals stopped by the emulator\n", kernel, caught, waits.size());
  EXPECT_GT(caught, 0);
}

INSTANTIATE_TEST_SUITE_P(Emu, RealKernel, ::testing::ValuesIn(kKernelCases),
                         [](const ::testing::TestParamInfo<KernelCase>& i) { return std::string(i.param.label); });

// The s_nop chain that gives an MFMA result its wait states before v_accvgpr_read, shortened
// so that exactly one wait state is missing, is a hazard report. The slack is computed from
// the code: the last MFMA writing the AGPR in the straight-line code before the read, its
// pass count, and the gfx950 requirement (P+3, +1 for P >= 4). Kernels whose reads are spaced
// by other work (no s_nop chain) are covered by the hand-written hazard kernels.
struct NopPatch {
  std::vector<std::pair<uint64_t, uint32_t>> words;  // pc -> new s_nop word
};

bool find_binding_nop_patch(const std::vector<emu::Instruction>& insts, NopPatch* out) {
  for (size_t i = 1; i < insts.size(); ++i) {
    const auto& rd = insts[i];
    if (std::string(rd.name) != "v_accvgpr_read_b32") continue;
    const uint32_t agpr = rd.src[0] - emu::operand::kVgpr0;
    int have = 0;
    int passes = 0;
    std::vector<size_t> nops;  // s_nop instructions between the MFMA and the read, nearest first
    for (size_t j = i; j-- > 0 && i - j < 96;) {
      const auto& in = insts[j];
      if (in.enc == emu::Encoding::kSopp && (in.op == emu::op::S_BRANCH || (in.op >= emu::op::S_CBRANCH_SCC0 && in.op <= emu::op::S_CBRANCH_EXECNZ)))
        break;
      const auto mop = in.enc == emu::Encoding::kVop3p ? emu::mfma_op_from_opcode(in.op, in.scaled) : std::nullopt;
      if (mop && in.acc_cd) {
        const emu::MfmaInfo info = emu::mfma_info(*mop, in.cbsz, in.blgp);
        const uint32_t d0 = in.dst - emu::operand::kVgpr0;
        if (agpr >= d0 && agpr < d0 + uint32_t(info.d_regs)) {
          passes = info.passes;
          break;
        }
      }
      const bool is_nop = in.enc == emu::Encoding::kSopp && in.op == emu::op::S_NOP;
      if (is_nop) nops.push_back(j);
      have += is_nop ? (in.simm16 & 0xF) + 1 : 1;
    }
    if (!passes) continue;
    const int need = emu::mfma_wait_states(passes).srcab_or_valu_read;
    int cut = have - need + 1;  // wait states to remove so that exactly one is missing
    if (cut <= 0) continue;
    NopPatch p;
    for (size_t j : nops) {
      if (cut <= 0) break;
      const auto& in = insts[j];
      const int n = in.simm16 & 0xF;
      const int take = std::min(cut, n);
      if (take > 0) p.words.emplace_back(in.pc, (in.word0 & ~0xFu) | uint32_t(n - take));
      cut -= take;
    }
    if (cut > 0) continue;
    *out = p;
    return true;
  }
  return false;
}

class MultiPatchingDevice final : public emu::EmuDevice {
 public:
  MultiPatchingDevice(std::string object, NopPatch p) : object_(std::move(object)), patch_(std::move(p)) {}
  zyfa_status_t launch(const amd::LaunchConfig& cfg) override {
    if (object_ != cfg.code_object->name) return EmuDevice::launch(cfg);
    std::vector<uint8_t> bytes(cfg.code_object->data, cfg.code_object->data + cfg.code_object->size);
    const emu::LoadedCodeObject original(bytes.data(), bytes.size());
    for (const auto& [pc, word] : patch_.words)
      std::memcpy(bytes.data() + pc - original.text_begin() + original.text_file_offset(), &word, 4);
    const emu::LoadedCodeObject patched(bytes.data(), bytes.size());
    return run(cfg, patched);
  }

 private:
  std::string object_;
  NopPatch patch_;
};

TEST(RealKernelNop, ShortenedNopBeforeMfmaReadIsCaught) {
  int tried = 0;
  for (const KernelCase& kc : kKernelCases) {
    const std::string name = launched_kernel(kc);
    const char* kernel = name.c_str();
    const amd::CodeObject& co = code_object_of(kernel);
    const emu::LoadedCodeObject obj(co.data, co.size);
    NopPatch patch;
    if (!find_binding_nop_patch(kernel_instructions(obj, kernel), &patch)) continue;
    AttnData a = make_attn_data(small(kc.dtype, kc.d_qk));
    std::vector<uint16_t> out(a.out_count());
    std::vector<float> lse(a.lse_count() + 1);
    zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
    d.backend = ZYFA_BACKEND_EMU;
    FwdProblem p;
    p.backend = ZYFA_BACKEND_EMU;
    ASSERT_EQ(validate_fwd(&d, &p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    auto backend = amd::make_amd_backend(std::make_unique<MultiPatchingDevice>(co.name, patch), ZYFA_BACKEND_EMU);
    const zyfa_status_t s = backend->fwd(p);
    const std::string msg = s == ZYFA_STATUS_SUCCESS ? "" : zyfa_last_error();
    EXPECT_EQ(s, ZYFA_STATUS_KERNEL_FAULT) << kernel << ": s_nop at pc 0x" << std::hex << patch.words.front().first
                                           << " shortened by one wait state too many, but the run succeeded";
    EXPECT_NE(msg.find("MFMA hazard"), std::string::npos) << msg;
    std::printf("%s: s_nop at 0x%llx shortened -> %s\n", kernel, (unsigned long long)patch.words.front().first,
                msg.c_str());
    ++tried;
  }
  EXPECT_GT(tried, 0) << "no kernel has an s_nop chain that spaces an MFMA result from its read";
}

}  // namespace
}  // namespace zyfa::test
