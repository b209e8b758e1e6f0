// The real AMD kernels, made wrong on purpose, must be stopped by the emulator: a copy of the
// code object with one s_waitcnt replaced by s_nop 0, and one with an s_nop chain that spaces
// an MFMA result from its read shortened by one. The copies run through the shared AMD host
// path (real kernel arguments, job tables, launch) on a device that substitutes the patched
// bytes, over every path the kernels take (descale modes, LSE, tails, GQA/MQA) with peaked
// softmax inputs. The varlen kernels are covered too: the kernels the host launches for
// varlen batches (cu_seqlens) and for seqlen_k > seqlen_q (attn_fwd_fp8_d128_varlen,
// attn_fwd_fp8_d192_varlen, attn_fwd_bf16_d128_gfx950_varlen, attn_fwd_bf16_d192_gfx950_varlen)
// and the varlen job-table builder (varlen_job_table), over varlen paths of the shared varlen
// support (tests/support/varlen.h): sequences of 0 and 1 rows, tails, chunks, rows that see no
// key, GQA, a sequence of two query tiles, and peaked inputs. (The FP8 HIP varlen kernels run
// only past the generated ones' 32-bit offsets, which no small path reaches; they run on small
// varlen batches, unmutated, in tests/amd_fp8/test_fp8_hip_fallback.cpp.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <cstdlib>
#include <map>
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
#include "support/padded_rows.h"
#include "support/varlen.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

constexpr uint32_t kSNop0 = 0xBF800000u;  // SOPP s_nop 0
constexpr const char* kJobTableKernel = "varlen_job_table";

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

// A configuration and the padding of its V rows (0: none; padding that breaks 16-byte V rows
// sends BF16 to the baseline kernels), or a varlen configuration (a varlen batch, or with equal
// lengths a fixed-length call with seqlen_k > seqlen_q).
struct Path {
  AttnConfig cfg;
  int64_t v_pad = 0;
  std::optional<VarlenConfig> varlen;

  std::string name() const { return varlen ? varlen->name() : cfg.name(); }
  uint64_t seed() const { return varlen ? varlen->seed : cfg.seed; }
  bool lse() const { return varlen ? varlen->lse : cfg.lse; }
};

// The inputs of a path (one of the two kinds), its output sizes and its host descriptor.
struct PathData {
  std::optional<AttnData> fixed;
  std::optional<VarlenData> varlen;

  size_t out_count() const { return varlen ? varlen->out_count() : fixed->out_count(); }
  size_t lse_count() const { return varlen ? varlen->lse_count() : fixed->lse_count(); }
  zyfa_fwd_desc_t host_desc(void* out, float* lse) {
    return varlen ? varlen->host_desc(out, lse) : fixed->host_desc(out, lse);
  }
};

PathData path_data(const Path& p) {
  PathData d;
  if (p.varlen) {
    d.varlen = make_varlen_data(*p.varlen);
    return d;
  }
  d.fixed = make_attn_data(p.cfg);
  if (p.v_pad != 0) pad_v_rows(*d.fixed, p.v_pad);
  return d;
}

// The unmutated outputs of a path against the fp64 reference (varlen: also the rows of no
// sequence unwritten and the rows that see no key zero), with the tolerances of the kernels.
CheckResult check_path(const Path& path, const uint16_t* out, const float* lse) {
  PathData a = path_data(path);
  if (path.varlen)
    return check_varlen(*a.varlen, reference_varlen_fp64(*a.varlen), out, path.lse() ? lse : nullptr,
                        varlen_kernel_tolerance(*path.varlen));
  return check_output(*a.fixed, reference_fp64(*a.fixed), out, path.lse() ? lse : nullptr);
}

