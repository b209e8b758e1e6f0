"""Static instruction counts and a cycle estimate for a straight-line piece of generated code.

The estimate is a prediction to be checked by a measurement on an MI355X, not a measurement:
it counts issue cycles per wave with the rates below and ignores memory latency, LDS bank
conflicts, instruction-cache misses and the clock.

Rates (cycles per wave64 instruction on one SIMD):
  * v_mfma_scale_f32_32x32x64_f8f6f4 with FP8 operands: 16 passes of 4 cycles = 64 cycles of
    the matrix pipe (LLVM SISchedule.td pass counts; docs/emulator.md);
  * VALU: 4 cycles (16 lanes per cycle); transcendentals (v_exp/log/rcp/rsq/sqrt_f32) and
    32-bit integer multiplies (v_mul_lo_u32, v_mul_hi_u32, v_mad_u64_u32) 16 cycles (quarter rate);
  * s_nop N: N + 1 cycles; other SALU, SMEM, LDS, VMEM, branches: 1 issue cycle each (their
    latency is not modelled; with one wave per SIMD it is not hidden either).
"""

from collections import Counter
from typing import Dict, Iterable

MFMA_CYCLES = {"v_mfma_scale_f32_32x32x64_f8f6f4": 64}
QUARTER_RATE = ("v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rsq_f32", "v_sqrt_f32",
                "v_mul_lo_u32", "v_mul_hi_u32", "v_mad_u64_u32")


def mnemonic(line: str) -> str:
    return line.split()[0] if line.split() else ""


def classify(line: str) -> str:
    m = mnemonic(line)
    if not m or m.startswith("//") or m.endswith(":"):
        return ""
    if m.startswith("v_mfma"):
        return "mfma"
    if m.startswith("ds_"):
        return "lds"
    if m.startswith(("global_", "buffer_")):
        return "vmem"
    if m.startswith("s_load") or m.startswith("s_buffer_load"):
        return "smem"
    if m == "s_nop":
        return "nop"
    if m.startswith("s_waitcnt") or m == "s_barrier":
        return "sync"
    if m.startswith("s_"):
        return "salu"
    if m.startswith("v_"):
        return "valu_quarter" if m.startswith(QUARTER_RATE) else "valu"
    return "other"


def count(lines: Iterable[str]) -> Dict[str, int]:
    """Instruction counts per class, and issue cycles per pipe."""
    c = Counter()
    for line in lines:
        k = classify(line)
        if not k:
            continue
        c[k] += 1
        if k == "mfma":
            c["mfma_cycles"] += MFMA_CYCLES[mnemonic(line)]
        elif k == "valu":
            c["valu_cycles"] += 4
        elif k == "valu_quarter":
            c["valu_cycles"] += 16
        elif k == "nop":
            c["nop_cycles"] += int(line.split()[1]) + 1
        else:
            c["other_cycles"] += 1
    return dict(c)


def report(title: str, c: Dict[str, int]) -> str:
    keys = ["mfma", "valu", "valu_quarter", "lds", "vmem", "salu", "smem", "sync", "nop"]
    counts = ", ".join(f"{k} {c.get(k, 0)}" for k in keys)
    serial = c.get("mfma_cycles", 0) + c.get("valu_cycles", 0) + c.get("nop_cycles", 0) + c.get("other_cycles", 0)
    return (f"{title}: {counts}\n"
            f"  cycles: matrix pipe {c.get('mfma_cycles', 0)}, vector pipe {c.get('valu_cycles', 0)}, "
            f"s_nop {c.get('nop_cycles', 0)}, other issue {c.get('other_cycles', 0)}; "
            f"one wave alone (no overlap) {serial}")
