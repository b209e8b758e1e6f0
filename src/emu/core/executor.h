// Executes the waves of one workgroup. Instruction families live in their own files
// (exec_salu.cpp, exec_valu.cpp, exec_mfma.cpp, exec_smem.cpp, exec_vmem.cpp, exec_lds.cpp);
// this class holds what they share: operand access, the in-flight memory model and the
// hazard checks.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emu/core/instruction.h"
#include "emu/core/wave.h"
#include "emu/emulator.h"
#include "emu/loader/code_object.h"
#include "emu/timing/cycle_hazards.h"

namespace zyfa::emu {

// Register numbering of the scoreboards: VGPR n = n, AGPR n = 256 + n, SGPR n = 512 + n.
constexpr uint32_t kAgprBase = 256, kSgprBase = 512;

// What every workgroup of a dispatch shares (read-only during execution).
struct DispatchContext {
  const LoadedCodeObject* object = nullptr;
  const KernelInfo* kernel = nullptr;
  std::vector<MemoryRegion> regions;  // sorted by base
  uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
  uint32_t lds_bytes = 0;
  uint64_t kernarg_address = 0, dispatch_ptr = 0;
  uint64_t seed = 1;
  uint64_t max_instructions_per_wave = 0;
  RuleSet rules = RuleSet::kStrict;  // resolved (never kDefault)
  TraceOptions trace;
  bool order_checks = true;  // DispatchOptions::order_checks
};

// The wait-state rules that the hardware rule set relaxes (hazards.cpp, docs/emulator.md).
enum class RelaxedRule { kM0LdsDma, kValuSgprValuRead, kPermlaneSwapAfterSwap };

class Executor {
 public:
  Executor(const DispatchContext& ctx, Workgroup& wg) : ctx_(ctx), wg_(wg) {}
  // Runs every wave of the workgroup to s_endpgm; throws KernelFault.
  void run();

  // ---- shared helpers (used by the exec_*.cpp files) ----
  [[noreturn]] void fault(const std::string& what) const;
  // " [at pc 0x.. 'name', workgroup (x,y,z) wave n]": where a fault happens, as fault() says it.
  std::string fault_location() const;
  Wave& wave() { return *w_; }
  const Instruction& inst() const { return *in_; }
  Rng& rng() { return wg_.rng; }

  // Scalar operands (SOP*, SMEM offsets, VALU scalar sources).
  uint32_t sread(uint16_t code);
  uint64_t sread64(uint16_t code, bool f64 = false);
  void swrite(uint16_t code, uint32_t value);
  void swrite64(uint16_t code, uint64_t value);
  // Vector operands: pointer to 64 lane values (a VGPR row, or `tmp` filled with a scalar).
  enum class OpType { kB32, kF32, kF16, kF64, kB64 };
  const uint32_t* vsrc(uint16_t code, uint32_t* tmp, OpType t = OpType::kB32);
  // 64-bit vector operands as 64 values.
  void vsrc64(uint16_t code, uint64_t* out, OpType t = OpType::kB64);
  uint32_t* vdst(uint32_t vgpr);     // checks range, pending loads and MFMA hazards
  uint32_t* adst(uint32_t agpr);
  const uint32_t* vreg_read(uint32_t vgpr);  // checks range and pending loads
  const uint32_t* areg_read(uint32_t agpr);

  // Scoreboard.
  void check_pending(uint32_t reg, const char* role);
  void mark_pending(PendingOp* op, uint32_t reg);
  void clear_pending(uint32_t reg);
  // Faults unless registers first..first+count-1 (VGPR n, or 256 + AGPR n) all lie in the
  // allocation of their kind: a range may not run past v255/a255 into another kind.
  void check_reg_range(uint32_t first, uint32_t count, const char* role);
  PendingOp* new_op(PendingOp::Kind kind, Counter counter);
  void issue(PendingOp* op);          // enqueue; a full counter retires the oldest first
  void land(PendingOp* op);           // performs the memory side and writes registers
  void retire(PendingOp* op);         // lands it if needed; its registers become readable
  void land_oldest(Counter c);        // the oldest not-yet-landed op (SMEM: any)
  void retire_oldest(Counter c);
  void wait_counts(uint32_t vmcnt, uint32_t lgkmcnt);
  void drain_all();
  void maybe_complete_random();
  // Cross-wave ordering at barriers and loads to LDS (memory_order.cpp).
  void record_unfenced_writes();
  // Under the hardware rules (lds_dma_order.cpp): a conflict between the access being issued
  // and an earlier one of wave `other` that no barrier orders, where one of the two is a load
  // to LDS, is ordered as issued, recorded as a claim for the timing replay, and true is
  // returned; false (the caller faults) otherwise. The earlier access is named by the race
  // detector's tags (`byte`, whether the other access writes) or by an unfenced access.
  bool order_lds_race(uint32_t other, uint64_t byte, bool other_writes);
  bool order_unfenced(const UnfencedAccess& u);
  // Appends the op being issued to the interval's LDS access log (hardware rules only).
  void log_lds_access(const PendingOp& op);
  // Sets the op's footprint (PendingOp::box_*) and checks it; before the op is queued.
  void check_memory_order(PendingOp& op);

  // Memory.
  const MemoryRegion* region_for(uint64_t addr, uint64_t bytes, bool write) const;
  void check_global(uint64_t addr, uint32_t bytes, bool write, int lane);
  uint8_t* lds_ptr(uint64_t offset, uint32_t bytes, int lane, bool write) {
    if (offset + bytes > wg_.lds.size()) lds_out_of_range(offset, bytes, lane, write);
    return wg_.lds.data() + offset;
  }
  uint64_t lds_bytes() const { return wg_.lds.size(); }
  [[noreturn]] void lds_out_of_range(uint64_t offset, uint32_t bytes, int lane, bool write) const;