// One run of a configuration on a device that substitutes the patched bytes: status, the
// fault message, and the outputs (poisoned before the call).
struct Outcome {
  zyfa_status_t status;
  std::string message;
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

Outcome run_with(const Path& path, std::unique_ptr<emu::EmuDevice> device) {
  PathData a = path_data(path);
  Outcome o;
  o.out.resize(a.out_count());
  o.lse.resize(a.lse_count() + 1);
  poison_bf16(o.out.data(), o.out.size());
  poison_f32(o.lse.data(), o.lse.size());
  zyfa_fwd_desc_t d = a.host_desc(o.out.data(), path.lse() ? o.lse.data() : nullptr);
  d.backend = ZYFA_BACKEND_EMU;
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  if (validate_fwd(&d, &p) != ZYFA_STATUS_SUCCESS) {
    o.status = ZYFA_STATUS_INVALID_ARGUMENT;
    o.message = zyfa_last_error();
    return o;
  }
  // The interleaving seed of the emu device (read at launch): one per configuration.
  setenv("ZYFA_EMU_SEED", std::to_string(path.seed() % 1000 + 1).c_str(), 1);
  auto backend = amd::make_amd_backend(std::move(device), ZYFA_BACKEND_EMU);
  o.status = backend->fwd(p);
  o.message = o.status == ZYFA_STATUS_SUCCESS ? "" : zyfa_last_error();
  return o;
}

Outcome run_patched(const Path& c, const Patch& patch) {
  return run_with(c, std::make_unique<PatchingDevice>(patch));
}

// The kernel the AMD host path launches for a configuration (the host may route a
// configuration to another kernel, e.g. a generated assembly one, or its HIP fallback).
std::string launched_kernel(const Path& c) {
  PathData a = path_data(c);
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

struct KernelCase {
  const char* label;
  zyfa_dtype_t dtype;
  int64_t d_qk;
  int64_t v_pad = 0;
};

const std::vector<KernelCase> kKernelCases = {
    {"Bf16_D128", ZYFA_DTYPE_BF16, 128}, {"Bf16_D192", ZYFA_DTYPE_BF16, 192},
    {"Fp8_D128", ZYFA_DTYPE_FP8_E4M3, 128}, {"Fp8_D192", ZYFA_DTYPE_FP8_E4M3, 192}};

// The paths a kernel of a dtype and head size takes: host and device (scalar, per head)
// descales, LSE on and off, a tail in the last query and key tiles, GQA, MHA and MQA, one
// and several key blocks. The inputs make the softmax peaked (std-1 Gaussian, RISING,
// REALISTIC): with std-0.1 inputs nearly uniform probabilities let a wrong score layout pass
// the tolerance. Small sizes keep the hundreds of mutated runs within CI time (one longer FP8
// path: see below).
std::vector<Path> paths_of(const KernelCase& kc) {
  const bool fp8 = kc.dtype == ZYFA_DTYPE_FP8_E4M3;
  const uint64_t seed = seed_for(std::string("RealKernelFaults.") + kc.label);
  std::vector<AttnConfig> v;
  v.push_back(AttnConfig::of(kc.dtype, kc.d_qk, 4, 2, 37).with(Inputs::GAUSSIAN, 1.0));
  AttnConfig b = AttnConfig::of(kc.dtype, kc.d_qk, 2, 2, 70).with(Inputs::RISING).without_lse();
  AttnConfig c = AttnConfig::of(kc.dtype, kc.d_qk, 3, 1, 130).with(Inputs::REALISTIC);
  if (fp8) {
    b = b.with(DescaleMode::DEVICE_SCALAR);
    c = c.with(DescaleMode::DEVICE_PER_HEAD);
    v.push_back(AttnConfig::of(kc.dtype, kc.d_qk, 2, 1, 64).with(Inputs::GAUSSIAN, 1.0).with(DescaleMode::DEVICE_SCALAR));
  }
  v.push_back(b);
  v.push_back(c);
  // The generated FP8 kernels run a key-loop group without its tests only where the query tile
  // has at least 3 key tiles past it: 800 rows (tiles 2 and 3) reach it. Last, so that other
  // paths stop most mutations first.
  if (fp8) v.push_back(AttnConfig::of(kc.dtype, kc.d_qk, 1, 1, 800).with(Inputs::GAUSSIAN, 1.0));
  std::vector<Path> paths;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i].seed = seed + i;
    paths.push_back({v[i], kc.v_pad});
  }
  return paths;
}

