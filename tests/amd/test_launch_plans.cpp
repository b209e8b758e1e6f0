// Host planning of the gfx950 launches: argument structs, coalescing of quantize views into
// rows, buffer extents, and the refusals of what the kernels cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "host/amd/attn_launch.h"
#include "host/amd/quantize_launch.h"
#include "host/error.h"

namespace zyfa::amd {
namespace {

FwdProblem bshd_problem(zyfa_dtype_t dtype, int64_t b, int64_t s, int64_t h, int64_t hk, int64_t dqk) {
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  p.in_dtype = dtype;
  p.batch = b, p.seqlen = s, p.seqlen_k = s, p.heads = h, p.heads_k = hk, p.d_qk = dqk, p.d_v = 128;
  auto view = [&](uintptr_t addr, int64_t heads, int64_t d) {
    View v;
    v.data = reinterpret_cast<void*>(addr);
    v.stride[3] = 1, v.stride[2] = d, v.stride[1] = heads * d, v.stride[0] = s * heads * d;
    return v;
  };
  p.q = view(0x10000, h, dqk);
  p.k = view(0x200000, hk, dqk);
  p.v = view(0x400000, hk, 128);
  p.out = view(0x800000, h, 128);
  p.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
  return p;
}

TEST(AttnPlan, KernelPerConfiguration) {
  EXPECT_STREQ("attn_fwd_bf16_d128_gfx950", attn_kernel_name(bshd_problem(ZYFA_DTYPE_BF16, 1, 100, 4, 1, 128)));
  EXPECT_STREQ("attn_fwd_bf16_d192_gfx950", attn_kernel_name(bshd_problem(ZYFA_DTYPE_BF16, 1, 100, 4, 1, 192)));
  EXPECT_STREQ("attn_fwd_fp8_d128", attn_kernel_name(bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 100, 4, 4, 128)));
  EXPECT_STREQ("attn_fwd_fp8_d192", attn_kernel_name(bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 100, 4, 2, 192)));
}

// The generated FP8 d 192/128 kernel (256-row tiles, 512 threads) takes any row alignment within
// its 32-bit row offsets (K and V rows up to 255 past the last, plus their bytes); beyond them
// the HIP ping-pong kernel where its K/V offsets and 16-byte rows allow, else the baseline (128-row
// tiles, 256 threads).
TEST(AttnPlan, Fp8D192GeneratedUnlessBeyond32BitOffsets) {
  FwdProblem p = bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 100, 4, 2, 192);
  EXPECT_EQ(256, attn_kernel_shape(p).tile_rows);
  EXPECT_EQ(512, attn_kernel_shape(p).threads);
  p.v.stride[1] = 2 * 128 + 8;  // 8 bytes of padding per row
  EXPECT_STREQ("attn_fwd_fp8_d192", attn_kernel_name(p));
  p = bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 100, 4, 2, 192);
  p.k.data = reinterpret_cast<void*>(0x400008);
  EXPECT_STREQ("attn_fwd_fp8_d192", attn_kernel_name(p));
  // seqlen 2: K rows read up to row 257, so a K row stride s fits when 257 s + 192 < 2^32
  p = bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 2, 4, 2, 192);
  p.k.stride[1] = ((int64_t{1} << 32) - 192 - 1) / 257 / 16 * 16;  // the largest, 16-byte rows
  EXPECT_STREQ("attn_fwd_fp8_d192", attn_kernel_name(p));
  p.k.stride[1] += 16;
  EXPECT_STREQ("attn_fwd_fp8_d192_gfx950", attn_kernel_name(p));
  p.k.stride[1] = (int64_t{1} << 32) - 192 - 16;  // row 1 + 192 bytes < 2^32
  EXPECT_STREQ("attn_fwd_fp8_d192_gfx950", attn_kernel_name(p));
  EXPECT_EQ(256, attn_kernel_shape(p).tile_rows);
  p.k.stride[1] = (int64_t{1} << 32) - 176;  // + 128 bytes within 2^32, + 192 not
  EXPECT_STREQ("attn_fwd_fp8_d192_hip", attn_kernel_name(p));
  EXPECT_EQ(kernels::kAttnTileRows, attn_kernel_shape(p).tile_rows);
  EXPECT_EQ(kernels::kAttnThreads, attn_kernel_shape(p).threads);
  p.k.stride[1] = (int64_t{1} << 32) - 192 - 16 + 4;  // within the ping-pong's offsets, rows 4-byte aligned
  EXPECT_STREQ("attn_fwd_fp8_d192_hip", attn_kernel_name(p));
}

