// One AITER forward problem over the shared attention test data (tests/support): Q, K and V
// copied with K and V given one tile of rows of slack past the end (AITER's look-ahead
// prefetch reads the tile after the last one; docs/emulator.md), poisoned output and LSE, and
// the aiter::Problem pointing at them. Used by the emulator tests and zyfa-aiter-race-order.
#pragma once

#include <cstdint>
#include <vector>

#include "aiter_fmha_v3.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

struct AiterInputs {
  std::vector<uint8_t> q, k, v;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  aiter::Problem problem;  // points into the vectors above (a move keeps their storage)
};

inline AiterInputs aiter_inputs(const AttnConfig& cfg, const AttnData& data, const aiter::KernelChoice& kernel) {
  AiterInputs in;
  const size_t k_row = size_t(cfg.heads_k) * kernel.d_qk * 2, v_row = size_t(cfg.heads_k) * 128 * 2;
  in.q = data.q;
  in.k = data.k;
  in.v = data.v;
  in.k.resize(in.k.size() + size_t(kernel.ts_kv()) * k_row, 0);
  in.v.resize(in.v.size() + size_t(kernel.ts_kv()) * v_row, 0);
  in.out.resize(data.out_count());
  in.lse.resize(data.lse_count());
  poison_bf16(in.out.data(), in.out.size());
  poison_f32(in.lse.data(), in.lse.size());
  aiter::Problem& p = in.problem;
  p.batch = int(cfg.batch);
  p.seqlen = int(cfg.seqlen);
  p.heads = int(cfg.heads);
  p.heads_k = int(cfg.heads_k);
  p.softmax_scale = data.softmax_scale();
  p.q = reinterpret_cast<const uint16_t*>(in.q.data());
  p.k = reinterpret_cast<const uint16_t*>(in.k.data());
  p.v = reinterpret_cast<const uint16_t*>(in.v.data());
  p.q_bytes = in.q.size();
  p.k_bytes = in.k.size();
  p.v_bytes = in.v.size();
  p.out = in.out.data();
  p.lse = in.lse.data();
  return in;
}

}  // namespace zyfa::test
