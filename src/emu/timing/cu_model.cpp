#include "emu/timing/cu_model.h"

#include <algorithm>
#include <deque>
#include <memory>

#include "emu/timing/classify.h"
#include "emu/timing/memory_system.h"
#include "emu/timing/mi355x.h"

namespace zyfa::emu::timing {

const char* stall_name(int s) {
  static const char* names[kStallCount] = {"waitcnt_vm", "waitcnt_lgkm", "barrier", "s_nop", "matrix_pipe_busy",
                                           "valu_pipe_busy", "arbitration", "taken_branch", "s_sleep"};
  return s >= 0 && s < kStallCount ? names[s] : "?";
}

void CuStats::add(const CuStats& o) {
  cycles = std::max(cycles, o.cycles);
  matrix_busy += o.matrix_busy;
  valu_busy += o.valu_busy;
  lds_busy += o.lds_busy;
  vmem_busy += o.vmem_busy;
  wave_cycles += o.wave_cycles;
  instructions += o.instructions;
  mfma_flops_passes += o.mfma_flops_passes;
  hbm_bytes += o.hbm_bytes;
  l2_lines += o.l2_lines;
  l2_own_hits += o.l2_own_hits;
  for (int i = 0; i < kStallCount; ++i) stall[i] += o.stall[i];
}

int workgroups_per_cu(const KernelInfo& k, uint32_t waves, uint32_t lds_bytes) {
  const uint32_t vgprs = std::max<uint32_t>(k.kd.vgpr_count(), 1);
  const uint32_t alloc = (vgprs + kVgprGranule - 1) / kVgprGranule * kVgprGranule;
  const int waves_per_simd = std::min<int>(kMaxWavesPerSimd, int(kVgprsPerSimdLane / alloc));
  const int per_simd_per_wg = int((waves + kSimdsPerCu - 1) / kSimdsPerCu);
  int n = waves_per_simd / std::max(per_simd_per_wg, 1);
  if (lds_bytes) n = std::min<int>(n, int(kLdsBytesPerCu / lds_bytes));
  return std::max(n, 1);
}

namespace {

struct WaveSim {
  const std::vector<IssueRecord>* trace = nullptr;
  size_t i = 0;
  const std::vector<uint64_t>* lines = nullptr;  // WorkgroupTrace::lines of this wave
  size_t li = 0;
  int simd = 0, slot = 0;
  uint64_t ready = 0, start = 0, age = 0;
  uint64_t busy_until = 0;          // last completion of anything it issued
  int prio = 0;
  bool at_barrier = false, done = false;
  uint64_t barrier_since = 0;
  std::deque<uint64_t> vm, lds;     // completion clocks, in order (each queue returns in order)
  std::vector<uint64_t> smem;       // completion clocks (any order)
};

// Clock at which at most `n` of the ops counted are outstanding (ops complete at their clocks).
uint64_t clock_for_count(std::vector<uint64_t>& done_at, size_t n) {
  if (done_at.size() <= n) return 0;
  const size_t k = done_at.size() - n - 1;  // the op that must complete
  std::nth_element(done_at.begin(), done_at.begin() + k, done_at.end());
  return done_at[k];
}

class CuSim {
 public:
  CuSim(const LoadedCodeObject& obj, const KernelInfo& k, uint32_t lds_bytes,
        const std::vector<const WorkgroupTrace*>& order, IssueObserver* observer, const CuMemoryConfig& memory)
      : obj_(obj), order_(order), observer_(observer), mem_(memory) {
    const uint32_t waves = order.empty() ? 1 : uint32_t(order[0]->waves.size());
    slots_ = workgroups_per_cu(k, waves, lds_bytes);
    slot_waves_.resize(size_t(slots_));
    uint32_t max_pc = 0;
    for (const Instruction& in : obj.instructions()) max_pc = std::max(max_pc, in.pc);
    info_.resize(max_pc / 4 + 1);
    known_.assign(max_pc / 4 + 1, 0);
  }

