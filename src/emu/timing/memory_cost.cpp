#include "emu/timing/memory_cost.h"

#include <algorithm>
#include <array>

#include "emu/core/wave.h"
#include "emu/timing/mi355x.h"

namespace zyfa::emu::timing {
namespace {

// ds_read_b128 on gfx950 serves 16 lanes per phase in this grouping (HipKittens,
// analysis/paper_experiments/phases/ds_read_b128/phase_results.txt): lanes 0-3, 12-15, 20-27
// together, then 4-11, 16-19, 28-31; the same for lanes 32-63.
constexpr std::array<std::array<uint8_t, 16>, 4> kB128Phases = {{
    {0, 1, 2, 3, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25, 26, 27},
    {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 28, 29, 30, 31},
    {32, 33, 34, 35, 44, 45, 46, 47, 52, 53, 54, 55, 56, 57, 58, 59},
    {36, 37, 38, 39, 40, 41, 42, 43, 48, 49, 50, 51, 60, 61, 62, 63},
}};

// Clocks of one phase: the most distinct dwords any bank serves.
uint32_t phase_cycles(const uint64_t* addr, int dwords, uint64_t exec, const uint8_t* lanes, int nlanes) {
  std::array<uint64_t, 256> dw;
  int n = 0;
  for (int i = 0; i < nlanes; ++i) {
    const int l = lanes[i];
    if (!((exec >> l) & 1)) continue;
    for (int k = 0; k < dwords; ++k) dw[n++] = addr[l * 4 + k] >> 2;
  }
  if (n == 0) return 0;
  std::sort(dw.begin(), dw.begin() + n);
  n = int(std::unique(dw.begin(), dw.begin() + n) - dw.begin());
  std::array<uint8_t, kLdsBanks> per_bank{};
  uint32_t worst = 0;
  for (int i = 0; i < n; ++i) worst = std::max<uint32_t>(worst, ++per_bank[dw[i] % kLdsBanks]);
  return worst;
}

}  // namespace

uint32_t lds_bank_cycles(const uint64_t* addr, int dwords, uint64_t exec) {
  uint32_t total = 0;
  if (dwords >= 3) {
    for (const auto& p : kB128Phases) total += phase_cycles(addr, dwords, exec, p.data(), 16);
  } else {
    const int per_phase = dwords == 2 ? 32 : 64;
    std::array<uint8_t, 64> lanes;
    for (int l = 0; l < 64; ++l) lanes[l] = uint8_t(l);
    for (int first = 0; first < 64; first += per_phase)
      total += phase_cycles(addr, dwords, exec, lanes.data() + first, per_phase);
  }
  return std::max<uint32_t>(total, 1);
}

void record_memory_cost(const PendingOp& op, uint64_t origin, IssueRecord* rec, uint64_t index,
                        std::vector<uint64_t>* out) {
  const int active = __builtin_popcountll(op.exec);
  switch (op.kind) {
    case PendingOp::kLdsLoad:
    case PendingOp::kLdsStore:
    case PendingOp::kLdsAtomic: {
      rec->bytes = uint16_t(active * op.dwords * 4);
      // Permutes and swizzles (no LDS address; valid[] cleared) move one dword per lane
      // through the crossbar: one phase.
      if (op.lds_base == 0xFFFFFFFFu && op.kind == PendingOp::kLdsLoad) rec->cost = 1;
      else rec->cost = uint16_t(lds_bank_cycles(op.addr.data(), std::min<int>(op.dwords, 4), op.exec));
      return;
    }
    case PendingOp::kGlobalLoad:
    case PendingOp::kGlobalStore:
    case PendingOp::kGlobalLoadToLds: {
      std::array<uint64_t, 256> lines;
      int n = 0;
      for (int l = 0; l < 64; ++l) {
        if (!((op.exec >> l) & 1)) continue;
        for (int k = 0; k < op.dwords; ++k)
          if (op.valid[l * 4 + k] & 1) lines[n++] = (op.addr[l * 4 + k] - origin) / kCacheLineBytes;
      }
      std::sort(lines.begin(), lines.begin() + n);
      n = int(std::unique(lines.begin(), lines.begin() + n) - lines.begin());
      rec->cost = uint16_t(n);
      out->push_back(index);
      out->push_back(origin);
      for (int i = 0; i < n; ++i) out->push_back(origin + lines[i] * kCacheLineBytes);
      rec->bytes = uint16_t(active * op.dwords * op.elem_bytes);
      return;
    }
    default:
      return;  // scalar loads: fixed latency in the model
  }
}

}  // namespace zyfa::emu::timing
