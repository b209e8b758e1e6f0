// Cross-wave ordering of memory accesses at s_barrier, and LDS written by loads straight to LDS.
//
// gfx950's s_barrier does not wait for memory operations (LLVM: gfx90a and later have
// FeatureBackOffBarrier), and LDS operations of different waves of a workgroup may be reordered
// relative to each other (LLVM AMDGPUUsage, GFX942 memory model: "s_waitcnt lgkmcnt(0) is
// required to ensure synchronization between LDS operations ... between wavefronts of a
// work-group"); the workgroup-scope release fence before a barrier therefore waits for all of
// the wave's outstanding memory operations. An access its wave has not waited for (vmcnt /
// lgkmcnt) when the barrier releases may still be in flight after it: a write may land after
// another wave's read of the same bytes (RAW) or write (WAW), and a read may return data that
// another wave wrote after the barrier (WAR). The random landing of the in-flight model shows
// such a bug only for some interleavings; this check makes it deterministic. At each barrier
// release every access still in a wave's queues (landed or not: only s_waitcnt orders it) is
// recorded with its byte ranges; until the next release, another wave of the workgroup writing
// those bytes, or reading bytes of a recorded write, is a fault. The check depends only on
// program order between barriers, never on the interleaving.
//
// A buffer/global load with `lds` writes LDS when it completes (vmcnt), so reading or writing
// that LDS before s_waitcnt vmcnt retires the load is a fault as well (same wave).
//
// Accesses of different waves within one barrier interval (no s_barrier between them) are
// checked at issue by the LDS race detector (lds_race.cpp), which is told of each release.
#include <algorithm>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

struct Range {
  bool lds;
  bool write;
  uint64_t begin, end;
};

bool is_lds_rtn_atomic(uint16_t o) {
  return (o >= op::DS_ADD_RTN_U32 && o <= op::DS_ADD_RTN_F32) || o == op::DS_WRXCHG_RTN_B32;
}

// Byte ranges an operation reads or writes (active, in-range lanes only).
template <typename F>
void for_each_range(const PendingOp& op, F f) {
  if (op.kind == PendingOp::kScalarLoad) return;  // scalar cache reads are not tracked
  const bool permute = op.kind == PendingOp::kLdsLoad && op.lds_base == 0xFFFFFFFFu;
  if (permute) return;  // ds_bpermute/permute/swizzle touch no LDS memory
  for (int l = 0; l < kLanes; ++l) {
    if (!((op.exec >> l) & 1)) continue;
    for (int k = 0; k < op.dwords; ++k) {
      const uint32_t bytes = op.elem_bytes < 4 ? op.elem_bytes : 4;
      const uint64_t a = op.addr[l * 4 + k];
      switch (op.kind) {
        case PendingOp::kGlobalLoad:
          if (op.valid[l * 4 + k]) f(Range{false, false, a, a + bytes});
          break;
        case PendingOp::kGlobalStore:
          if (op.valid[l * 4 + k]) f(Range{false, true, a, a + bytes});
          break;
        case PendingOp::kGlobalLoadToLds: {
          if (op.valid[l * 4 + k]) f(Range{false, false, a, a + bytes});
          const uint64_t lds = uint64_t(op.lds_base) + uint64_t(l) * (op.dwords > 1 ? 16 : 4) + uint64_t(k) * 4;
          f(Range{true, true, lds, lds + 4});
          break;
        }
        case PendingOp::kLdsLoad:
          f(Range{true, is_lds_rtn_atomic(op.op), a, a + bytes});
          break;
        case PendingOp::kLdsStore:
        case PendingOp::kLdsAtomic:
          f(Range{true, true, a, a + bytes});
          break;
        default:
          break;
      }
    }
  }
}

const char* space(bool lds) { return lds ? "LDS" : "global memory"; }

}  // namespace

void Executor::record_unfenced_writes() {
  wg_.lds_race.next_epoch();
  for (const UnfencedAccess& u : wg_.unfenced) {
    PendingOp* op = u.op;
    op->pinned = false;
    if (op->released) {  // retired since the last barrier: its wave may reuse it now
      op->released = false;
      wg_.waves[u.wave]->free_ops.push_back(op);
    }
  }
  wg_.unfenced.clear();
  wg_.unfenced_in[0].clear();
  wg_.unfenced_in[1].clear();
  wg_.lds_log.clear();
  for (auto& wp : wg_.waves) {
    const Wave& w = *wp;
    for (const auto* queue : {&w.vm_queue, &w.lds_queue}) {
      for (PendingOp* op : *queue) {
        // The footprint was set at issue (check_memory_order): an empty one touches nothing.
        if (op->box_lo[0] >= op->box_hi[0] && op->box_lo[1] >= op->box_hi[1]) continue;
        wg_.unfenced.emplace_back();
        UnfencedAccess& u = wg_.unfenced.back();
        u.wave = w.id_in_group;
        u.op = op;
        op->pinned = true;
        for (int space = 0; space < 2; ++space) {
          u.box_lo[space] = op->box_lo[space];
          u.box_hi[space] = op->box_hi[space];
          u.box_write[space] = op->box_write[space];
          if (u.box_lo[space] < u.box_hi[space])
            wg_.unfenced_in[space].push_back(static_cast<uint32_t>(wg_.unfenced.size() - 1));
        }
      }
    }
  }
}