// The paths of the varlen kernels of a dtype and head size (varlen batches, and seqlen_k >
// seqlen_q without prefix sums), made by the shared varlen support with std-1 Gaussian inputs.
// First, since it stops the most mutations for its cost: two chunks (more keys than queries),
// one of them two query tiles (a job of two tiles: the next tile's setup and early loads),
// their tiles 6, 8 and 11 64-key blocks long with rows for the leading waves in each: the
// steady key loop, and the generated FP8 kernels' general bodies ending at each of the 4
// positions of a group. Then seqlen_k > seqlen_q without prefix sums (no LSE), then a GQA
// batch with sequences of 0, 1 and 67 rows, a short chunk, and rows that see no key (150
// queries, 30 keys). (RISING inputs on the 70-query chunk put the FP8 d 128 kernel's rel RMS
// at the tolerance, 4e-2, on some seeds: its last rows see the most keys.)
std::vector<Path> varlen_paths_of(const KernelCase& kc) {
  const uint64_t seed = seed_for(std::string("RealKernelFaults.Varlen.") + kc.label);
  const std::vector<VarlenConfig> v = {
      VarlenConfig::of(kc.dtype, kc.d_qk, 1, 1, "Chunks", {140, 400}, {330, 650}).with(Inputs::GAUSSIAN, 1.0),
      VarlenConfig::of(kc.dtype, kc.d_qk, 1, 1, "Q70K190", {70, 70}, {190, 190})
          .with(Inputs::GAUSSIAN, 1.0)
          .without_lse()
          .as_fixed(),
      VarlenConfig::of(kc.dtype, kc.d_qk, 2, 1, "MixedNoKey", {0, 1, 67, 40, 150}, {0, 1, 67, 300, 30})
          .with(Inputs::GAUSSIAN, 1.0)};
  std::vector<Path> paths;
  for (size_t i = 0; i < v.size(); ++i) {
    Path p;
    p.varlen = v[i];
    p.varlen->seed = seed + i;
    paths.push_back(p);
  }
  return paths;
}

// Every kernel the paths of the four cases launch, with the paths that launch it: the
// fixed-length kernels, the varlen ones, and the job-table builder that runs before each
// varlen batch (the same kernel for every dtype: the BF16 d 128 case's varlen batches run it).
std::map<std::string, std::vector<Path>> kernels_and_paths() {
  std::map<std::string, std::vector<Path>> m;
  for (const KernelCase& kc : kKernelCases) {
    for (const Path& p : paths_of(kc)) m[launched_kernel(p)].push_back(p);
    for (const Path& p : varlen_paths_of(kc)) {
      m[launched_kernel(p)].push_back(p);
      if (!p.varlen->fixed && kc.dtype == ZYFA_DTYPE_BF16 && kc.d_qk == 128) m[kJobTableKernel].push_back(p);
    }
  }
  return m;
}

// A run that did not fault must give exactly the outputs of the unmutated kernel on the same
// interleaving seed: a mutation is either stopped or harmless, never a silent wrong result.
bool same_outputs(const Outcome& a, const Outcome& b) {
  return a.out.size() == b.out.size() && a.lse.size() == b.lse.size() &&
         std::memcmp(a.out.data(), b.out.data(), 2 * a.out.size()) == 0 &&
         std::memcmp(a.lse.data(), b.lse.data(), 4 * a.lse.size()) == 0;
}

class RealKernel : public ::testing::TestWithParam<std::string> {};