  CuStats run() {
    size_t next_wg = 0;
    int live_slots = 0;
    std::vector<uint64_t> slot_free(size_t(slots_), 0);
    for (int s = 0; s < slots_ && next_wg < order_.size(); ++s, ++next_wg) {
      launch(s, next_wg, kWorkgroupLaunchCycles);
      ++live_slots;
    }
    uint64_t t = 0;
    uint64_t last_issue = 0;
    while (live_slots > 0) {
      const int simd = int(t % kSimdsPerCu);
      if (slot_visit(simd, t)) last_issue = t;
      // Workgroups that ended free their slot for the next one.
      for (int s = 0; s < slots_; ++s) {
        if (slot_waves_[s].empty()) continue;
        bool all_done = true;
        for (auto& w : slot_waves_[s]) all_done &= w->done && w->ready <= t;
        if (!all_done) continue;
        for (auto& w : slot_waves_[s]) stats_.wave_cycles += w->ready - w->start;
        slot_waves_[s].clear();
        --live_slots;
        stats_.cycles = std::max(stats_.cycles, t);
        if (next_wg < order_.size()) {
          launch(s, next_wg++, t + kWorkgroupLaunchCycles);
          ++live_slots;
        }
      }
      // Nothing issued for a whole round: jump to the next clock a wave can act.
      if (t % kSimdsPerCu == kSimdsPerCu - 1 && last_issue + kSimdsPerCu <= t) {
        uint64_t next = UINT64_MAX;
        for (auto& sw : slot_waves_)
          for (auto& w : sw)
            if (!w->at_barrier && (!w->done || w->ready > t)) next = std::min(next, w->ready);
        if (next != UINT64_MAX && next > t + 1) t = next - 1;
      }
      ++t;
    }
    stats_.vmem_busy = mem_.l2_busy;
    stats_.hbm_bytes = mem_.hbm_bytes;
    stats_.l2_lines = mem_.lines;
    stats_.l2_own_hits = mem_.own_hits;
    return stats_;
  }

 private:
  const InstInfo& info(uint32_t pc) {
    const size_t i = pc / 4;
    if (!known_[i]) {
      const Instruction* in = obj_.at(pc);
      info_[i] = in ? classify(*in) : InstInfo{};
      known_[i] = 1;
    }
    return info_[i];
  }

  void launch(int slot, size_t wg_index, uint64_t at) {
    const WorkgroupTrace& wg = *order_[wg_index];
    auto& waves = slot_waves_[slot];
    const int nw = int(wg.waves.size());
    for (int i = 0; i < nw; ++i) {
      auto w = std::make_unique<WaveSim>();
      w->trace = &wg.waves[i];
      if (size_t(i) < wg.lines.size()) w->lines = &wg.lines[i];
      // Waves of a workgroup go round robin over the SIMDs; each resident workgroup starts
      // on the next SIMD so that partly filled SIMDs even out.
      w->simd = (i + slot) % kSimdsPerCu;
      w->slot = slot;
      w->ready = w->start = at;
      w->age = (uint64_t(wg_index) << 16) | uint64_t(i);
      w->done = w->trace->empty();
      waves.push_back(std::move(w));
    }
  }

  // Counts still outstanding at clock t (completed ones leave the in-order queues).
  static void drain(std::deque<uint64_t>& q, uint64_t t) {
    while (!q.empty() && q.front() <= t) q.pop_front();
  }

