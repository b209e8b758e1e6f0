// Which gfx950 kernel serves which FP8/BF16 problem: the generated FP8 d = 128 kernel and the
// FP8 d 192/128 ping-pong kernel where their 32-bit row offsets reach, the HIP baseline
// everywhere else (nothing that ran before is refused).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"

namespace zyfa::amd {
namespace {

// A bshd problem as validation would produce it (strides in elements).
FwdProblem problem(zyfa_dtype_t dtype, int64_t d_qk, int64_t seqlen) {
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  p.in_dtype = dtype;
  p.batch = 2;
  p.seqlen = seqlen;
  p.seqlen_k = seqlen;
  p.heads = 4;
  p.heads_k = 2;
  p.d_qk = d_qk;
  p.d_v = 128;
  View* views[4] = {&p.q, &p.k, &p.v, &p.out};
  const int64_t heads[4] = {p.heads, p.heads_k, p.heads_k, p.heads};
  const int64_t dims[4] = {d_qk, d_qk, 128, 128};
  for (int i = 0; i < 4; ++i) {
    views[i]->stride[3] = 1;
    views[i]->stride[2] = dims[i];
    views[i]->stride[1] = heads[i] * dims[i];
    views[i]->stride[0] = seqlen * heads[i] * dims[i];
  }
  p.softmax_scale = 0.088f;
  return p;
}

// The fixed-length kernels and their varlen mode (AttnLengthsArgs).
TEST(Fp8AsmDispatch, GeneratedKernelsAreEmbedded) {
  const struct { const char* name; size_t args; } generated[] = {
      {"attn_fwd_fp8_d128", sizeof(kernels::AttnFwdArgs)},
      {"attn_fwd_fp8_d192", sizeof(kernels::AttnFwdArgs)},
      {"attn_fwd_fp8_d128_varlen", sizeof(kernels::AttnLengthsArgs)},
      {"attn_fwd_fp8_d192_varlen", sizeof(kernels::AttnLengthsArgs)},
  };
  for (const auto& [name, args] : generated) {
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(std::string(k->code_object), std::string(name) + "_asm");
    EXPECT_EQ(k->kernarg_size, args) << name;
    EXPECT_EQ(k->max_workgroup_size, 512u);  // 8 waves in ping-pong
    EXPECT_EQ(k->scratch_bytes, 0u);
  }
}

// seqlen_k above seqlen_q (and varlen batches, test_emu_varlen.cpp) run the generated varlen
// kernels; beyond their 32-bit offsets the HIP any-lengths ones.
TEST(Fp8AsmDispatch, AnyLengthsUseTheGeneratedVarlenKernels) {
  for (int d : {128, 192}) {
    FwdProblem p = problem(ZYFA_DTYPE_FP8_E4M3, d, 1000);
    p.seqlen_k = 3000;
    EXPECT_EQ(attn_kernel_name(p), "attn_fwd_fp8_d" + std::to_string(d) + "_varlen");
    EXPECT_EQ(attn_kernel_shape(p).tile_rows, 256);
    EXPECT_EQ(attn_kernel_shape(p).threads, 512);
    p.q.stride[1] = int64_t{1} << 32;  // a sequence's first row past the varlen kernels' offsets
    EXPECT_EQ(attn_kernel_name(p), "attn_fwd_fp8_d" + std::to_string(d) + "_gfx950_varlen");
  }
}

TEST(Fp8AsmDispatch, Fp8UsesTheGeneratedKernels) {
  for (int d : {128, 192}) {
    const std::string name = "attn_fwd_fp8_d" + std::to_string(d);
    EXPECT_EQ(attn_kernel_name(problem(ZYFA_DTYPE_FP8_E4M3, d, 1000)), name);
    EXPECT_EQ(attn_kernel_name(problem(ZYFA_DTYPE_FP8_E4M3, d, 1)), name);
    EXPECT_EQ(attn_kernel_shape(problem(ZYFA_DTYPE_FP8_E4M3, d, 1000)).tile_rows, 256);
    EXPECT_EQ(attn_kernel_shape(problem(ZYFA_DTYPE_FP8_E4M3, d, 1000)).threads, 512);
  }
}

TEST(Fp8AsmDispatch, Bf16TakesThePingPongKernels) {
  EXPECT_STREQ(attn_kernel_name(problem(ZYFA_DTYPE_BF16, 128, 1000)), "attn_fwd_bf16_d128_gfx950");
  EXPECT_STREQ(attn_kernel_name(problem(ZYFA_DTYPE_BF16, 192, 1000)), "attn_fwd_bf16_d192_gfx950");
}

// Row offsets of 2^32 bytes or more: the generated kernel's 32-bit lane offsets would wrap, so
// the baseline (64-bit addresses) takes the problem.
TEST(Fp8AsmDispatch, RowOffsetsBeyond32BitsKeepTheBaseline) {
  FwdProblem p = problem(ZYFA_DTYPE_FP8_E4M3, 128, 1 << 16);
  p.k.stride[1] = (int64_t{1} << 16) + 16;  // (2^16 - 1) rows of 64 KiB + 16 B: past 2^32 bytes
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128_hip");
  // K and V rows are loaded up to the end of the last 256-row query tile before they are clamped.
  p = problem(ZYFA_DTYPE_FP8_E4M3, 128, 1 << 16);
  p.v.stride[1] = (int64_t{1} << 16) - 16;  // the last row fits 32 bits, 127 rows further do not
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128_hip");
  p = problem(ZYFA_DTYPE_FP8_E4M3, 128, 1 << 16);
  p.q.stride[1] = (int64_t{1} << 16) - 16;  // q rows are not advanced past the last one
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128");
  p = problem(ZYFA_DTYPE_FP8_E4M3, 128, 1 << 16);
  p.out.stride[1] = (int64_t{1} << 15) + 16;  // BF16 rows: past 2^32 bytes at the last row
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128_hip");
  p = problem(ZYFA_DTYPE_FP8_E4M3, 128, 1 << 16);
  p.v_descale.kind = ZYFA_DESCALE_DEVICE;
  p.v_descale.stride_batch = int64_t{1} << 30;  // byte offset 4 * 2^30 for batch 1
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128_hip");
  p.v_descale.stride_batch = 1;
  EXPECT_STREQ(attn_kernel_name(p), "attn_fwd_fp8_d128");
}

}  // namespace
}  // namespace zyfa::amd
