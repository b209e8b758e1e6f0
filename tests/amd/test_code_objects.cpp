// The code objects embedded in libzyfa are gfx950 ELF files, and the manifest generated from
// their metadata agrees with the argument structs the host fills.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "attn_fwd_args.h"
#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "attn_fwd_bf16_d192_gfx950_args.h"
#include "attn_fwd_fp8_d192_gfx950_args.h"
#include "attn_fwd_lengths_args.h"
#include "fp8_quantize_args.h"
#include "fp8_rotate_args.h"
#include "varlen_jobs_args.h"
#include "host/amd/code_objects.h"

namespace zyfa::amd {
namespace {

// ELF header fields (System V gABI; AMDGPU values from the LLVM AMDGPU usage document).
constexpr uint16_t kEmAmdgpu = 224;
constexpr uint8_t kOsAbiAmdgpuHsa = 64;
constexpr uint8_t kAbiVersionV5 = 3;  // code object v5
constexpr uint32_t kMachMask = 0xFF;
constexpr uint32_t kMachGfx950 = 0x4F;

template <typename T>
T read(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

TEST(CodeObjects, EveryEmbeddedObjectIsGfx950Elf) {
  ASSERT_FALSE(embedded_code_objects().empty());
  for (const CodeObject& co : embedded_code_objects()) {
    SCOPED_TRACE(co.name);
    ASSERT_GT(co.size, 64u);
    EXPECT_EQ(0, std::memcmp(co.data, "\x7f" "ELF", 4));
    EXPECT_EQ(2, co.data[4]) << "ELFCLASS64";
    EXPECT_EQ(1, co.data[5]) << "little endian";
    EXPECT_EQ(kOsAbiAmdgpuHsa, co.data[7]);
    EXPECT_EQ(kAbiVersionV5, co.data[8]);
    EXPECT_EQ(3, read<uint16_t>(co.data + 16)) << "ET_DYN (a loadable code object)";
    EXPECT_EQ(kEmAmdgpu, read<uint16_t>(co.data + 18));
    EXPECT_EQ(kMachGfx950, read<uint32_t>(co.data + 48) & kMachMask) << "e_flags mach";
  }
}

TEST(CodeObjects, ManifestListsEveryKernelTheHostLaunches) {
  const struct { const char* kernel; size_t args; uint32_t threads = 256; } expected[] = {
      {"attn_fwd_bf16_d128", sizeof(kernels::AttnFwdArgs)}, {"attn_fwd_bf16_d192", sizeof(kernels::AttnFwdArgs)},
      {"attn_fwd_bf16_d128_gfx950", sizeof(kernels::AttnFwdArgs), kernels::bf16_d128_gfx950::kThreads},
      {"attn_fwd_bf16_d192_gfx950", sizeof(kernels::AttnFwdArgs), kernels::bf16_d192_gfx950::kThreads},
      {"attn_fwd_fp8_d192_gfx950", sizeof(kernels::AttnFwdArgs), kernels::fp8_d192_gfx950::kThreads},
      {"attn_fwd_bf16_d128_gfx950_varlen", sizeof(kernels::AttnLengthsArgs), kernels::bf16_d128_gfx950::kThreads},
      {"attn_fwd_bf16_d192_gfx950_varlen", sizeof(kernels::AttnLengthsArgs), kernels::bf16_d192_gfx950::kThreads},
      {"attn_fwd_fp8_d128_gfx950_varlen", sizeof(kernels::AttnLengthsArgs), kernels::bf16_d128_gfx950::kThreads},
      {"attn_fwd_fp8_d192_gfx950_varlen", sizeof(kernels::AttnLengthsArgs), kernels::fp8_d192_gfx950::kThreads},
      {"varlen_job_table", sizeof(kernels::VarlenJobTableArgs), kernels::kVarlenJobThreads},
      {"attn_fwd_fp8_d128", sizeof(kernels::AttnFwdArgs), 512},  // 8 waves (src/asm/gen_attn_fwd_fp8.py)
      {"attn_fwd_fp8_d192", sizeof(kernels::AttnFwdArgs), 512},
      {"attn_fwd_fp8_d128_varlen", sizeof(kernels::AttnLengthsArgs), 512},
      {"attn_fwd_fp8_d192_varlen", sizeof(kernels::AttnLengthsArgs), 512},
      {"attn_fwd_fp8_d192_hip", sizeof(kernels::AttnFwdArgs)},
      {"attn_fwd_fp8_d128_hip", sizeof(kernels::AttnFwdArgs)},
      {"fp8_amax_bf16", sizeof(kernels::Fp8AmaxArgs)},      {"fp8_amax_f32", sizeof(kernels::Fp8AmaxArgs)},
      {"fp8_convert_bf16", sizeof(kernels::Fp8ConvertArgs)}, {"fp8_convert_f32", sizeof(kernels::Fp8ConvertArgs)},
      {"fp8_rot_amax_bf16", sizeof(kernels::Fp8RotateArgs)}, {"fp8_rot_amax_f32", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_convert_bf16", sizeof(kernels::Fp8RotateArgs)}, {"fp8_rot_convert_f32", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_count", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_amax_d32", sizeof(kernels::Fp8RotateArgs)}, {"fp8_rot_staged_amax_d64", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_amax_d128", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_d32", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_d64", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_d128", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_count_d32", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_count_d64", sizeof(kernels::Fp8RotateArgs)},
      {"fp8_rot_staged_convert_count_d128", sizeof(kernels::Fp8RotateArgs)},
  };
  for (const auto& e : expected) {
    SCOPED_TRACE(e.kernel);
    const KernelInfo* k = find_kernel(e.kernel);
    ASSERT_NE(nullptr, k);
    EXPECT_NE(nullptr, find_code_object(k->code_object));
    EXPECT_EQ(e.args, k->kernarg_size);
    EXPECT_EQ(e.threads, k->max_workgroup_size);
  }
  EXPECT_EQ(std::size(expected), embedded_kernels().size()) << "a kernel ships that the host never launches";
}

TEST(CodeObjects, NoKernelUsesScratchOrMoreLdsThanACu) {
  for (const KernelInfo& k : embedded_kernels()) {
    SCOPED_TRACE(k.kernel);
    EXPECT_EQ(0u, k.scratch_bytes);
    EXPECT_LE(k.lds_bytes, 160u * 1024u);
    EXPECT_LE(k.sgprs, 104u);
    EXPECT_LE(k.vgprs, 512u);
  }
}

TEST(CodeObjects, NamesAreUnique) {
  std::set<std::string> names;
  for (const CodeObject& co : embedded_code_objects()) EXPECT_TRUE(names.insert(co.name).second) << co.name;
  std::set<std::string> kernels;
  for (const KernelInfo& k : embedded_kernels()) EXPECT_TRUE(kernels.insert(k.kernel).second) << k.kernel;
}

}  // namespace
}  // namespace zyfa::amd
