// One AITER forward problem over the shared attention test data (tests/support): Q, K and V
// copied with K and V given rows of slack past the end, up to one key tile past the last
// tile (AITER's look-ahead prefetch reads the tile after the last one, whole; docs/emulator.md), poisoned output and LSE, and
// the aiter::Problem pointing at them. Used by the emulator tests.
#pragma once

#include <algorithm>
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
  // Rows of one batch (the tests run one): the tiles that hold keys, and the tile after them.
  const size_t ts = size_t(kernel.ts_kv());
  const size_t rows = (size_t(cfg.seqlen) + ts - 1) / ts * ts + ts;
  in.k.resize(std::max(in.k.size(), rows * k_row), 0);
  in.v.resize(std::max(in.v.size(), rows * v_row), 0);
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