// The unpatched copy runs correctly on every path (checked against fp64), the s_waitcnt
// right before the kernel's first MFMA (an attention kernel's) removed is caught, and each of
// the kernel's s_waitcnt removed one at a time is either stopped on some path or gives bitwise
// the unmutated outputs on all paths (a wait none of the paths needs).
TEST_P(RealKernel, RemovedWaitcntIsCaught) {
  const std::string name = GetParam();
  const char* kernel = name.c_str();
  const std::vector<Path> paths = kernels_and_paths().at(name);
  const amd::CodeObject& co = code_object_of(kernel);
  const emu::LoadedCodeObject obj(co.data, co.size);
  const auto insts = kernel_instructions(obj, kernel);

  std::vector<Outcome> clean;
  for (const Path& path : paths) {
    const Patch identity{co.name, insts.front().pc, insts.front().word0};
    clean.push_back(run_patched(path, identity));
    ASSERT_EQ(clean.back().status, ZYFA_STATUS_SUCCESS) << path.name() << ": " << clean.back().message;
    const CheckResult r = check_path(path, clean.back().out.data(), clean.back().lse.data());
    EXPECT_TRUE(r.ok()) << path.name() << " seed " << path.seed() << ": " << r.summary();
  }

  uint64_t before_mfma = 0;
  std::vector<uint64_t> waits;
  for (const auto& in : insts) {
    if (in.enc == emu::Encoding::kSopp && in.op == emu::op::S_WAITCNT) waits.push_back(in.pc);
    if (in.enc == emu::Encoding::kVop3p && std::string(in.name).find("mfma") != std::string::npos && !before_mfma) {
      ASSERT_FALSE(waits.empty());
      before_mfma = waits.back();
    }
  }
  // (The job-table builder has no MFMA.)
  if (name != kJobTableKernel) {
    ASSERT_NE(before_mfma, 0u) << "no MFMA in " << kernel;
    const Outcome targeted = run_patched(paths.front(), {co.name, before_mfma, kSNop0});
    EXPECT_EQ(targeted.status, ZYFA_STATUS_KERNEL_FAULT)
        << "s_waitcnt at pc 0x" << std::hex << before_mfma << " removed, but the run succeeded";
    EXPECT_NE(targeted.message.find("still in flight"), std::string::npos) << targeted.message;
  }

  int caught = 0;
  std::string unneeded;
  for (uint64_t pc : waits) {
    bool stopped = false;
    for (size_t i = 0; i < paths.size() && !stopped; ++i) {
      const Outcome o = run_patched(paths[i], {co.name, pc, kSNop0});
      stopped = o.status == ZYFA_STATUS_KERNEL_FAULT;
      if (!stopped) {
        EXPECT_EQ(o.status, ZYFA_STATUS_SUCCESS) << o.message;
        EXPECT_TRUE(same_outputs(o, clean[i])) << kernel << ": s_waitcnt at pc 0x" << std::hex << pc << std::dec
                                               << " removed gives other outputs on " << paths[i].name()
                                               << " without a fault";
      }
    }
    caught += stopped;
    if (!stopped) {
      char buf[24];
      std::snprintf(buf, sizeof buf, " 0x%llx", static_cast<unsigned long long>(pc));
      unneeded += buf;
    }
  }
  std::printf("%s: %d of %zu s_waitcnt removals stopped over %zu paths; needed by none:%s\n", kernel, caught,
              waits.size(), paths.size(), unneeded.empty() ? " -" : unneeded.c_str());
  EXPECT_GT(caught, 0);
}