// The ping-pong BF16 kernels (d_qk 128 and 192) read V rows in 16-byte pieces; other V views
// (and only those) keep the baseline kernels, with their 128-row tiles and 256 threads.
TEST(AttnPlan, Bf16PingPongFallsBackWhereVRowsAreNot16Bytes) {
  for (const int64_t dqk : {128, 192}) {
    SCOPED_TRACE(dqk);
    const std::string fast = "attn_fwd_bf16_d" + std::to_string(dqk) + "_gfx950";
    const std::string baseline = "attn_fwd_bf16_d" + std::to_string(dqk);
    FwdProblem p = bshd_problem(ZYFA_DTYPE_BF16, 1, 100, 4, 1, dqk);
    EXPECT_EQ(fast, attn_kernel_name(p));
    EXPECT_EQ(256, attn_kernel_shape(p).tile_rows);
    EXPECT_EQ(512, attn_kernel_shape(p).threads);
    p.v.stride[1] = 128 + 4;  // 8 bytes of padding per row
    EXPECT_EQ(baseline, attn_kernel_name(p));
    EXPECT_EQ(kernels::kAttnTileRows, attn_kernel_shape(p).tile_rows);
    EXPECT_EQ(kernels::kAttnThreads, attn_kernel_shape(p).threads);
    p = bshd_problem(ZYFA_DTYPE_BF16, 1, 100, 4, 1, dqk);
    p.v.data = reinterpret_cast<void*>(0x400008);
    EXPECT_EQ(baseline, attn_kernel_name(p));
  }
}

// The ping-pong kernels' 32-bit K row offsets reach the last element of the last row: for
// d_qk = 192 that is 192 elements past the row's start, not 128.
TEST(AttnPlan, Bf16D192PingPongNeedsItsWholeKRowsWithin32Bits) {
  FwdProblem p = bshd_problem(ZYFA_DTYPE_BF16, 1, 2, 4, 1, 192);
  p.k.stride[1] = (int64_t{1} << 31) - 256;  // (row 1 + 192 elements) x 2 bytes < 2^32
  EXPECT_STREQ("attn_fwd_bf16_d192_gfx950", attn_kernel_name(p));
  p.k.stride[1] = (int64_t{1} << 31) - 160;  // + 128 elements within 2^32 bytes, + 192 not
  EXPECT_STREQ("attn_fwd_bf16_d192", attn_kernel_name(p));
}

TEST(AttnPlan, ArgsCarryStridesScaleAndDescales) {
  FwdProblem p = bshd_problem(ZYFA_DTYPE_FP8_E4M3, 2, 1000, 8, 2, 192);
  p.q_descale = {ZYFA_DESCALE_HOST, 0.25f, nullptr, 0, 0};
  const float dev_k[4] = {1, 2, 3, 4};
  p.k_descale = {ZYFA_DESCALE_DEVICE, 0.0f, dev_k, 2, 1};
  const int dummy_table = 0;
  const kernels::AttnFwdArgs a = make_attn_args(p, &dummy_table);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&dummy_table), a.job_table);
  EXPECT_EQ(0x10000u, a.q);
  EXPECT_EQ(1000 * 8 * 192, a.q_stride[0]);
  EXPECT_EQ(8 * 192, a.q_stride[1]);
  EXPECT_EQ(192, a.q_stride[2]);
  EXPECT_EQ(2 * 192, a.k_stride[1]);
  EXPECT_EQ(2 * 128, a.v_stride[1]);
  EXPECT_EQ(8 * 128, a.o_stride[1]);
  EXPECT_FLOAT_EQ(p.softmax_scale * 1.4426950408889634f, a.scale_log2);
  EXPECT_EQ(0u, a.q_descale_ptr);
  EXPECT_EQ(0.25f, a.q_descale);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dev_k), a.k_descale_ptr);
  EXPECT_EQ(2, a.descale_stride[2]);
  EXPECT_EQ(1, a.descale_stride[3]);
  EXPECT_EQ(1.0f, a.v_descale);
  EXPECT_EQ(0u, a.lse);
  EXPECT_EQ(1000, a.seqlen);
  EXPECT_EQ(8, a.heads);
  EXPECT_EQ(2, a.heads_k);
}