void Executor::check_memory_order(PendingOp& op) {
  Wave& w = *w_;
  checking_ = &op;
  if (ctx_.rules == RuleSet::kHardware)  // lds_dma_order.cpp
    for (auto& row : last_found_)
      for (auto& f : row) f = nullptr;
  // One pass over the lanes: the footprint per space, and the LDS ranges with contiguous
  // ones merged (same bytes in the same order, so the race detector sees what it would see
  // range by range).
  // (A DS issue sets its LDS footprint itself: lds_box_known.)
  op.box_lo[0] = ~0ull;
  op.box_hi[0] = 0;
  if (!op.lds_box_known) {
    op.box_lo[1] = ~0ull;
    op.box_hi[1] = 0;
  }
  op.box_write[0] = op.box_write[1] = false;
  lds_ranges_.clear();
  const bool permute = op.kind == PendingOp::kLdsLoad && op.lds_base == 0xFFFFFFFFu;
  // Races within the barrier interval; a single wave has nobody to race with. Atomics are
  // meant to be concurrent and are not tracked.
  const bool atomic = op.kind == PendingOp::kLdsLoad && is_lds_rtn_atomic(op.op);
  const bool race_checked = (op.kind == PendingOp::kLdsLoad || op.kind == PendingOp::kLdsStore ||
                             op.kind == PendingOp::kGlobalLoadToLds) &&
                            !atomic && !permute && wg_.waves.size() > 1;
  if ((op.kind == PendingOp::kLdsLoad || op.kind == PendingOp::kLdsStore || op.kind == PendingOp::kLdsAtomic) &&
      !permute) {
    // DS operations, the bulk of the calls: the footprint without for_each_range's
    // per-element dispatch, and the race check of the whole instruction at once; the ranges
    // (the same as for_each_range gives, contiguous ones merged) only when that cannot decide.
    const bool write = op.kind != PendingOp::kLdsLoad || is_lds_rtn_atomic(op.op);
    const uint64_t bytes = op.elem_bytes < 4 ? op.elem_bytes : 4;
    uint64_t lo = op.box_lo[1], hi = op.box_hi[1];
    if (!op.lds_box_known) {
      lo = ~0ull;
      hi = 0;
      for (uint64_t m = op.exec; m; m &= m - 1) {
        const uint64_t* la = &op.addr[__builtin_ctzll(m) * 4];
        for (int k = 0; k < op.dwords; ++k) {
          lo = std::min(lo, la[k]);
          hi = std::max(hi, la[k] + bytes);
        }
      }
    }
    op.box_lo[1] = lo;
    op.box_hi[1] = hi;
    op.box_write[1] = write && hi > lo;
    if (race_checked && hi > lo &&
        !(bytes == 4 && wg_.lds_race.try_whole_dwords(wg_.lds.size(), w.id_in_group, op.pc, op.addr.data(), op.exec,
                                                      op.dwords, write, lo, hi, op.lds_run, op.lds_aligned))) {
      const auto add = [&](uint64_t a, uint64_t e) {
        if (!lds_ranges_.empty() && lds_ranges_.back().end == a)
          lds_ranges_.back().end = e;
        else
          lds_ranges_.push_back({a, e, write});
      };
      for (uint64_t m = op.exec; m; m &= m - 1) {
        const uint64_t* la = &op.addr[__builtin_ctzll(m) * 4];
        // A lane's dwords are usually consecutive (ds_read_b64/b128): one range.
        bool consecutive = bytes == 4;
        for (int k = 1; k < op.dwords; ++k) consecutive &= la[k] == la[0] + 4 * uint64_t(k);
        if (consecutive) {
          add(la[0], la[0] + 4 * uint64_t(op.dwords));
          continue;
        }
        for (int k = 0; k < op.dwords; ++k) add(la[k], la[k] + bytes);
      }
      wg_.lds_race.access(*this, wg_.lds.size(), w.id_in_group, op.pc, lds_ranges_.data(), lds_ranges_.size());
    }
  } else if (op.kind == PendingOp::kGlobalLoad || op.kind == PendingOp::kGlobalStore) {
    // Global loads and stores: the footprint of the valid elements only (for_each_range's
    // ranges without its per-element dispatch; nothing in LDS).
    const uint64_t bytes = op.elem_bytes < 4 ? op.elem_bytes : 4;
    uint64_t lo = ~0ull, hi = 0;
    for (uint64_t m = op.exec; m; m &= m - 1) {
      const int l = __builtin_ctzll(m);
      for (int k = 0; k < op.dwords; ++k) {
        if (!op.valid[l * 4 + k]) continue;
        lo = std::min(lo, op.addr[l * 4 + k]);
        hi = std::max(hi, op.addr[l * 4 + k] + bytes);
      }
    }
    op.box_lo[0] = lo;
    op.box_hi[0] = hi;
    op.box_write[0] = op.kind == PendingOp::kGlobalStore && hi > lo;
  } else {
    for_each_range(op, [&](const Range& r) {
      op.box_lo[r.lds] = std::min(op.box_lo[r.lds], r.begin);
      op.box_hi[r.lds] = std::max(op.box_hi[r.lds], r.end);
      op.box_write[r.lds] |= r.write;
      if (!r.lds) return;
      if (!lds_ranges_.empty() && lds_ranges_.back().end == r.begin && lds_ranges_.back().write == r.write)
        lds_ranges_.back().end = r.end;
      else
        lds_ranges_.push_back({r.begin, r.end, r.write});
    });
    if (race_checked && !lds_ranges_.empty())
      wg_.lds_race.access(*this, wg_.lds.size(), w.id_in_group, op.pc, lds_ranges_.data(), lds_ranges_.size());
  }
  log_lds_access(op);
  const auto overlaps = [](uint64_t lo0, uint64_t hi0, uint64_t lo1, uint64_t hi1) { return lo0 < hi1 && lo1 < hi0; };

  // LDS written by this wave's own loads-to-LDS still in flight. Pairs whose footprints are
  // apart cannot overlap; the others are compared range by range.
  const bool touches_lds = op.kind == PendingOp::kLdsLoad || op.kind == PendingOp::kLdsStore ||
                           op.kind == PendingOp::kLdsAtomic || op.kind == PendingOp::kGlobalLoadToLds;
  if (touches_lds && w.lds_dma_in_flight) {
    for (const PendingOp* dma : w.vm_queue) {
      if (dma->kind != PendingOp::kGlobalLoadToLds || dma == &op) continue;
      if (!overlaps(dma->box_lo[1], dma->box_hi[1], op.box_lo[1], op.box_hi[1])) continue;
      for_each_range(*dma, [&](const Range& d) {
        if (!d.lds) return;
        for_each_range(op, [&](const Range& r) {
          if (r.lds && r.begin < d.end && d.begin < r.end)
            fault(fmt::format("LDS bytes 0x{:x}..0x{:x} are written by the load to LDS at pc 0x{:x}, which has not "
                              "been waited for (s_waitcnt vmcnt) before this access",
                              d.begin, d.end - 1, dma->pc));
        });
      });
    }
  }
  if (wg_.unfenced.empty()) return;
  // Only an access of another wave whose footprint overlaps this one in the same space, one
  // of the two writing there, can conflict; without one the byte ranges need no look.
  bool candidate = false;
  for (int s = 0; s < 2 && !candidate; ++s) {
    if (op.box_lo[s] >= op.box_hi[s]) continue;
    for (const uint32_t i : wg_.unfenced_in[s]) {
      const UnfencedAccess& u = wg_.unfenced[i];
      candidate |= u.wave != w.id_in_group && (op.box_write[s] || u.box_write[s]) &&
                   overlaps(u.box_lo[s], u.box_hi[s], op.box_lo[s], op.box_hi[s]);
    }
  }
  if (!candidate) return;
  for (UnfencedAccess& u : wg_.unfenced) {
    if (u.wave == w.id_in_group || u.listed) continue;
    for_each_range(*u.op, [&](const Range& r) { u.ranges.push_back({r.lds, r.write, r.begin, r.end}); });
    u.listed = true;
  }
  for_each_range(op, [&](const Range& r) {
    for (const UnfencedAccess& u : wg_.unfenced) {
      if (u.wave == w.id_in_group || r.begin >= u.box_hi[r.lds] || u.box_lo[r.lds] >= r.end) continue;
      for (const UnfencedAccess::Bytes& b : u.ranges) {
        if (b.lds != r.lds || r.begin >= b.end || b.begin >= r.end || (!b.write && !r.write)) continue;
        if (r.lds && order_unfenced(u)) break;  // hardware rules: ordered by timing (lds_dma_order.cpp)
        if (b.write)
          fault(fmt::format("{} bytes 0x{:x}..0x{:x} were written by wave {} at pc 0x{:x} without an s_waitcnt "
                            "before the s_barrier; this {} after the barrier may see them before they land "
                            "(missing s_waitcnt before s_barrier)",
                            space(r.lds), b.begin, b.end - 1, u.wave, u.op->pc, r.write ? "write" : "read"));
        fault(fmt::format("{} bytes 0x{:x}..0x{:x} are read by wave {} at pc 0x{:x}, not waited for before the "
                          "s_barrier; this write after the barrier may overtake that read (missing s_waitcnt "
                          "before s_barrier)",
                          space(r.lds), b.begin, b.end - 1, u.wave, u.op->pc));
      }
    }
  });
}

}  // namespace zyfa::emu
