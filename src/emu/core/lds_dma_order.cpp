// LDS accesses of different waves ordered only by timing, where one of them is a load to LDS:
// what AMD's shipped gfx950 kernels rely on, decided under the hardware rules.
//
// A load to LDS (buffer/global load with `lds`) writes LDS when its data return from memory,
// a global-memory round trip after its issue. AMD's attention kernels issue such loads into
// LDS bytes that other waves read in the same barrier interval (a tile's last reads against the
// next tile's loads), or that another wave's load still in flight after a barrier also writes.
// No s_waitcnt or s_barrier orders those pairs (AMDGPUUsage, GFX942 memory model), so under
// strict they are races (lds_race.cpp, memory_order.cpp). On the hardware the round trip
// orders them, and under the hardware rules the emulator decides them the way it decides the
// MFMA wait states (cycle_hazards.h): in two steps that cannot disagree.
//
// 1. The emulation fixes an order and computes with it: the earlier-issued access first. A
//    load to LDS lands no sooner than its own wave's s_waitcnt needs it (Executor::
//    maybe_complete_random lands none early), and at its issue every conflicting access of
//    another wave still in flight lands first; a DS access that meets another wave's load
//    still in flight lands at its issue, before the load. So every access sees the bytes the
//    claimed order gives it.
// 2. Each such pair becomes a claim; after the dispatch the MI355X model replays the CU and
//    the claim holds only if the first access is done with LDS kLdsOrderMarginCycles or more
//    before the second touches it. Otherwise the dispatch faults: nothing passes on an order
//    the model does not show.
//
// Pairs of DS accesses with no load to LDS among them stay races under every rule set.
#include <fmt/format.h>

#include "emu/core/executor.h"

namespace zyfa::emu {

namespace {

PendingOp* in_flight(Wave& w, uint64_t seq, bool dma) {
  for (PendingOp* op : dma ? w.vm_queue : w.lds_queue)
    if (op->seq == seq) return op;
  return nullptr;
}

}  // namespace

void Executor::land_for(Wave& other, PendingOp* op) {
  if (op->landed) return;
  Wave* self = w_;
  w_ = &other;
  land(op);
  w_ = self;
}

void Executor::log_lds_access(const PendingOp& op) {
  if (ctx_.rules != RuleSet::kHardware || op.box_lo[1] >= op.box_hi[1]) return;
  const bool dma = op.kind == PendingOp::kGlobalLoadToLds;
  wg_.lds_log.push_back({w_->id_in_group, op.pc, op.seq, op.issue_clock, op.box_lo[1], op.box_hi[1],
                         op.box_write[1], dma});
}

bool Executor::order_lds_race(uint32_t other, uint64_t byte, bool other_writes) {
  if (ctx_.rules != RuleSet::kHardware || !w_->timing || !checking_ || other >= wg_.waves.size() || other >= 16)
    return false;
  // The tags name the wave and whether it wrote; its latest logged access of that kind over
  // the byte is the one they record.
  const Workgroup::LdsAccess*& cached = last_found_[other_writes][other];
  // Ordered and claimed already for an earlier dword of this instruction.
  if (cached && cached->lo <= byte && byte < cached->hi) return true;
  const Workgroup::LdsAccess* found = nullptr;
  for (auto it = wg_.lds_log.rbegin(); it != wg_.lds_log.rend(); ++it)
    if (it->wave == other && it->write == other_writes && it->lo <= byte && byte < it->hi) {
      found = &*it;
      break;
    }
  if (!found) return false;
  if (!order_pair(*wg_.waves[other], found->seq, found->clock, found->pc, found->dma, found->write)) return false;
  cached = found;
  return true;
}

bool Executor::order_unfenced(const UnfencedAccess& u) {
  if (ctx_.rules != RuleSet::kHardware || !w_->timing || !checking_ || u.wave >= wg_.waves.size()) return false;
  return order_pair(*wg_.waves[u.wave], u.op->seq, u.op->issue_clock, u.op->pc,
                    u.op->kind == PendingOp::kGlobalLoadToLds, u.op->box_write[1]);
}

bool Executor::order_pair(Wave& other, uint64_t seq, uint64_t clock, uint32_t pc, bool other_dma, bool other_write) {
  PendingOp& self = *checking_;
  const bool self_dma = self.kind == PendingOp::kGlobalLoadToLds;
  if (!self_dma && !other_dma) return false;
  PendingOp* theirs = in_flight(other, seq, other_dma);
  // Which of the two comes first, and what the emulation does so that its data follow it.
  bool other_first = true;
  if (self_dma) {
    // This load writes when its data return: after the other access, issued before it.
    if (theirs) land_for(other, theirs);
  } else if (theirs && !theirs->landed) {
    // The other wave's load to LDS is still on its way: this DS access goes first.
    self.land_at_issue = true;
    other_first = false;
  }
  const uint32_t me = w_->id_in_group;
  const std::array<uint64_t, 4> key = other_first ? std::array<uint64_t, 4>{other.id_in_group, clock, me, w_->clock}
                                                  : std::array<uint64_t, 4>{me, w_->clock, other.id_in_group, clock};
  if (!lds_order_claimed_.insert(key).second) return true;
  const char* mine = self_dma ? "load to LDS" : self.box_write[1] ? "LDS write" : "LDS read";
  const char* theirs_kind = other_dma ? "load to LDS" : other_write ? "LDS write" : "LDS read";
  CycleClaim c;
  c.rule = "lds-dma-order";
  c.lds_order = true;
  c.producer_wave = uint32_t(key[0]);
  c.producer_clock = key[1];
  c.wave = uint32_t(key[2]);
  c.consumer_clock = key[3];
  c.consumer_dma = other_first ? self_dma : other_dma;
  c.pc = in_->pc;
  c.instruction = in_->name;
  c.what = other_first
               ? fmt::format("LDS order: this {} of wave {} meets bytes of the {} of wave {} at pc 0x{:x} with no "
                             "s_barrier between; the emulation ordered that one first",
                             mine, me, theirs_kind, other.id_in_group, pc)
               : fmt::format("LDS order: this {} of wave {} meets bytes of the load to LDS of wave {} at pc 0x{:x} "
                             "still in flight, with no s_barrier between; the emulation ordered this one first",
                             mine, me, other.id_in_group, pc);
  c.where = fault_location();
  claims_.push_back(std::move(c));
  return true;
}

}  // namespace zyfa::emu