TEST(AttnPlan, BuffersCoverExactlyTheViews) {
  FwdProblem p = bshd_problem(ZYFA_DTYPE_BF16, 2, 300, 4, 2, 128);
  float lse_storage = 0;
  p.lse = &lse_storage;
  const int dummy_table = 0;
  const auto buffers = attn_buffers(p, &dummy_table, 40);
  ASSERT_EQ(6u, buffers.size());
  EXPECT_EQ(2u * 300 * 4 * 128 * 2, buffers[0].bytes);  // q
  EXPECT_EQ(2u * 300 * 2 * 128 * 2, buffers[1].bytes);  // k
  EXPECT_FALSE(buffers[0].writable);
  EXPECT_TRUE(buffers[3].writable);                     // out
  EXPECT_EQ(40u, buffers[4].bytes);                     // job table
  EXPECT_EQ(2u * 4 * 300 * 4, buffers[5].bytes);        // lse
}

TEST(AttnPlan, RefusesMisalignedRows) {
  FwdProblem p = bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 64, 2, 2, 128);
  EXPECT_EQ(ZYFA_STATUS_SUCCESS, check_attn_supported(p, "emu"));
  p.k.data = reinterpret_cast<void*>(0x200008);
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED, check_attn_supported(p, "emu"));
  p = bshd_problem(ZYFA_DTYPE_BF16, 1, 64, 2, 2, 128);
  p.q.stride[1] = 2 * 128 + 4;  // 8 bytes of padding per row: not a multiple of 16
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED, check_attn_supported(p, "emu"));
}

TEST(AttnPlan, JobTableTilesMatchTheKernel) {
  FwdProblem baseline = bshd_problem(ZYFA_DTYPE_BF16, 1, 1000, 4, 1, 128);
  baseline.v.stride[1] = 128 + 4;  // V rows 8 bytes apart from 16: the baseline kernel
  const JobTableParams j = attn_job_table_params(baseline);
  EXPECT_EQ(kernels::kAttnTileRows, j.tile_rows);
  EXPECT_EQ(16, j.grid);  // 4 heads x 8 tiles = 32 tiles in 16 pairs
  const JobTableParams fp8 = attn_job_table_params(bshd_problem(ZYFA_DTYPE_FP8_E4M3, 1, 1000, 4, 1, 192));
  EXPECT_EQ(256, fp8.tile_rows);
  EXPECT_EQ(8, fp8.grid);
  const JobTableParams pp = attn_job_table_params(bshd_problem(ZYFA_DTYPE_BF16, 1, 1000, 4, 1, 128));
  EXPECT_EQ(256, pp.tile_rows);
  EXPECT_EQ(8, pp.grid);  // 4 heads x 4 tiles of 256 rows = 16 tiles in 8 pairs
  EXPECT_EQ(256, attn_job_table_params(bshd_problem(ZYFA_DTYPE_BF16, 4, 32768, 32, 8, 128)).grid);
}

// Equal jobs (each XCD's streams together) unless they leave workgroups idle for more than 2%
// of the work; then the balanced table.
TEST(AttnPlan, JobScheduleByShape) {
  EXPECT_DOUBLE_EQ(0.0, equal_jobs_idle_share(1024, 512));
  EXPECT_DOUBLE_EQ(1.0 - 576.0 / 1024.0, equal_jobs_idle_share(576, 512));
  EXPECT_DOUBLE_EQ(0.0, equal_jobs_idle_share(7, 7));
  const auto schedule = [](zyfa_dtype_t t, int64_t s, int64_t h, int64_t d) {
    return attn_job_table_params(bshd_problem(t, 1, s, h, h, d)).schedule;
  };
  // 128 heads x 8 pairs = 1024 jobs on 512 workgroups; 36 heads x 16 pairs = 576.
  EXPECT_EQ(JobSchedule::kEqualJobs, schedule(ZYFA_DTYPE_FP8_E4M3, 2048, 128, 128));
  EXPECT_EQ(JobSchedule::kBalancedWork, schedule(ZYFA_DTYPE_FP8_E4M3, 4096, 36, 128));
  EXPECT_EQ(JobSchedule::kEqualJobs, schedule(ZYFA_DTYPE_FP8_E4M3, 1000, 4, 128));
  // One workgroup per CU (256 rows per tile): 36 heads x 8 pairs = 288 jobs on 256.
  EXPECT_EQ(JobSchedule::kBalancedWork, schedule(ZYFA_DTYPE_BF16, 4096, 36, 128));
  EXPECT_EQ(JobSchedule::kEqualJobs, schedule(ZYFA_DTYPE_BF16, 2048, 128, 128));
  // The emulator route test's shape: 258 heads x 1 pair on 256 workgroups.
  EXPECT_EQ(JobSchedule::kBalancedWork, schedule(ZYFA_DTYPE_BF16, 300, 258, 128));
  EXPECT_EQ(JobSchedule::kBalancedWork, schedule(ZYFA_DTYPE_FP8_E4M3, 300, 258, 192));
}