  // Handles the wave's instructions that take no issue slot (waits, priorities, nops,
  // barriers, the end). Returns true if the next instruction may compete for the slot.
  bool internal(WaveSim& w, uint64_t t) {
    for (;;) {
      if (w.i >= w.trace->size()) {
        w.done = true;
        return false;
      }
      const InstInfo& k = info((*w.trace)[w.i].pc);
      switch (k.kind) {
        case Kind::kWaitcnt: {
          drain(w.vm, t);
          drain(w.lds, t);
          uint64_t wake = 0;
          if (w.vm.size() > k.vmcnt) wake = w.vm[w.vm.size() - k.vmcnt - 1];
          std::vector<uint64_t> lgkm(w.lds.begin(), w.lds.end());
          for (uint64_t c : w.smem) if (c > t) lgkm.push_back(c);
          const uint64_t wake_lgkm = clock_for_count(lgkm, k.lgkmcnt);
          if (wake > t || wake_lgkm > t) {
            if (wake >= wake_lgkm) stats_.stall[kStallWaitVm] += wake - t;
            else stats_.stall[kStallWaitLgkm] += wake_lgkm - t;
            w.ready = std::max(wake, wake_lgkm);
            return false;
          }
          ++w.i;
          continue;
        }
        case Kind::kSetprio:
          w.prio = k.imm;
          ++w.i;
          continue;
        case Kind::kInternal:
          ++w.i;
          continue;
        case Kind::kNop: {
          const uint64_t d = uint64_t(k.imm + 1) * kIssuePeriod;
          stats_.stall[kStallNop] += d;
          w.ready = t + d;
          ++w.i;
          return false;
        }
        case Kind::kSleep: {
          const uint64_t d = uint64_t(k.imm) * kSleepCyclesPerUnit;
          stats_.stall[kStallSleep] += d;
          w.ready = t + std::max<uint64_t>(d, kIssuePeriod);
          ++w.i;
          return false;
        }
        case Kind::kBarrier: {
          ++w.i;
          w.at_barrier = true;
          w.barrier_since = t;
          release_barrier(w.slot, t);
          return false;
        }
        case Kind::kEndpgm:
          ++w.i;
          w.done = true;
          // The wave's slot frees once its matrix results and memory operations are done.
          w.ready = std::max(t, w.busy_until);
          // A workgroup with waves still at a barrier: those no longer wait for this one.
          release_barrier(w.slot, t);
          return false;
        default:
          return true;
      }
    }
  }

  void release_barrier(int slot, uint64_t t) {
    bool any = false;
    for (auto& o : slot_waves_[slot]) {
      if (o->done) continue;
      if (!o->at_barrier) return;
      any = true;
    }
    if (!any) return;
    for (auto& o : slot_waves_[slot]) {
      if (o->done) continue;
      o->at_barrier = false;
      stats_.stall[kStallBarrier] += t + kBarrierCycles - o->barrier_since;
      o->ready = t + kBarrierCycles;
    }
  }

  // One issue slot of SIMD `simd` at clock t. Returns whether anything issued.
  bool slot_visit(int simd, uint64_t t) {
    cand_.clear();
    for (auto& sw : slot_waves_)
      for (auto& w : sw) {
        if (w->simd != simd || w->done || w->at_barrier || w->ready > t) continue;
        if (internal(*w, t)) cand_.push_back(w.get());
      }
    if (cand_.empty()) return false;
    std::sort(cand_.begin(), cand_.end(), [](const WaveSim* a, const WaveSim* b) {
      return a->prio != b->prio ? a->prio > b->prio : a->age < b->age;
    });
    bool used[6] = {};
    bool issued = false;
    Pipes& p = pipes_[simd];
    for (WaveSim* w : cand_) {
      const IssueRecord& r = (*w->trace)[w->i];
      const InstInfo& k = info(r.pc);
      const int cat = int(k.category);
      if (used[cat]) {
        stats_.stall[kStallArbitration] += kIssuePeriod;
        continue;
      }
      if (k.category == Category::kValu) {
        if (k.kind == Kind::kMfma && p.matrix_free > t) {
          stats_.stall[kStallMatrixBusy] += kIssuePeriod;
          continue;
        }
        if (p.valu_free > t) {
          stats_.stall[kStallValuBusy] += kIssuePeriod;
          continue;
        }
      }
      used[cat] = true;
      issued = true;
      issue(*w, r, k, t);
    }
    return issued;
  }

