#include "emu/timing/cycle_hazards.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "emu/loader/code_object.h"
#include "emu/timing/classify.h"
#include "emu/timing/cu_model.h"
#include "emu/timing/mi355x.h"
#include "emu/timing/predict.h"

namespace zyfa::emu::timing {

// `need` wait states after an instruction are `need` issue slots between it and the consumer,
// so the consumer may issue need + 1 slots after it at the earliest.
uint64_t cycles_for_wait_states(int need) { return uint64_t(need + 1) * kIssuePeriod; }

namespace {

constexpr uint64_t kNotIssued = UINT64_MAX;

// The trace indices whose issue clocks one wave's claims need, ascending, and the clocks
// (issue, and the span in which the instruction touches memory: IssueObserver).
struct Wanted {
  std::vector<size_t> index;
  std::vector<uint64_t> clock, mem_begin, mem_end;
  size_t next = 0;
};

// Collects the issue clocks of the wanted instructions. The replay issues a wave's trace in
// order, so one cursor per wave suffices; an index the replay passes without issuing keeps
// kNotIssued, and the claim that needs it faults.
class Recorder : public IssueObserver {
 public:
  std::vector<std::vector<Wanted>> wanted;  // [workgroup position in the CU's order][wave]
  void issued(size_t wg, uint32_t wave, size_t index, uint64_t clock, uint64_t mem_begin, uint64_t mem_end) override {
    if (wg >= wanted.size() || wave >= wanted[wg].size()) return;
    Wanted& w = wanted[wg][wave];
    while (w.next < w.index.size() && w.index[w.next] < index) ++w.next;
    if (w.next < w.index.size() && w.index[w.next] == index) {
      w.mem_begin[w.next] = mem_begin;
      w.mem_end[w.next] = mem_end;
      w.clock[w.next++] = clock;
    }
  }
  // which: 0 the issue clock, 1 the first clock of its memory access, 2 the last.
  uint64_t clock_of(size_t wg, uint32_t wave, size_t index, int which = 0) const {
    if (wave >= wanted[wg].size()) return kNotIssued;
    const Wanted& w = wanted[wg][wave];
    const auto it = std::lower_bound(w.index.begin(), w.index.end(), index);
    if (it == w.index.end() || *it != index) return kNotIssued;
    const size_t i = size_t(it - w.index.begin());
    if (w.clock[i] == kNotIssued) return kNotIssued;
    return which == 0 ? w.clock[i] : which == 1 ? w.mem_begin[i] : w.mem_end[i];
  }
};

// Trace index of each wait-state clock in `clocks` (ascending): the executor advances a wave's
// clock by 1 per instruction and by N + 1 for s_nop N (Executor::step), a prefix sum over the
// trace. A clock no instruction started at maps to SIZE_MAX.
std::vector<size_t> indices_of_clocks(const LoadedCodeObject& object, const std::vector<IssueRecord>& trace,
                                      const std::vector<uint64_t>& clocks,
                                      std::unordered_map<uint32_t, uint64_t>& advance_of_pc) {
  std::vector<size_t> out(clocks.size(), SIZE_MAX);
  uint64_t clock = 0;
  size_t j = 0;
  for (size_t i = 0; i < trace.size() && j < clocks.size(); ++i) {
    while (j < clocks.size() && clocks[j] < clock) ++j;
    if (j < clocks.size() && clocks[j] == clock) out[j++] = i;
    auto [it, fresh] = advance_of_pc.try_emplace(trace[i].pc, 1);
    if (fresh) {
      const Instruction* in = object.at(trace[i].pc);
      if (in) {
        const InstInfo k = classify(*in);
        if (k.kind == Kind::kNop) it->second = uint64_t(k.imm) + 1;
      }
    }
    clock += it->second;
  }
  return out;
}

struct Placed {
  const CycleClaim* claim;
  uint64_t workgroup;
  size_t position;  // in the CU's order
  size_t producer, consumer;  // trace indices (SIZE_MAX: no instruction at that clock)
};

std::string lds_order_fault(const KernelInfo& kernel, const CycleClaim& c, uint64_t first_end, uint64_t second_begin,
                            bool issued) {
  if (!issued)
    return fmt::format("kernel {}: {}; under the hardware rules the MI355X model's replay must show that order, but "
                       "it issued no instruction at the clocks of one of the two accesses (rule {}){}",
                       kernel.name, c.what, c.rule, c.where);
  return fmt::format("kernel {}: {}; under the hardware rules too: on the MI355X model the first access is done with "
                     "LDS at clock {} and the second touches it at clock {}, not {} clocks later or more (rule {}){}",
                     kernel.name, c.what, first_end, second_begin, kLdsOrderMarginCycles, c.rule, c.where);
}

std::string cycle_fault(const KernelInfo& kernel, const CycleClaim& c, uint64_t elapsed, bool issued) {
  const uint64_t needed = cycles_for_wait_states(c.need);
  if (!issued)
    return fmt::format("kernel {}: {}; under the hardware rules this needs {} cycles from the MFMA's issue, but the "
                       "MI355X model's replay issued no instruction of this wave at the clocks of the MFMA or of the "
                       "consumer, so nothing shows the cycles (rule {}){}",
                       kernel.name, c.what, needed, c.rule, c.where);
  return fmt::format("kernel {}: {}; under the hardware rules too: {} cycle(s) elapsed on the MI355X model from the "
                     "MFMA's issue to this one's, {} needed ({} wait states of {} cycles after the MFMA's issue "
                     "slot; rule {}){}",
                     kernel.name, c.what, elapsed, needed, c.need, kIssuePeriod, c.rule, c.where);
}

using FaultKey = std::tuple<uint64_t, uint32_t, uint64_t>;
using WarningMap = std::map<std::pair<uint32_t, std::string>, RuleWarning>;

// An lds-dma-order claim: the first access done with LDS (the end of its memory span) at
// least kLdsOrderMarginCycles before the second touches it on the replay.
void decide_lds_order(const KernelInfo& kernel, const CycleClaim& c, const Placed& p, const Recorder& rec,
                      WarningMap& warnings, CycleVerdicts& v, FaultKey& first) {
  const bool placed = p.producer != SIZE_MAX && p.consumer != SIZE_MAX;
  const uint64_t first_end = placed ? rec.clock_of(p.position, c.producer_wave, p.producer, 2) : kNotIssued;
  // A DS access touches LDS while the LDS serves it; a load to LDS writes it when its data
  // return, at the end of its span.
  const uint64_t second_begin = placed ? rec.clock_of(p.position, c.wave, p.consumer, c.consumer_dma ? 2 : 1) : kNotIssued;
  const bool issued = first_end != kNotIssued && second_begin != kNotIssued;
  if (!issued || second_begin < first_end + kLdsOrderMarginCycles) {
    const FaultKey key{p.workgroup, c.wave, c.consumer_clock};
    if (!v.faulted || key < first) {
      first = key;
      v.faulted = true;
      v.fault = lds_order_fault(kernel, c, first_end, second_begin, issued);
    }
    return;
  }
  RuleWarning& w = warnings[{c.pc, c.rule}];
  const int64_t slack = int64_t(second_begin - first_end - kLdsOrderMarginCycles);
  if (w.count == 0) {
    w.rule = c.rule;
    w.pc = c.pc;
    w.instruction = c.instruction;
    w.source = "AMDGPUUsage GFX942 memory model (LDS of different waves ordered by s_waitcnt and s_barrier only), "
               "decided on the MI355X model's clocks";
    w.slack_cycles = slack;
    w.lds_order = true;
  }
  w.slack_cycles = std::min(w.slack_cycles, slack);
  ++w.count;
}

}  // namespace

CycleVerdicts decide_cycle_claims(const LoadedCodeObject& object, const KernelInfo& kernel, uint32_t lds_bytes,
                                  const std::vector<const WorkgroupTrace*>& traces,
                                  const std::map<uint64_t, std::vector<CycleClaim>>& claims) {
  CycleVerdicts v;
  std::map<int, std::vector<const WorkgroupTrace*>> cus;  // the CUs to replay, with their workgroups
  for (const auto& [id, list] : claims)
    if (!list.empty()) cus[cu_of_workgroup(id)];
  for (const WorkgroupTrace* t : traces) {
    auto it = cus.find(cu_of_workgroup(t->linear_id));
    if (it != cus.end()) it->second.push_back(t);
  }
  std::unordered_map<uint32_t, uint64_t> advance_of_pc;
  std::map<std::pair<uint32_t, std::string>, RuleWarning> warnings;
  // The first fault in workgroup, wave, clock order (the order the dispatch reports faults in).
  std::tuple<uint64_t, uint32_t, uint64_t> first{UINT64_MAX, 0, 0};

  for (auto& [cu, order] : cus) {
    std::sort(order.begin(), order.end(),
              [](const WorkgroupTrace* a, const WorkgroupTrace* b) { return a->linear_id < b->linear_id; });
    Recorder rec;
    rec.wanted.resize(order.size());
    std::vector<Placed> placed;
    for (size_t pos = 0; pos < order.size(); ++pos) {
      const WorkgroupTrace& t = *order[pos];
      auto found = claims.find(t.linear_id);
      if (found == claims.end()) continue;
      rec.wanted[pos].resize(t.waves.size());
      // Per wave: the clocks its claims name, mapped to trace indices in one pass.
      // Per wave: the clocks its claims name (a claim names one clock in each of its two waves),
      // mapped to trace indices in one pass.
      std::map<uint32_t, std::set<uint64_t>> clocks_of_wave;
      for (const CycleClaim& c : found->second) {
        clocks_of_wave[c.producer_wave].insert(c.producer_clock);
        clocks_of_wave[c.wave].insert(c.consumer_clock);
      }
      std::map<uint32_t, std::pair<std::vector<uint64_t>, std::vector<size_t>>> index_map;
      for (auto& [wave, set] : clocks_of_wave) {
        std::vector<uint64_t> clocks(set.begin(), set.end());
        std::vector<size_t> idx = wave < t.waves.size() ? indices_of_clocks(object, t.waves[wave], clocks, advance_of_pc)
                                                        : std::vector<size_t>(clocks.size(), SIZE_MAX);
        if (wave < rec.wanted[pos].size()) {
          std::set<size_t> wanted_idx;
          for (size_t i : idx)
            if (i != SIZE_MAX) wanted_idx.insert(i);
          Wanted& w = rec.wanted[pos][wave];
          w.index.assign(wanted_idx.begin(), wanted_idx.end());
          w.clock.assign(w.index.size(), kNotIssued);
          w.mem_begin.assign(w.index.size(), kNotIssued);
          w.mem_end.assign(w.index.size(), kNotIssued);
        }
        index_map[wave] = {std::move(clocks), std::move(idx)};
      }
      auto index_of = [&](uint32_t wave, uint64_t clock) {
        const auto& [clocks, idx] = index_map[wave];
        return idx[size_t(std::lower_bound(clocks.begin(), clocks.end(), clock) - clocks.begin())];
      };
      for (const CycleClaim& c : found->second)
        placed.push_back({&c, t.linear_id, pos, index_of(c.producer_wave, c.producer_clock),
                          index_of(c.wave, c.consumer_clock)});
    }
    simulate_cu(object, kernel, lds_bytes, order, &rec);

    for (const Placed& p : placed) {
      const CycleClaim& c = *p.claim;
      if (c.lds_order) {
        decide_lds_order(kernel, c, p, rec, warnings, v, first);
        continue;
      }
      const bool have_both = p.producer != SIZE_MAX && p.consumer != SIZE_MAX && c.wave < rec.wanted[p.position].size();
      const uint64_t t0 = have_both ? rec.clock_of(p.position, c.wave, p.producer) : kNotIssued;
      const uint64_t t1 = have_both ? rec.clock_of(p.position, c.wave, p.consumer) : kNotIssued;
      const bool issued = t0 != kNotIssued && t1 != kNotIssued && t1 >= t0;
      const uint64_t elapsed = issued ? t1 - t0 : 0;
      const uint64_t needed = cycles_for_wait_states(c.need);
      if (!issued || elapsed < needed) {
        const std::tuple<uint64_t, uint32_t, uint64_t> key{p.workgroup, c.wave, c.consumer_clock};
        if (!v.faulted || key < first) {
          first = key;
          v.faulted = true;
          v.fault = cycle_fault(kernel, c, elapsed, issued);
        }
        continue;
      }
      RuleWarning& w = warnings[{c.pc, c.rule}];
      const int64_t slack = int64_t(elapsed - needed);
      if (w.count == 0) {
        w.rule = c.rule;
        w.pc = c.pc;
        w.instruction = c.instruction;
        w.given = c.given;
        w.required = c.need;
        w.source = "GCNHazardRecognizer checkMAIHazards90A/checkMAIVALUHazards, decided in elapsed SIMD cycles";
        w.slack_cycles = slack;
      }
      w.given = std::min(w.given, c.given);
      w.slack_cycles = std::min(w.slack_cycles, slack);
      ++w.count;
    }
  }
  for (auto& [key, w] : warnings) v.warnings.push_back(std::move(w));
  return v;
}

}  // namespace zyfa::emu::timing
