// gfx950 (CDNA4) matrix fused multiply-add (MFMA) semantics for the functional emulator.
//
// Registers are given lane-major: operand X of lane l, register r is x[l * x_regs + r]
// (64 lanes, wave64). The element-to-(lane, register, byte) layouts, the scale-operand
// layout and the output layout are documented and cited per family in mfma_layout.cpp.
//
// Numerics (the hardware's internal summation order and rounding are not documented, so the
// emulator fixes one; details in mfma.cpp): inputs decoded exactly as their format says
// (denormals kept), products exact, K split into 32-wide blocks (the E8M0 scale blocks of the
// f8f6f4 family; every other shape has K <= 32 and is one block), blocks taken in increasing K,
// and for each block the exact value "running C + sum of the block's (scaled) products" is
// rounded once to f32 (RNE). Denormal results are kept; any NaN gives 0x7FC00000.
#pragma once

#include <cstdint>
#include <optional>

namespace zyfa::emu {

enum class MfmaOp {
  // BF16 / F16 (gfx950 adds the K=32/K=16 double-rate shapes; the older ones remain).
  F32_16X16X32_BF16,
  F32_32X32X16_BF16,
  F32_16X16X16_BF16,  // "bf16_1k" of gfx90a
  F32_32X32X8_BF16,
  F32_16X16X32_F16,
  F32_32X32X16_F16,
  F32_16X16X16_F16,
  F32_32X32X8_F16,
  // FP8 / BF8 (OCP e4m3fn / e5m2 on gfx950), operand formats in the name (A_B).
  F32_16X16X32_FP8_FP8,
  F32_16X16X32_FP8_BF8,
  F32_16X16X32_BF8_FP8,
  F32_16X16X32_BF8_BF8,
  F32_32X32X16_FP8_FP8,
  F32_32X32X16_FP8_BF8,
  F32_32X32X16_BF8_FP8,
  F32_32X32X16_BF8_BF8,
  // Format-polymorphic FP8/FP6/FP4: A's format from cbsz, B's from blgp (MfmaFormat).
  F32_16X16X128_F8F6F4,
  F32_32X32X64_F8F6F4,
  SCALE_F32_16X16X128_F8F6F4,
  SCALE_F32_32X32X64_F8F6F4,
};

// Operand format codes of the f8f6f4 family (cbsz for A, blgp for B).
enum class MfmaFormat : uint32_t { E4M3 = 0, E5M2 = 1, E2M3 = 2, E3M2 = 3, E2M1 = 4 };

struct MfmaInfo {
  int m, n, k, blocks;          // blocks = independent output blocks (1 for all ops above)
  int a_regs, b_regs, d_regs;   // 32-bit registers per lane for A, B and C/D
  int passes;                   // MFMA pipeline passes (dependency wait states, see below)
};

// Throws std::runtime_error naming the op for an invalid format field (cbsz/blgp > 4 on
// f8f6f4). For non-f8f6f4 ops cbsz/blgp do not change the shape.
MfmaInfo mfma_info(MfmaOp op, uint32_t cbsz = 0, uint32_t blgp = 0);
int mfma_passes(MfmaOp op, uint32_t cbsz = 0, uint32_t blgp = 0);
const char* mfma_name(MfmaOp op);  // assembler mnemonic, e.g. "v_mfma_f32_16x16x32_bf16"
bool mfma_is_scaled(MfmaOp op);
bool mfma_is_f8f6f4(MfmaOp op);

// VOP3P-MAI opcode (the 7-bit OP field of the gfx950 encoding) to MfmaOp; nullopt for opcodes
// that are not MFMAs this emulator implements. The scaled ops use the VOP3PX2 encoding, whose
// second dword carries the same OP field as the unscaled op: scaled selects which.
std::optional<MfmaOp> mfma_op_from_opcode(uint32_t opcode, bool scaled = false);
// Inverse, for tests and disassembly.
uint32_t mfma_opcode(MfmaOp op);

// Wait states (s_nop N gives N+1) the hardware requires between an MFMA of `passes` passes
// writing registers and a dependent instruction, gfx950 (from LLVM GCNHazardRecognizer.cpp).
struct MfmaWaitStates {
  int srcc_overlapped;   // next MFMA reads them as SrcC, overlapping but not identical
  int srcc_same;         // next MFMA reads exactly them as SrcC (accumulation chain)
  int srcab_or_valu_read;// MFMA reads them as SrcA/B; VALU/VMEM/LDS/export reads; VALU writes
  int valu_war_srcc;     // VALU writes a register this MFMA reads as SrcC
};
MfmaWaitStates mfma_wait_states(int passes);

struct MfmaArgs {
  MfmaOp op;
  const uint32_t* a;  // 64 * a_regs
  const uint32_t* b;  // 64 * b_regs
  const uint32_t* c;  // 64 * d_regs (may alias d)
  uint32_t* d;        // 64 * d_regs
  uint32_t cbsz = 0, abid = 0, blgp = 0;  // instruction fields (formats for f8f6f4)
  // Scaled ops: the two VGPR scale operands of the v_mfma_ld_scale_b32 prefix, 64 lanes each.
  // The E8M0 scale of A row i for K block p is byte scale_a_sel of lane i + M*p (B: column j,
  // lane j + N*p); the byte is op_sel[0] + 2*op_sel_hi[0] for A and op_sel[1] + 2*op_sel_hi[1]
  // for B, taken from the prefix dword (LLVM's llvm.amdgcn.mfma.scale tests, gfx950-facts.md).
  const uint32_t* scale_a = nullptr;
  const uint32_t* scale_b = nullptr;
  uint32_t scale_a_sel = 0, scale_b_sel = 0;
  // a, b, c and d register-major instead: register r of lane l at x[r * 64 + l], as the
  // emulator's register file holds them (the scales are one register either way).
  bool register_major = false;
};

// Computes D = A*B + C for all 64 lanes (the emulator applies EXEC outside: MFMAs ignore it).
// Throws std::runtime_error naming the op on unsupported field combinations (non-zero
// cbsz/abid/blgp broadcast on ops where they are not implemented, bad formats, missing scales).
void mfma_execute(const MfmaArgs& args);
// The general path alone (every format, per-term exponent bookkeeping, exact fallback sum):
// mfma_execute gives the same bits by shorter routes where they are exact (e4m3 x e4m3 and
// bf16 x bf16, mfma_fast.h); tests compare the two.
void mfma_execute_general(const MfmaArgs& args);

}  // namespace zyfa::emu
