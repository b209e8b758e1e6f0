// MFMA wait-state rules decided in elapsed SIMD cycles under the hardware rule set
// (docs/emulator.md, "Hazards in elapsed cycles").
//
// An MFMA's result, its SrcC reads and its in-flight writes are timed by the matrix pipe, so
// what a "wait state" stands for there is time on the SIMD, not an instruction of the wave:
// with two waves on a SIMD, the other wave's instructions issue in between. The functional
// emulator runs each workgroup long before anything could know those cycles, so it records a
// consumer that is short in its own wave's wait states as a claim; after the dispatch the
// MI355X model (cu_model.h) replays the traces of the CUs that hold claims, and each claim
// becomes a warning (the elapsed cycles cover it, with the slack) or the dispatch's fault.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "emu/emulator.h"

namespace zyfa::emu {

class LoadedCodeObject;
struct KernelInfo;

// A consumer issued fewer of its wave's own wait states after an MFMA than the rule asks for;
// or (lds_order) two LDS accesses of different waves that no barrier orders, one of them a load
// to LDS, whose order the emulation followed and the replay must confirm (lds_dma_order.cpp).
struct CycleClaim {
  const char* rule = "";        // mfma-read, mfma-overwrite, mfma-srcc, mfma-srcc-war, lds-dma-order
  uint32_t wave = 0;            // within the workgroup: the consumer's (the second access's) wave
  uint32_t producer_wave = 0;   // the MFMA's wave (= wave), or the first access's wave
  bool lds_order = false;       // the first access must be done with LDS before the second touches it
  bool consumer_dma = false;    // lds_order: the second access is a load to LDS (it writes on return)
  uint64_t producer_clock = 0;  // wave wait-state clocks (wave.h) of the MFMA and the consumer
  uint64_t consumer_clock = 0;
  int need = 0, given = 0;      // wait states the rule asks for, and the wave's own
  uint32_t pc = 0;              // the consumer
  const char* instruction = "";
  std::string what;             // the per-wave hazard, as strict reports it
  std::string where;            // " [at pc ..., workgroup (x,y,z) wave n]"
};

namespace timing {

// The least margin, in model clocks, by which the replay must order the two accesses of an
// lds-dma-order claim: the first done with LDS, then this many clocks, then the second. The
// model's vector-memory latency is an estimate (docs/timing-model.md), so an order that rests
// on a few clocks of it is not taken as shown.
constexpr uint64_t kLdsOrderMarginCycles = 256;

// Issue clocks of a wait state: the model offers a SIMD one issue slot every kIssuePeriod
// clocks, and `need` wait states between two instructions are `need` slots between them.
uint64_t cycles_for_wait_states(int need);

struct CycleVerdicts {
  std::vector<RuleWarning> warnings;  // confirmed claims, one per (pc, rule); slack_cycles set
  bool faulted = false;
  std::string fault;                  // the first fault: lowest workgroup, then wave, then clock
};

// Replays, on the model, every CU that runs a workgroup with claims (all of the traced
// workgroups the dispatcher gives that CU, in dispatch order) and decides each claim. A claim
// the replay cannot place (no issue clock for its MFMA or its consumer) is a fault: no claim
// passes undecided.
CycleVerdicts decide_cycle_claims(const LoadedCodeObject& object, const KernelInfo& kernel, uint32_t lds_bytes,
                                  const std::vector<const WorkgroupTrace*>& traces,
                                  const std::map<uint64_t, std::vector<CycleClaim>>& claims);

}  // namespace timing
}  // namespace zyfa::emu
