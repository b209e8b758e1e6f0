// The gfx950 functional emulator's C++ API: run one kernel dispatch of a code object on the
// host, with memory limited to the regions of the call. Used by the emu backend and by the
// zyfa-emu-run tool.
//
// What "strict" means here: memory results land late (randomly, but never later than the
// s_waitcnt that waits for them), reading a register whose load has not been waited for
// stops the kernel, MFMA results read before the documented wait states stop the kernel,
// waves of a workgroup interleave at random instruction boundaries and workgroups run in a
// random order, all driven by `seed`. A correct kernel gives bitwise identical results for
// every seed. See docs/emulator.md.
//
// Rule sets: `strict` (the default, and what this project's own kernels must pass) applies
// every wait-state rule as LLVM's hazard recognizer states it; `hardware` relaxes the rules
// that recognizer states more conservatively than AMD's own shipped gfx950 code relies on
// (their violations become warnings naming the rule, the count given and the count LLVM asks
// for), and decides the wait states after an MFMA in the cycles the MI355X timing model gives
// the wave's issue, other waves on its SIMD included (timing/cycle_hazards.h). docs/emulator.md
// lists each rule with its source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace zyfa::emu {

class LoadedCodeObject;

struct MemoryRegion {
  uint64_t base = 0;
  uint64_t bytes = 0;
  bool writable = false;
  std::string name;  // for diagnostics ("buffer q", "kernarg")
};

struct TraceOptions {
  bool enabled = false;
  uint64_t workgroup = 0;   // linear workgroup id
  uint32_t wave = 0;        // wave within the workgroup
  bool registers = false;   // dump the registers an instruction writes after it executes
  std::ostream* out = nullptr;
};

enum class RuleSet {
  kDefault,   // the ZYFA_EMU_RULES environment variable ("strict" or "hardware"), else strict
  kStrict,
  kHardware,
};
// "strict" / "hardware" -> the rule set; false for anything else.
bool parse_rule_set(std::string_view name, RuleSet* out);
const char* rule_set_name(RuleSet rules);

// Timing traces (src/emu/timing): per wave, every instruction it issued, in order. For memory
// instructions `cost` and `bytes` describe the lane addresses (timing/memory_cost.h).
struct IssueRecord {
  uint32_t pc = 0;
  uint16_t cost = 0;   // LDS: bank cycles; VMEM: 128-byte lines touched
  uint16_t bytes = 0;  // bytes moved by the active lanes
};
struct WorkgroupTrace {
  uint64_t linear_id = 0;
  std::vector<std::vector<IssueRecord>> waves;
  // Per wave, for each vector memory instruction in issue order: its index in `waves`, the
  // start of its buffer, then the `cost` 128-byte lines it touches (buffer start + 128 * line).
  std::vector<std::vector<uint64_t>> lines;
};

struct DispatchOptions {
  uint64_t seed = 1;
  RuleSet rules = RuleSet::kDefault;
  unsigned threads = 0;                            // 0: hardware concurrency
  uint64_t max_instructions_per_wave = 1ull << 30;  // a hang becomes a fault
  TraceOptions trace;
  // When set, every workgroup that runs appends its WorkgroupTrace here (in no set order).
  std::vector<WorkgroupTrace>* timing = nullptr;
  // When non-empty, only these linear workgroup ids run (the timing model's sample).
  std::vector<uint64_t> only_workgroups;
  // false: the cross-wave ordering diagnostics (missing wait before s_barrier, LDS races,
  // memory_order.cpp) are skipped. Only for timing runs of code that is not ours to fix and
  // that breaks them (AITER's kernels past S = 256, docs/emulator.md): the timing model needs
  // the instruction stream, not a verdict on the kernel.
  bool order_checks = true;
};

struct Dispatch {
  const LoadedCodeObject* object = nullptr;
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};   // workgroups per dimension
  uint32_t block[3] = {64, 1, 1}; // work-items per workgroup
  uint32_t dynamic_lds_bytes = 0;
  const void* kernarg = nullptr;  // explicit arguments; hidden ones are appended per metadata
  size_t kernarg_size = 0;
  std::vector<MemoryRegion> regions;
};

struct DispatchStats {
  uint64_t workgroups = 0, waves = 0, instructions = 0, lane_instructions = 0;
  // Private segment: bytes per work-item from the kernel descriptor, and the highest private
  // byte any lane of any wave accessed (+1).
  uint32_t scratch_lane_bytes = 0, scratch_used_bytes = 0;
  double seconds = 0;
};

// A wait-state rule of LLVM's that the kernel breaks where the hardware rule set tolerates
// it: one entry per rule and instruction, over every wave of the dispatch.
struct RuleWarning {
  std::string rule;      // the rule's name, e.g. "m0-lds-dma" (docs/emulator.md)
  uint32_t pc = 0;       // byte offset of the consumer instruction in the code section
  std::string instruction;
  int given = 0;         // fewest wait states the kernel gave at this instruction
  int required = 0;      // what LLVM's hazard recognizer asks for
  std::string source;    // where LLVM states the rule
  uint64_t count = 0;    // how many times a wave issued it short
  // MFMA rules decided in elapsed cycles (hardware rules, docs/emulator.md): the least margin,
  // in clocks of the MI355X model, by which the cycles other waves filled on the SIMD covered
  // the wait states the wave itself left out; -1 for the rules counted per wave.
  int64_t slack_cycles = -1;
  // lds-dma-order (hardware rules): no wait states; slack_cycles is the least margin beyond
  // timing::kLdsOrderMarginCycles by which the model ordered the two accesses.
  bool lds_order = false;
  std::string text;      // one line with all of the above
};

struct DispatchResult {
  bool ok = false;
  std::string error;  // the first fault (lowest workgroup id), with kernel, PC, wave, lane
  RuleSet rules = RuleSet::kStrict;    // the rule set the dispatch ran under
  std::vector<RuleWarning> warnings;   // by pc, then rule; empty under strict
  DispatchStats stats;
};

DispatchResult run_dispatch(const Dispatch& dispatch, const DispatchOptions& options);

// Process-wide: while a hook is set, run_dispatch hands it every dispatch whose options record
// no timing trace, instead of running it (zyfa-bench --model: the timing model predicts the
// launches of a zyfa_fwd call). The hook may call run_dispatch itself with a timing trace.
// An empty function removes it.
using DispatchHook = std::function<DispatchResult(const Dispatch&, const DispatchOptions&)>;
void set_dispatch_hook(DispatchHook hook);

}  // namespace zyfa::emu