std::vector<std::string> launched_kernels() {
  std::vector<std::string> v;
  for (const auto& [k, p] : kernels_and_paths()) v.push_back(k);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Emu, RealKernel, ::testing::ValuesIn(launched_kernels()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Every s_nop chain that gives an MFMA result its wait states before a v_accvgpr_read (AGPR
// results) or a VALU read (VGPR results), shortened so that exactly one wait state is missing,
// is a hazard report on the paths that run it. The slack is computed from the code: the last
// MFMA writing the register in the straight-line code before the read, its pass count, and the
// gfx950 requirement (P+3, +1 for P >= 4). Reads spaced by other work (no s_nop chain) are
// covered by the hand-written hazard kernels.
struct NopPatch {
  std::vector<std::pair<uint64_t, uint32_t>> words;  // pc -> new s_nop word
};

// The registers an instruction reads that an MFMA may have written: the AGPR of a
// v_accvgpr_read, or the first VGPR of each VALU source (an MFMA result is read from its start
// register onwards, and the kernels read results register by register).
std::vector<std::pair<uint32_t, bool>> mfma_result_reads(const emu::Instruction& in) {
  if (std::string(in.name) == "v_accvgpr_read_b32") return {{in.src[0] - emu::operand::kVgpr0, true}};
  const bool valu = in.enc == emu::Encoding::kVop1 || in.enc == emu::Encoding::kVop2 ||
                    in.enc == emu::Encoding::kVopc || in.enc == emu::Encoding::kVop3 ||
                    (in.enc == emu::Encoding::kVop3p && !emu::mfma_op_from_opcode(in.op, in.scaled));
  std::vector<std::pair<uint32_t, bool>> regs;
  if (!valu) return regs;
  for (uint16_t src : in.src)
    if (src >= emu::operand::kVgpr0 && src != emu::operand::kNone) regs.push_back({src - emu::operand::kVgpr0, false});
  return regs;
}

std::vector<NopPatch> find_binding_nop_patches(const std::vector<emu::Instruction>& insts) {
  std::vector<NopPatch> found;
  for (size_t i = 1; i < insts.size(); ++i) {
    const std::vector<std::pair<uint32_t, bool>> reads = mfma_result_reads(insts[i]);
    if (reads.empty()) continue;
    int have = 0;
    int passes = 0;
    std::vector<size_t> nops;  // s_nop instructions between the MFMA and the read, nearest first
    for (size_t j = i; j-- > 0 && i - j < 96;) {
      const auto& in = insts[j];
      if (in.enc == emu::Encoding::kSopp && (in.op == emu::op::S_BRANCH || (in.op >= emu::op::S_CBRANCH_SCC0 && in.op <= emu::op::S_CBRANCH_EXECNZ)))
        break;
      const auto mop = in.enc == emu::Encoding::kVop3p ? emu::mfma_op_from_opcode(in.op, in.scaled) : std::nullopt;
      if (mop) {
        const emu::MfmaInfo info = emu::mfma_info(*mop, in.cbsz, in.blgp);
        const uint32_t d0 = in.dst - emu::operand::kVgpr0;
        const bool writes = std::any_of(reads.begin(), reads.end(), [&](const std::pair<uint32_t, bool>& r) {
          return r.second == in.acc_cd && r.first >= d0 && r.first < d0 + uint32_t(info.d_regs);
        });
        if (writes) {
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
    const bool seen = std::any_of(found.begin(), found.end(), [&](const NopPatch& q) { return q.words == p.words; });
    if (!seen) found.push_back(p);
  }
  return found;
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
  for (const auto& [name, paths] : kernels_and_paths()) {
    const char* kernel = name.c_str();
    const amd::CodeObject& co = code_object_of(kernel);
    const emu::LoadedCodeObject obj(co.data, co.size);
    const std::vector<NopPatch> patches = find_binding_nop_patches(kernel_instructions(obj, kernel));
    for (const NopPatch& patch : patches) {
      std::string msg;
      for (const Path& c : paths) {
        const Outcome o = run_with(c, std::make_unique<MultiPatchingDevice>(co.name, patch));
        if (o.status != ZYFA_STATUS_SUCCESS) {
          msg = o.message;
          break;
        }
      }
      EXPECT_NE(msg.find("MFMA hazard"), std::string::npos)
          << kernel << ": s_nop at pc 0x" << std::hex << patch.words.front().first
          << " shortened by one wait state too many, but no path faulted: " << msg;
      ++tried;
    }
    std::printf("%s: %zu s_nop chains shortened by one wait state too many over %zu paths\n", kernel,
                patches.size(), paths.size());
  }
  EXPECT_GT(tried, 0) << "no kernel has an s_nop chain that spaces an MFMA result from its read";
}

}  // namespace
}  // namespace zyfa::test
