// Disassembles the embedded bytes with the toolchain's llvm-objdump: the attention kernels
// use the gfx950 MFMAs they are written for, the quantize pass converts with the hardware
// RNE instruction, and no kernel touches scratch memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "host/amd/code_objects.h"

namespace zyfa::amd {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The disassembly of each kernel symbol of one embedded code object.
std::map<std::string, std::string> disassemble(const CodeObject& co) {
  // One file per process: ctest -j runs the cases of one code object side by side.
  const std::string path =
      std::string(ZYFA_TEST_SCRATCH_DIR) + "/" + co.name + "." + std::to_string(getpid()) + ".co";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(co.data), co.size);
  std::string cmd;
  std::stringstream parts(ZYFA_TEST_OBJDUMP);
  for (std::string p; std::getline(parts, p, '|');) cmd += shell_quote(p) + " ";
  cmd += "-d " + shell_quote(path) + " 2>&1";
  std::map<std::string, std::string> out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  std::string current;
  char line[4096];
  const std::regex symbol(R"(^[0-9a-fA-F]+ <([A-Za-z0-9_]+)>:)");
  while (fgets(line, sizeof line, pipe)) {
    std::cmatch m;
    if (std::regex_search(line, m, symbol)) current = m[1];
    else if (!current.empty()) out[current] += line;
  }
  EXPECT_EQ(0, pclose(pipe)) << cmd;
  std::remove(path.c_str());
  return out;
}

struct Expectation {
  const char* code_object;
  const char* kernel;
  const char* must_contain;
};

class Disassembly : public testing::TestWithParam<Expectation> {};

TEST_P(Disassembly, HoldsItsInstructionsAndNoScratch) {
  const Expectation& e = GetParam();
  const CodeObject* co = find_code_object(e.code_object);
  ASSERT_NE(nullptr, co);
  const auto kernels = disassemble(*co);
  auto it = kernels.find(e.kernel);
  ASSERT_NE(kernels.end(), it) << e.kernel << " not found in the disassembly of " << e.code_object;
  const std::string& text = it->second;
  EXPECT_NE(std::string::npos, text.find(e.must_contain)) << e.kernel << " lacks " << e.must_contain;
  for (const char* banned : {"scratch_", "buffer_store", "buffer_load", "s_dcache_wb", "flat_"})
    EXPECT_EQ(std::string::npos, text.find(banned)) << e.kernel << " contains " << banned;
  EXPECT_NE(std::string::npos, text.find("s_endpgm"));
}

const Expectation kExpectations[] = {
    {"attn_fwd_bf16", "attn_fwd_bf16_d128", "v_mfma_f32_32x32x16_bf16"},
    {"attn_fwd_bf16_d128_gfx950", "attn_fwd_bf16_d128_gfx950", "ds_read_b64_tr_b16"},
    {"attn_fwd_bf16", "attn_fwd_bf16_d192", "v_mfma_f32_32x32x16_bf16"},
    {"attn_fwd_bf16_d192_gfx950", "attn_fwd_bf16_d192_gfx950", "ds_read_b64_tr_b16"},
    {"attn_fwd_fp8_d192_gfx950", "attn_fwd_fp8_d192_gfx950", "ds_read_b64_tr_b8"},
    {"attn_fwd_bf16_d128_gfx950", "attn_fwd_bf16_d128_gfx950_varlen", "ds_read_b64_tr_b16"},
    {"attn_fwd_bf16_d192_gfx950", "attn_fwd_bf16_d192_gfx950_varlen", "ds_read_b64_tr_b16"},
    {"attn_fwd_fp8_d128_gfx950", "attn_fwd_fp8_d128_gfx950_varlen", "ds_read_b64_tr_b8"},
    {"attn_fwd_fp8_d192_gfx950", "attn_fwd_fp8_d192_gfx950_varlen", "ds_read_b64_tr_b8"},
    {"varlen_jobs", "varlen_job_table", "s_barrier"},
    {"attn_fwd_fp8", "attn_fwd_fp8_d128_hip", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"attn_fwd_fp8_d128_asm", "attn_fwd_fp8_d128", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"attn_fwd_fp8_d192_asm", "attn_fwd_fp8_d192", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"attn_fwd_fp8_d128_varlen_asm", "attn_fwd_fp8_d128_varlen", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"attn_fwd_fp8_d192_varlen_asm", "attn_fwd_fp8_d192_varlen", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"attn_fwd_fp8", "attn_fwd_fp8_d192_hip", "v_mfma_scale_f32_32x32x64_f8f6f4"},
    {"fp8_amax", "fp8_amax_bf16", "v_max_u32"},
    {"fp8_amax", "fp8_amax_f32", "v_max_u32"},
    {"fp8_convert", "fp8_convert_bf16", "v_cvt_pk_fp8_f32"},
    {"fp8_convert", "fp8_convert_f32", "v_cvt_pk_fp8_f32"},
};

INSTANTIATE_TEST_SUITE_P(Kernel, Disassembly, testing::ValuesIn(kExpectations),
                         [](const testing::TestParamInfo<Expectation>& i) { return std::string(i.param.kernel); });

}  // namespace
}  // namespace zyfa::amd
