// Software-managed dependency hazards of gfx950 that the hardware does not interlock.
// A consumer issued before the required number of wait states (instructions of the wave in
// between, s_nop N counting N+1) is a kernel fault.
//
// Sources: LLVM GCNHazardRecognizer.cpp (checkMAIHazards90A, checkMAIVALUHazards,
// checkVALUHazards: GFX940 XDL "N pass" tables, gfx950 adds one wait state to the 4/8/16-pass
// read-after-write cases; TransDefWaitstates; dst_sel/op_sel forwarding; cvt_scale
// forwarding); the numbers per pass count come from
// mfma_wait_states() in semantics/mfma.h and are checked by tests/emu/test_emu_hazards.cpp.
// Under the hardware rule set (DispatchOptions::rules) the rules LLVM states more
// conservatively than AMD's shipped code relies on warn instead (hazard_relaxed).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/isa/isa_ops.h"
#include "emu/semantics/mfma.h"

namespace zyfa::emu {
namespace {

// `reg` (VGPR or AGPR number) written by an MFMA still in flight: an access to it needs the
// wait states of that MFMA's pass count (rule `rule` of hazard_mfma when short). The report
// reads "<access> <preposition> <reg>".
void check_after_mfma_write(Executor& x, const Wave& w, uint32_t reg, const char* rule, const char* access,
                            const char* preposition) {
  const MfmaWrite& m = w.mfma_write[reg];
  if (!m.valid) return;
  const int need = mfma_wait_states(m.passes).srcab_or_valu_read;
  const int64_t have = wait_states_after(w, m.clock);
  if (have < need)
    x.hazard_mfma(rule, m.clock, have, need,
                  fmt::format("MFMA hazard: {} {} {}{} {} wait state(s) after the {}-pass MFMA that writes it; "
                              "gfx950 requires {}",
                              access, preposition, reg >= kAgprBase ? "a" : "v", reg % 256, have, m.passes, need));
}

}  // namespace

bool is_transcendental(uint16_t v) {
  switch (v) {
    case op::V_EXP_F32: case op::V_LOG_F32: case op::V_RCP_F32: case op::V_RCP_IFLAG_F32:
    case op::V_RSQ_F32: case op::V_SQRT_F32: case op::V_RCP_F64: case op::V_RSQ_F64:
    case op::V_SQRT_F64: case op::V_SIN_F32: case op::V_COS_F32: case op::V_EXP_F16:
    case op::V_LOG_F16: case op::V_RCP_F16: case op::V_RSQ_F16: case op::V_SQRT_F16:
    case op::V_SIN_F16: case op::V_COS_F16: case op::V_EXP_LEGACY_F32: case op::V_LOG_LEGACY_F32:
      return true;
    default:
      return false;
  }
}

void Executor::hazard_check_read_vgpr(uint32_t reg, bool is_mfma_src_ab, bool is_vmem_or_ds) {
  Wave& w = *w_;
  const char* consumer = is_mfma_src_ab ? "an MFMA SrcA/SrcB read" : is_vmem_or_ds ? "a VMEM/LDS read" : "a VALU read";
  if (w.any_mfma && w.clock - w.last_mfma_clock <= 24) {
    check_after_mfma_write(*this, w, reg, "mfma-read", consumer, "of");
  }
  if (reg < 256 && !is_mfma_src_ab && !is_vmem_or_ds) {
    const uint64_t t = w.trans_vgpr_write_clock[reg];
    if (t && !is_transcendental(in_->valu) && wait_states_after_stamp(w, t) < 1)
      fault(fmt::format("VALU hazard: v{} read right after the transcendental that writes it (needs 1 wait state)", reg));
  }
  if (reg < 256 && !is_vmem_or_ds) {
    const uint64_t t = w.fwd1_write_clock[reg];
    if (t && wait_states_after_stamp(w, t) < 1)
      fault(fmt::format("VALU hazard: v{} read right after a partial (dst_sel/op_sel) or cvt_scale write "
                        "that needs 1 wait state before use", reg));
  }
}

// gfx940+ has no interlock for a VALU writing an SGPR (VCC included) that a VALU reads next:
// LLVM asks for 2 wait states (GCNHazardRecognizer checkVALUHazards, hasVDecCoExecHazard);
// a rule the hardware rule set relaxes (hazard_relaxed).
void Executor::hazard_check_valu_sgpr_read(uint16_t code, int count) {
  Wave& w = *w_;
  // The closest write among the registers read: one finding per instruction (VCC is two).
  int64_t given = INT64_MAX;
  uint16_t reg = 0;
  for (int i = 0; i < count; ++i) {
    const uint16_t c = code + i;
    if (c >= 128) continue;
    const uint64_t t = w.valu_sgpr_write_clock[c];
    if (t && wait_states_after_stamp(w, t) < given) {
      given = wait_states_after_stamp(w, t);
      reg = c;
    }
  }
  if (given != INT64_MAX) hazard_relaxed(RelaxedRule::kValuSgprValuRead, given, reg);
}

namespace {

// The rules LLVM states more conservatively than AMD's shipped gfx950 code relies on. `floor`
// is the fewest wait states that code gives (AITER fmha_v3_fwd, docs/emulator.md "Rule
// sets"): the hardware rule set warns from there up to LLVM's count and still faults below,
// where nothing shows that the hardware copes.
struct RelaxedRuleInfo {
  const char* name;
  int required;  // LLVM's count
  int floor;     // AMD's shipped code's count
  const char* fault_format;  // {0} register, {1} wait states given, {2} required
  const char* source;
};

const RelaxedRuleInfo& info(RelaxedRule r) {
  static const RelaxedRuleInfo kRules[] = {
      {"m0-lds-dma", 1, 0,
       "LDS-DMA hazard: load to LDS {1} wait state(s) after an SALU write of {0} (needs {2})",
       "GCNHazardRecognizer checkReadM0Hazards (hasReadM0LdsDmaHazard: GFX9)"},
      {"valu-sgpr-valu-read", 2, 1,
       "VALU hazard: {0} read by a VALU {1} wait state(s) after a VALU wrote it (needs {2})",
       "GCNHazardRecognizer checkVALUHazards (hasVDecCoExecHazard: gfx940+)"},
      {"permlane-swap-after-swap", 2, 1,
       "VALU hazard: permlane swap reads {0} {1} wait state(s) after the permlane swap that wrote it (needs {2})",
       "GCNHazardRecognizer checkPermlaneHazards (VALU write -> v_permlane*_swap: 2)"},
  };
  return kRules[static_cast<int>(r)];
}

}  // namespace

void Executor::hazard_relaxed(RelaxedRule rule, int64_t given, uint32_t sreg) {
  const RelaxedRuleInfo& r = info(rule);
  if (given >= r.required) return;
  if (ctx_.rules != RuleSet::kHardware || given < r.floor) {
    const std::string name = rule == RelaxedRule::kPermlaneSwapAfterSwap ? fmt::format("v{}", sreg)
                             : sreg == operand::kM0                        ? "M0"
                             : sreg == operand::kVccLo ? "vcc_lo"
                             : sreg == operand::kVccHi ? "vcc_hi"
                                                           : fmt::format("s{}", sreg);
    std::string msg = fmt::format(fmt::runtime(r.fault_format), name, given, r.required);
    if (ctx_.rules == RuleSet::kHardware)
      msg += fmt::format("; below the {} AMD's shipped code gives, so a fault under the hardware rules too", r.floor);
    fault(msg);
  }
  RuleWarning& wr = warnings_[{in_->pc, static_cast<int>(rule)}];
  if (wr.count == 0) {
    wr.rule = r.name;
    wr.pc = in_->pc;
    wr.instruction = in_->name;
    wr.given = int(given);
    wr.required = r.required;
    wr.source = r.source;
  }
  wr.given = std::min(wr.given, int(given));
  ++wr.count;
}

// gfx950: a VALU write of either VGPR of a permlane swap needs 2 wait states before it
// (GCNHazardRecognizer checkPermlaneHazards). AMD's shipped kernels issue a swap 1 wait state
// after another swap that wrote its operand; that case alone is relaxed under hardware.
void Executor::hazard_check_permlane_swap(uint32_t d, uint32_t s0) {
  Wave& w = *w_;
  if (swap_write_clock_.size() <= w.id_in_group) swap_write_clock_.resize(w.id_in_group + 1);
  std::array<uint64_t, 256>& swaps = swap_write_clock_[w.id_in_group];
  int64_t fewest = INT64_MAX;  // one finding per instruction, for the closer of the two
  uint32_t reg = d;
  for (uint32_t r : {d, s0}) {
    const uint64_t t = w.valu_vgpr_write_clock[r];
    const int64_t given = wait_states_after_stamp(w, t);
    if (!t || given >= 2) continue;
    if (swaps[r] != t)
      fault(fmt::format("VALU hazard: {} reads v{} less than 2 wait states after a VALU wrote it", in_->name, r));
    if (given < fewest) {
      fewest = given;
      reg = r;
    }
  }
  if (fewest != INT64_MAX) hazard_relaxed(RelaxedRule::kPermlaneSwapAfterSwap, fewest, reg);
  // The swap writes both registers at this clock (the caller sets valu_vgpr_write_clock).
  swaps[d] = swaps[s0] = w.clock + 1;
}

std::vector<RuleWarning> Executor::take_warnings() {
  std::vector<RuleWarning> out;
  out.reserve(warnings_.size());
  for (auto& [key, wr] : warnings_) out.push_back(std::move(wr));
  warnings_.clear();
  return out;
}

// VMEM stores of more than 64 bits (FLAT/GLOBAL always, MUBUF when soffset is not an SGPR)
// read their data after issue: a VALU may overwrite it only 2 wait states later on gfx940+
// (GCNHazardRecognizer createsVALUHazard / checkVALUHazardsHelper, has12DWordStoreHazard).
void Executor::hazard_check_store_data_overwrite(uint32_t vgpr) {
  Wave& w = *w_;
  if (vgpr < 256 && w.store_data_read_until[vgpr] > w.clock)
    fault(fmt::format("VMEM store-data hazard: VALU write of v{} while the wide store issued {} instruction(s) "
                      "earlier may still read it (needs 2 wait states)",
                      vgpr, 2 - (w.store_data_read_until[vgpr] - w.clock) + 0));
}

// A VMEM or LDS instruction whose destination register an XDL MFMA is still writing (WAW) or
// still reads as SrcC (WAR). GCNHazardRecognizer::checkMAIVALUHazards checks the definitions
// of VMEM/FLAT/DS instructions exactly as those of a VALU: P+3 wait states after the MFMA
// writing an overlapping register (gfx950: one more for 4/8/16 passes), P-1 after the one
// reading it as SrcC. The load writes its registers later, but the rule counts from its issue.
void Executor::hazard_check_load_destinations(const PendingOp& op) {
  Wave& w = *w_;
  if (!w.any_mfma || w.clock - w.last_mfma_clock > 24) return;
  for (int i = 0; i < op.nmarked; ++i) {
    const uint32_t reg = op.marked[i];
    if (reg >= kSgprBase) continue;
    const char* kind = op.counter == Counter::kVm ? "VMEM" : "LDS";
    check_after_mfma_write(*this, w, reg, "mfma-overwrite", kind, "load into");
    if (w.mfma_srcc_read_until[reg] > w.clock)
      hazard_mfma_srcc_war(reg, fmt::format("MFMA hazard: {} load into {}{} while an in-flight MFMA still reads it "
                                            "as SrcC (needs {} more wait state(s))", kind, reg >= kAgprBase ? "a" : "v",
                                            reg % 256, w.mfma_srcc_read_until[reg] - w.clock));
  }
}

void Executor::hazard_mfma_srcc_war(uint32_t reg, const std::string& what) {
  const Wave& w = *w_;
  const uint64_t reader = w.mfma_srcc_read_clock[reg];
  hazard_mfma("mfma-srcc-war", reader, wait_states_after(w, reader),
              int(w.mfma_srcc_read_until[reg] - reader - 1), what);
}

// Under hardware the rule's wait states are SIMD cycles (cycle_hazards.h): the claim keeps
// what strict would report, and the replay after the dispatch turns it into a warning or into
// that fault with the cycles added. Without an issue trace nothing could decide it: a fault.
void Executor::hazard_mfma(const char* rule, uint64_t producer, int64_t given, int need, const std::string& what) {
  if (ctx_.rules != RuleSet::kHardware || !w_->timing) fault(what);
  // The registers of one operand give the same claim: one per instruction, MFMA and rule.
  if (!claims_.empty()) {
    const CycleClaim& last = claims_.back();
    if (last.wave == w_->id_in_group && last.consumer_clock == w_->clock && last.producer_clock == producer &&
        std::strcmp(last.rule, rule) == 0)
      return;
  }
  CycleClaim c;
  c.rule = rule;
  c.wave = c.producer_wave = w_->id_in_group;
  c.producer_clock = producer;
  c.consumer_clock = w_->clock;
  c.need = need;
  c.given = int(given);
  c.pc = in_->pc;
  c.instruction = in_->name;
  c.what = what;
  c.where = fault_location();
  claims_.push_back(std::move(c));
}

void Executor::hazard_before_instruction() {}

}  // namespace zyfa::emu