  // Hazards (wait states, see hazards.cpp).
  void hazard_check_read_vgpr(uint32_t reg, bool is_mfma_src_ab, bool is_vmem_or_ds);
  // A VALU (incl. MFMA) reading SGPR `code` (and code+1 for 64-bit reads) written by a VALU.
  void hazard_check_valu_sgpr_read(uint16_t code, int count = 1);
  // A VALU writing a VGPR that a > 64-bit VMEM store issued just before still reads.
  void hazard_check_store_data_overwrite(uint32_t vgpr);
  void hazard_before_instruction();
  // `given` wait states where LLVM asks for more under `rule`: a fault under strict, a warning
  // under hardware (a fault there too below what AMD's shipped code gives). `reg` names the
  // register involved in the message: a scalar operand code (M0, VCC, s<n>), or for the
  // permlane rule a VGPR number.
  void hazard_relaxed(RelaxedRule rule, int64_t given, uint32_t reg);
  // v_permlane16/32_swap reading VGPRs d and s0 (both of which it then writes).
  void hazard_check_permlane_swap(uint32_t d, uint32_t s0);
  // The warnings recorded so far, one per (pc, rule); leaves none behind.
  std::vector<RuleWarning> take_warnings();
  // A VMEM/LDS load whose destination an MFMA still writes or reads as SrcC (at issue).
  void hazard_check_load_destinations(const PendingOp& op);
  // An MFMA wait-state rule (`rule`, timing/cycle_hazards.h) the wave breaks in its own count:
  // `given` of `need` wait states after the MFMA it issued at wave clock `producer`. Under
  // strict the fault `what`; under hardware (with the issue trace recorded) a claim that the
  // timing replay decides after the dispatch (a warning or the fault).
  void hazard_mfma(const char* rule, uint64_t producer, int64_t given, int need, const std::string& what);
  // The SrcC WAR rule for `reg` (the MFMA reading it is still in its window).
  void hazard_mfma_srcc_war(uint32_t reg, const std::string& what);
  // The claims recorded so far, in issue order per wave; leaves none behind.
  std::vector<CycleClaim> take_claims() {
    std::vector<CycleClaim> out;
    out.swap(claims_);
    return out;
  }

  const DispatchContext& ctx() const { return ctx_; }

 private:
  void init_waves();
  bool step(Wave& w);  // executes one instruction; false when the wave cannot continue now
  bool wait_for_load_to_lds(Wave& w, const Instruction& in);
  // The scheduling ticks (instructions of the other waves) a load to LDS takes under the
  // hardware rules: about a global-memory round trip (~500 clocks on the MI355X model) at a
  // few clocks per instruction. Only the emulation's choice of order rests on it; the replay
  // checks that order on the model's clocks (lds_dma_order.cpp).
  static constexpr uint64_t kLoadToLdsTicks = 64;
  void exec_salu();
  void exec_sopp();
  void exec_smem();
  void exec_valu();
  void exec_vop3p();
  void exec_mfma();
  void exec_mubuf();
  void exec_flat();
  void exec_ds();
  void trace_instruction(const Wave& w, const Instruction& in, bool after);

  const DispatchContext& ctx_;
  Workgroup& wg_;
  Wave* w_ = nullptr;
  const Instruction* in_ = nullptr;
  bool branch_taken_ = false;
  mutable const MemoryRegion* last_region_ = nullptr;
  uint64_t next_pc_ = 0;
  std::map<std::pair<uint32_t, int>, RuleWarning> warnings_;  // by (pc, rule)
  std::vector<CycleClaim> claims_;  // hazard_mfma under hardware
  // Per wave of the workgroup: clock (+1) of the last permlane swap that wrote each VGPR.
  std::vector<std::array<uint64_t, 256>> swap_write_clock_;
  // The LDS byte ranges of the op being checked, contiguous ones merged (memory_order.cpp).
  std::vector<LdsRaceShadow::Range> lds_ranges_;
  // The op check_memory_order is checking (lds_dma_order.cpp), and the log entry the last
  // order_lds_race call found per other wave and kind (one instruction meets many dwords).
  PendingOp* checking_ = nullptr;
  const Workgroup::LdsAccess* last_found_[2][16] = {};
  // Claims already made: (first wave, first clock, second wave, second clock).
  std::set<std::array<uint64_t, 4>> lds_order_claimed_;
  bool order_pair(Wave& other, uint64_t seq, uint64_t clock, uint32_t pc, bool other_dma, bool other_write);
  void land_for(Wave& other, PendingOp* op);
  friend struct ValuExec;
  friend struct SaluExec;

 public:
  void set_next_pc(uint64_t pc) { next_pc_ = pc; branch_taken_ = true; }
  uint64_t next_pc() const { return next_pc_; }
};

// Families implemented in exec_*.cpp as free functions over the executor.
void execute_salu(Executor& x);
void execute_sopp(Executor& x);
void execute_smem(Executor& x);
void execute_valu(Executor& x);
void execute_vop3p(Executor& x);
void execute_mfma(Executor& x);
void execute_mubuf(Executor& x);
void execute_flat(Executor& x);
void execute_ds(Executor& x);
void complete_lds_op(Executor& x, PendingOp& op);
void complete_global_op(Executor& x, PendingOp& op);

bool is_transcendental(uint16_t valu);

}  // namespace zyfa::emu
