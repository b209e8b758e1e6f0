// A host launcher for AMD AITER's hand-written gfx950 flash-attention forward kernels
// (amd-aiter 0.1.7.post2.dev18, aiter_meta/hsa/gfx950/fmha_v3_fwd/*.co, fetched into
// .cache/aiter by bench/aiter/fetch-aiter-kernels.sh) on ZYFA's gfx950 emulator, as an outside
// user would launch them: the kernel arguments and geometry AITER's own dispatcher uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emu/emulator.h"

namespace zyfa::aiter {

// struct fmha_fwd_v3_args of AITER's aiter_meta/csrc/include/mha_fwd.h, written out: a packed
// struct in which every field is padded to 16 bytes (a pointer followed by AITER's `p2`, two
// unsigned ints; a 32-bit value followed by `p3`, three). Strides are in bytes.
struct __attribute__((packed)) FmhaFwdV3Args {
  void* ptr_o; uint32_t _p0[2];
  const void* ptr_q; uint32_t _p1[2];
  const void* ptr_k; uint32_t _p2[2];
  const void* ptr_v; uint32_t _p3[2];
  void* ptr_lse; uint32_t _p4[2];
  float scalar; uint32_t _p5[3];               // softmax scale
  uint32_t s_seq_len; uint32_t _p6[3];         // seqlen_q
  uint32_t s_Seqs; uint32_t _p7[3];            // q row stride
  uint32_t s_Ts; uint32_t _p8[3];              // ts_qo rows of q
  uint32_t s_Hs; uint32_t _p9[3];              // q head stride
  uint32_t s_Bs; uint32_t _p10[3];             // q batch stride
  uint32_t s_gqa; uint32_t _p11[3];            // heads / heads_k
  uint32_t s_k_Seqs; uint32_t _p12[3];
  uint32_t s_k_Hs; uint32_t _p13[3];
  uint32_t s_k_Bs; uint32_t _p14[3];
  uint32_t s_opt; uint32_t _p15[3];            // tuning option (codegen.py: 5, or 3)
  uint32_t s_lse; uint32_t _p16[3];            // 1: store the log-sum-exp
  uint32_t s_kv_seq_len; uint32_t _p17[3];
  uint32_t s_qk_head_dim; uint32_t _p18[3];
  uint32_t s_v_head_dim; uint32_t _p19[3];
  uint32_t s_q_head_num; uint32_t _p20[3];
  uint32_t s_v_Seqs; uint32_t _p21[3];
  uint32_t s_v_Hs; uint32_t _p22[3];
  uint32_t s_v_Bs; uint32_t _p23[3];
  uint32_t s_o_Seqs; uint32_t _p24[3];
  uint32_t s_o_Hs; uint32_t _p25[3];
  uint32_t s_o_Bs; uint32_t _p26[3];
  const void* ptr_qseq; uint32_t _p27[2];      // group mode only
  const void* ptr_kseq; uint32_t _p28[2];
  uint32_t s_lse_Hs; uint32_t _p29[3];         // LSE head stride
  const void* ptr_qseq_padding; uint32_t _p30[2];
  const void* ptr_kseq_padding; uint32_t _p31[2];
};
static_assert(sizeof(FmhaFwdV3Args) == 32 * 16, "fmha_fwd_v3_args: 32 fields of 16 bytes");

// One of the batch-mode kernels. d_qk 128 (fwd_hd128_bf16*.co) or 192 (fwd_hd192_hd128_bf16*.co);
// d_v is 128 for both.
struct KernelChoice {
  int d_qk = 128;
  bool causal = true;
  std::string file() const;    // e.g. "fwd_hd128_bf16_causal.co"
  std::string symbol() const;  // e.g. "_ZN5aiter26fmha_fwd_hd128_bf16_causalE"
  int ts_qo() const { return d_qk == 192 ? 128 : 256; }  // codegen.py FmhaFwdV3Ts
  int ts_kv() const { return d_qk == 192 ? 128 : 64; }
  uint32_t block() const { return d_qk == 192 ? 256 : 512; }
};

// Attention problem in bshd layout, BF16 in and out, contiguous: q (b, s, h, d_qk),
// k (b, s, hk, d_qk), v (b, s, hk, d_v), out (b, s, h, d_v), lse float (b, h, s).
struct Problem {
  int batch = 1, seqlen = 256, heads = 1, heads_k = 1;
  float softmax_scale = 0.0f;
  const uint16_t* q = nullptr;
  const uint16_t* k = nullptr;
  const uint16_t* v = nullptr;
  uint16_t* out = nullptr;
  float* lse = nullptr;
  // Bytes of the readable buffers at q, k, v: the tensor plus any slack the caller gives
  // after it (AITER's prefetch reads a K tile past the end; see test_aiter_fwd.cpp).
  uint64_t q_bytes = 0, k_bytes = 0, v_bytes = 0;
};

// $ZYFA_AITER_DIR, else <source>/.cache/aiter (the fetch script's default).
std::string cache_dir();

// The kernel's code object image from `dir`; empty (and *error set) when it cannot be read.
std::vector<uint8_t> read_code_object(const std::string& dir, const KernelChoice& kernel, std::string* error);

// The launch geometry of AITER's codegen.py launch_kernel for this problem.
void launch_geometry(const KernelChoice& kernel, const Problem& p, uint32_t grid[3], uint32_t block[3]);

// Runs one dispatch of the kernel from `dir`; the result carries faults and warnings.
emu::DispatchResult run(const std::string& dir, const KernelChoice& kernel, const Problem& p,
                        const emu::DispatchOptions& options);

}  // namespace zyfa::aiter
