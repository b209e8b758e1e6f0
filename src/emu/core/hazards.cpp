// Software-managed dependency hazards of gfx950 that the hardware does not interlock.
// A consumer issued before the required number of wait states (instructions of the wave in
// between, s_nop N counting N+1) is a kernel fault.
//
// Sources: LLVM GCNHazardRecognizer.cpp (checkMAIHazards90A, checkMAIVALUHazards,
// checkVALUHazards: GFX940 XDL "N pass" tables, gfx950 adds one wait state to the 4/8/16-pass
// read-after-write cases; TransDefWaitstates; dst_sel/op_sel forwarding; cvt_scale
// forwarding), summarized in /gfx950-facts.md; the numbers per pass count come from
// mfma_wait_states() in semantics/mfma.h and are checked by tests/emu/hazard_test.cpp.
#include <fmt/format.h>

#include "emu/core/executor.h"
#include "emu/isa/isa_ops.h"
#include "emu/semantics/mfma.h"

namespace zyfa::emu {

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
    const MfmaWrite& m = w.mfma_write[reg];
    if (m.valid) {
      const int need = mfma_wait_states(m.passes).srcab_or_valu_read;
      const int64_t have = int64_t(w.clock) - int64_t(m.clock) - 1;
      if (have < need)
        fault(fmt::format("MFMA hazard: {} of {}{} {} wait state(s) after the {}-pass MFMA that writes it; "
                          "gfx950 requires {}",
                          consumer, reg >= kAgprBase ? "a" : "v", reg % 256, have, m.passes, need));
    }
  }
  if (reg < 256 && !is_mfma_src_ab && !is_vmem_or_ds) {
    const uint64_t t = w.trans_vgpr_write_clock[reg];
    if (t && !is_transcendental(in_->valu) && int64_t(w.clock) - int64_t(t - 1) - 1 < 1)
      fault(fmt::format("VALU hazard: v{} read right after the transcendental that writes it (needs 1 wait state)", reg));
  }
  if (reg < 256) {
    const uint64_t t = w.fwd1_write_clock[reg];
    if (t && int64_t(w.clock) - int64_t(t - 1) - 1 < 1)
      fault(fmt::format("VALU hazard: v{} read right after a partial (dst_sel/op_sel) or cvt_scale write "
                        "that needs 1 wait state before use", reg));
  }
}

void Executor::hazard_before_instruction() {}

}  // namespace zyfa::emu
