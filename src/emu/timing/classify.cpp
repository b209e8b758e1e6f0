#include "emu/timing/classify.h"

#include <cstring>

#include "emu/core/executor.h"
#include "emu/semantics/mfma.h"
#include "emu/timing/mi355x.h"

namespace zyfa::emu::timing {
namespace {
bool starts(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }
}  // namespace

InstInfo classify(const Instruction& in) {
  InstInfo k;
  k.size = in.size;
  const char* n = in.name;
  switch (in.enc) {
    case Encoding::kSopp:
      if (starts(n, "s_waitcnt")) {
        k.kind = Kind::kWaitcnt;
        k.vmcnt = uint16_t(waitcnt_vmcnt(in.simm16));
        k.lgkmcnt = uint16_t(waitcnt_lgkmcnt(in.simm16));
      } else if (starts(n, "s_nop")) {
        k.kind = Kind::kNop;
        k.imm = uint16_t(in.simm16 & 0xF);
      } else if (starts(n, "s_barrier")) {
        k.kind = Kind::kBarrier;
      } else if (starts(n, "s_setprio")) {
        k.kind = Kind::kSetprio;
        k.imm = uint16_t(in.simm16 & 3);
      } else if (starts(n, "s_sleep")) {
        k.kind = Kind::kSleep;
        k.imm = uint16_t(in.simm16 & 0x7F);
      } else if (starts(n, "s_endpgm")) {
        k.kind = Kind::kEndpgm;
      } else if (starts(n, "s_branch") || starts(n, "s_cbranch")) {
        k.kind = Kind::kBranch;
        k.category = Category::kBranch;
      } else {
        k.kind = Kind::kInternal;  // s_sched_barrier hints, s_icache_inv, ...
      }
      return k;
    case Encoding::kSop1:
    case Encoding::kSop2:
    case Encoding::kSopk:
    case Encoding::kSopc:
      k.kind = Kind::kSalu;
      k.category = Category::kSalu;
      return k;
    case Encoding::kSmem:
      k.kind = Kind::kSmem;
      k.category = Category::kSalu;  // SALU and SMEM share a category
      return k;
    case Encoding::kDs:
      k.kind = Kind::kLds;
      k.category = Category::kLds;
      return k;
    case Encoding::kMubuf:
    case Encoding::kFlat:
      k.category = Category::kVmem;
      k.kind = in.lds ? Kind::kVmemToLds : std::strstr(n, "store") ? Kind::kVmemStore : Kind::kVmemLoad;
      return k;
    case Encoding::kVop3p:
      k.category = Category::kValu;
      if (starts(n, "v_mfma") || in.scaled) {
        if (auto op = mfma_op_from_opcode(in.op, in.scaled)) {
          k.kind = Kind::kMfma;
          k.passes = uint8_t(mfma_passes(*op, in.cbsz, in.blgp));
          k.valu_cycles = kMfmaIssueCycles;
          return k;
        }
      }
      k.kind = Kind::kValu;
      k.valu_cycles = starts(n, "v_pk_") && std::strstr(n, "_f32") ? kPackedF32Cycles : kValuCycles;
      return k;
    case Encoding::kVop1:
    case Encoding::kVop2:
    case Encoding::kVopc:
    case Encoding::kVop3:
      k.category = Category::kValu;
      if (is_transcendental(in.valu)) {
        k.kind = Kind::kTrans;
        k.valu_cycles = kTransCycles;
      } else {
        k.kind = Kind::kValu;
        k.valu_cycles = kValuCycles;
      }
      return k;
    default:
      return k;
  }
}

}  // namespace zyfa::emu::timing