QuantizeProblem quantize_problem(zyfa_dtype_t src, const int64_t shape[4], const int64_t src_stride[4],
                                 const int64_t dst_stride[4]) {
  QuantizeProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  p.src_dtype = src;
  for (int i = 0; i < 4; ++i) {
    p.shape[i] = shape[i];
    p.src.stride[i] = src_stride[i];
    p.dst.stride[i] = dst_stride[i];
  }
  p.src.data = reinterpret_cast<void*>(0x100000);
  p.dst.data = reinterpret_cast<void*>(0x900000);
  p.descale = reinterpret_cast<float*>(0xA00000);
  return p;
}

TEST(QuantizePlan, ContiguousTensorIsOneRow) {
  const int64_t shape[4] = {2, 1000, 8, 128};
  const int64_t st[4] = {1000 * 8 * 128, 8 * 128, 128, 1};
  QuantizePlan plan;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, plan_quantize(quantize_problem(ZYFA_DTYPE_BF16, shape, st, st),
                                               reinterpret_cast<void*>(0xB00000), "emu", &plan));
  EXPECT_STREQ("fp8_amax_bf16", plan.amax_kernel);
  EXPECT_STREQ("fp8_convert_bf16", plan.convert_kernel);
  EXPECT_EQ(2u * 1000 * 8 * 128, plan.amax.dim[0]);
  EXPECT_EQ(1u, plan.amax.dim[1]);
  EXPECT_EQ(plan.amax.dim[0], plan.amax.total);
  ASSERT_EQ(1u, plan.converts.size());
  EXPECT_EQ(2u * 1000 * 8 * 128, plan.converts[0].args.row_len);
  EXPECT_EQ(2u * 1000 * 8 * 128 / 256, plan.converts[0].grid[0]);
  EXPECT_EQ(1u, plan.converts[0].grid[1]);
  EXPECT_EQ(0xB00000u, plan.converts[0].args.partials);
  EXPECT_EQ(2u * 1000 * 8 * 128 * 2, plan.src_bytes);
}

TEST(QuantizePlan, StridedSliceBecomesRowsWithByteStrides) {
  // k of a packed (b, s, 3, h, d) qkv buffer in f32, written to a contiguous fp8 tensor.
  const int64_t shape[4] = {1, 300, 4, 128};
  const int64_t src[4] = {300 * 3 * 4 * 128, 3 * 4 * 128, 128, 1};
  const int64_t dst[4] = {300 * 4 * 128, 4 * 128, 128, 1};
  QuantizePlan plan;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, plan_quantize(quantize_problem(ZYFA_DTYPE_FP32, shape, src, dst),
                                               reinterpret_cast<void*>(0xB00000), "emu", &plan));
  // heads merge with head_dim (contiguous in both), seqlen does not.
  EXPECT_EQ(4u * 128, plan.amax.dim[0]);
  EXPECT_EQ(300u, plan.amax.dim[1]);
  EXPECT_EQ(3 * 4 * 128 * 4, plan.amax.byte_stride[0]);
  ASSERT_EQ(1u, plan.converts.size());
  const ConvertLaunch& c = plan.converts[0];
  EXPECT_EQ(512u, c.args.row_len);
  EXPECT_EQ(2u, c.grid[0]);
  EXPECT_EQ(300u, c.grid[1]);
  EXPECT_EQ(1u, c.grid[2]);
  EXPECT_EQ(3 * 4 * 128 * 4, c.args.src_stride_y);
  EXPECT_EQ(4 * 128, c.args.dst_stride_y);
}

TEST(QuantizePlan, FourUnmergeableDimsBecomeSeveralLaunches) {
  const int64_t shape[4] = {3, 5, 7, 128};
  const int64_t src[4] = {20000, 3000, 256, 1};
  const int64_t dst[4] = {5 * 7 * 128, 7 * 128, 128, 1};
  QuantizePlan plan;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, plan_quantize(quantize_problem(ZYFA_DTYPE_BF16, shape, src, dst),
                                               reinterpret_cast<void*>(0xB00000), "emu", &plan));
  EXPECT_EQ(3u * 5 * 7 * 128, plan.amax.total);
  ASSERT_EQ(3u, plan.converts.size());
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(0x100000u + static_cast<uint64_t>(w) * 20000 * 2, plan.converts[w].args.src);
    EXPECT_EQ(0x900000u + static_cast<uint64_t>(w) * 5 * 7 * 128, plan.converts[w].args.dst);
    EXPECT_EQ(7u, plan.converts[w].grid[1]);
    EXPECT_EQ(5u, plan.converts[w].grid[2]);
  }
  EXPECT_EQ((2u * 20000 + 4 * 3000 + 6 * 256 + 128) * 2, plan.src_bytes);
}