  void issue(WaveSim& w, const IssueRecord& r, const InstInfo& k, uint64_t t) {
    Pipes& p = pipes_[w.simd];
    ++stats_.instructions;
    uint64_t mem_begin = t, mem_end = t;  // when it touches memory (IssueObserver)
    w.ready = t + kIssuePeriod;
    switch (k.kind) {
      case Kind::kMfma:
        p.matrix_free = t + uint64_t(k.passes) * kMfmaCyclesPerPass;
        w.busy_until = std::max(w.busy_until, p.matrix_free);
        stats_.matrix_busy += uint64_t(k.passes) * kMfmaCyclesPerPass;
        stats_.mfma_flops_passes += k.passes;
        p.valu_free = t + k.valu_cycles;
        stats_.valu_busy += k.valu_cycles;
        break;
      case Kind::kValu:
      case Kind::kTrans:
        p.valu_free = t + k.valu_cycles;
        stats_.valu_busy += k.valu_cycles;
        break;
      case Kind::kSmem:
        w.smem.erase(std::remove_if(w.smem.begin(), w.smem.end(), [&](uint64_t c) { return c <= t; }), w.smem.end());
        w.smem.push_back(t + kSmemLatency);
        break;
      case Kind::kLds: {
        const uint64_t start = std::max(t, lds_free_);
        lds_free_ = start + r.cost;
        stats_.lds_busy += r.cost;
        uint64_t done = start + r.cost + kLdsLatency;
        mem_begin = start;
        mem_end = start + r.cost;
        if (!w.lds.empty()) done = std::max(done, w.lds.back());
        w.lds.push_back(done);
        w.busy_until = std::max(w.busy_until, done);
        break;
      }
      case Kind::kVmemLoad:
      case Kind::kVmemStore:
      case Kind::kVmemToLds: {
        VmemAccess a;
        a.store = k.kind == Kind::kVmemStore;
        a.line_count = r.cost;
        a.bytes = r.bytes;
        if (w.lines && w.li + 1 < w.lines->size() && (*w.lines)[w.li] == w.i) {
          a.origin = (*w.lines)[w.li + 1];
          a.lines = w.lines->data() + w.li + 2;
          a.known = r.cost;
          w.li += 2 + r.cost;
        }
        const VmemTiming m = mem_.access(t, a);
        uint64_t done = m.done;
        if (k.kind == Kind::kVmemToLds) {
          // The returning data is written into LDS at 256 bytes per clock: its share of the
          // LDS is taken now (reserving the LDS at the return clock would hold up every
          // access queued in between, which the hardware interleaves).
          const uint64_t lds = std::max<uint64_t>(1, r.bytes / 256);
          lds_free_ = std::max(lds_free_, t) + lds;
          stats_.lds_busy += lds;
        }
        if (!w.vm.empty()) done = std::max(done, w.vm.back());
        mem_begin = k.kind == Kind::kVmemToLds ? done : m.start;  // a load to LDS writes it on return
        mem_end = done;
        w.vm.push_back(done);
        w.busy_until = std::max(w.busy_until, done);
        break;
      }
      case Kind::kBranch: {
        const bool taken = w.i + 1 < w.trace->size() && (*w.trace)[w.i + 1].pc != r.pc + k.size;
        if (taken) {
          w.ready += kTakenBranchCycles;
          stats_.stall[kStallBranch] += kTakenBranchCycles;
        }
        break;
      }
      default:
        break;
    }
    if (observer_) observer_->issued(size_t(w.age >> 16), uint32_t(w.age & 0xFFFF), w.i, t, mem_begin, mem_end);
    ++w.i;
  }

  struct Pipes {
    uint64_t valu_free = 0, matrix_free = 0;
  };
  const LoadedCodeObject& obj_;
  const std::vector<const WorkgroupTrace*>& order_;
  IssueObserver* observer_ = nullptr;
  int slots_ = 1;
  std::vector<std::vector<std::unique_ptr<WaveSim>>> slot_waves_;
  std::vector<InstInfo> info_;
  std::vector<uint8_t> known_;
  std::vector<WaveSim*> cand_;
  Pipes pipes_[kSimdsPerCu];
  CuMemory mem_;
  uint64_t lds_free_ = 0;
  CuStats stats_;
};

}  // namespace

CuStats simulate_cu(const LoadedCodeObject& object, const KernelInfo& kernel, uint32_t lds_bytes,
                    const std::vector<const WorkgroupTrace*>& order, IssueObserver* observer,
                    const CuMemoryConfig& memory) {
  CuSim sim(object, kernel, lds_bytes, order, observer, memory);
  return sim.run();
}

}  // namespace zyfa::emu::timing