TEST(QuantizePlan, RefusesTensorsOf2To31Elements) {
  const int64_t shape[4] = {1, 1 << 16, 1, 1 << 15};
  const int64_t st[4] = {int64_t{1} << 31, 1 << 15, 1 << 15, 1};
  QuantizePlan plan;
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED, plan_quantize(quantize_problem(ZYFA_DTYPE_BF16, shape, st, st),
                                                     reinterpret_cast<void*>(0xB00000), "emu", &plan));
}

// The options' plan: whole rows per LDS tile, the amax pass only for a computed descale, the
// count kernel only with a counter, scratch split into amax partials and counts.
TEST(QuantizePlan, RotationTilesAndKernels) {
  const int64_t shape[4] = {2, 37, 3, 192};
  const int64_t st[4] = {37 * 3 * 192, 3 * 192, 192, 1};
  QuantizeProblem p = quantize_problem(ZYFA_DTYPE_BF16, shape, st, st);
  p.rotation = rotation::make_params(rotation::kDct3H64, 192, 5);
  RotatePlan plan;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, plan_rotate_quantize(p, reinterpret_cast<void*>(0xB00000), "emu", &plan));
  EXPECT_STREQ("fp8_rot_amax_bf16", plan.amax_kernel);
  EXPECT_STREQ("fp8_rot_convert_bf16", plan.convert_kernel);
  EXPECT_EQ(nullptr, plan.count_kernel);
  EXPECT_EQ(2u, plan.args.rows_per_tile);  // 512 / 192
  EXPECT_EQ(111u, plan.args.tiles);        // 222 rows
  EXPECT_EQ(0xB00000u + kernels::kRotWorkgroups * 4, plan.args.counts);
  EXPECT_EQ(0u, plan.mean_bytes);

  p.src_dtype = ZYFA_DTYPE_FP32;
  p.static_descale = 0.5f;
  p.static_inv = 2.0f;
  p.saturated = reinterpret_cast<uint32_t*>(0xC00000);
  p.smooth_mean = reinterpret_cast<const float*>(0xD00000);
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, plan_rotate_quantize(p, reinterpret_cast<void*>(0xB00000), "emu", &plan));
  EXPECT_EQ(nullptr, plan.amax_kernel);
  EXPECT_STREQ("fp8_rot_convert_f32", plan.convert_kernel);
  EXPECT_STREQ("fp8_rot_count", plan.count_kernel);
  EXPECT_EQ(size_t{3 * 192 * 4}, plan.mean_bytes);

  const int64_t big[4] = {1, 1 << 20, 16, 128};  // 2^31 elements
  const int64_t bst[4] = {int64_t{1} << 31, 16 * 128, 128, 1};
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED,
            plan_rotate_quantize(quantize_problem(ZYFA_DTYPE_BF16, big, bst, bst), nullptr, "emu", &plan));
}

}  // namespace
}  // namespace zyfa::amd

namespace zyfa::kernels {
namespace {

// The kernels divide with these constants: exact for every numerator below 2^31.
TEST(FastDivision, ExactForAllNumeratorsBelow2To31) {
  const uint32_t divisors[] = {1, 2, 3, 5, 7, 8, 12, 31, 32, 33, 100, 127, 128, 129, 255, 256, 1000, 65535, 65536,
                               1u << 20, (1u << 20) + 1, 123456789, (1u << 30) + 3, 0x7FFFFFFF};
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint32_t d : divisors) {
    const FastDiv f = make_fast_div(d);
    auto check = [&](uint32_t n) {
      const uint32_t q = static_cast<uint32_t>((static_cast<uint64_t>(n) * f.magic) >> f.shift);
      ASSERT_EQ(n / d, q) << "n = " << n << ", d = " << d;
    };
    for (uint32_t n = 0; n < 4096; ++n) check(n);
    for (uint32_t k = 1; k < 64 && static_cast<uint64_t>(k) * d < (1u << 31); ++k)
      for (int off = -2; off <= 2; ++off) check(static_cast<uint32_t>(static_cast<int64_t>(k) * d + off));
    check(0x7FFFFFFF);
    for (int i = 0; i < 20000; ++i) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      check(static_cast<uint32_t>(state) & 0x7FFFFFFF);
    }
  }
}

}  // namespace
}  // namespace zyfa::kernels
