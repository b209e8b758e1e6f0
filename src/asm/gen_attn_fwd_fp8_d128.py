#!/usr/bin/env python3
"""Generates attn_fwd_fp8_d128_asm.s: causal FP8 e4m3 attention, d_qk = d_v = 128, for gfx950.

Kernel attn_fwd_fp8_d128 (code object attn_fwd_fp8_d128_asm), 256 threads (4 waves), kernel
arguments AttnFwdArgs (src/kernels/hip/attn_fwd_args.h, 272 bytes), job table host/job_table.h
with 128-row tiles. Rows are addressed as a 64-bit scalar base per (batch, head) plus a 32-bit
lane offset; src/host/amd/attn_launch.cpp sends larger problems to the HIP kernel.

Work split. A persistent workgroup walks its jobs' tile words; a tile is 128 query rows, wave w
owns rows 32w .. 32w+31. VGPRs and AGPRs together stay within 256 per lane, so a CU holds two
workgroups (two waves per SIMD; the host launches 512): while one wave of a SIMD issues MFMAs,
the other's softmax runs on the vector pipe. The key loop runs over 128-key tiles 0 .. tile
(causal), and every wave runs every key tile because K and V of the tile are shared through LDS:
  1. all 256 threads store the tile's K (128 x 128 bytes, row-major into LDS) and V (transposed
     into LDS as Vt[dv][key], with v_perm_b32 byte shuffles), loaded from global memory while
     the previous key tile computed; issue the next tile's global loads; barrier;
  then per 64-key block of the tile (the online-softmax step; two score blocks of 32 keys):
  2. scores transposed, S^T = K Q^T: K (from LDS) is the A operand of
     v_mfma_scale_f32_32x32x64_f8f6f4, Q (registers, whole tile) the B operand, so lane
     32h + j holds query j's scores of keys 8(r/4) + 4h + r%4 of each 32-key score block in
     accumulator register r; the second block's K operands are read from LDS while the first
     block's softmax runs;
  3. softmax per row in the lane (the partner lane j ^ 32 holds the other half of the row):
     base-2 scores t = acc * scale * log2(e) * dq * dk; lazy rescaling per 64-key block (the
     running max moves only when the block's max exceeds it by more than 0.125); the integer
     k = clamp(floor(-(block max - m)), 0, 118) + 8 (the block max is written as about 2^8,
     so 8 more binades below it stay normal codes); lean P: the e4m3 code of
     2^(t - m + k) is trunc(8 (t - m + k) + 56.25) written by one multiply-add (from the raw
     accumulator: 8 * scale is folded into the multiplier, the rest into the addend) and one
     v_cvt_u32_f32 (truncating, negatives and -inf to 0); v_pk_fma_f32 does two multiply-adds;
  4. O^T += V^T P^T, Vt (from LDS) as the A operand in the key order the lane holds P in, P^T
     straight from registers as the B operand with the E8M0 scale 127 - k (2^-k removes the
     block's lift); one more MFMA with a ones A operand adds the same rounded P (times 2^-k)
     into the row-sum accumulator L (O and L live in AGPRs);
  5. after the last key tile: out = O * (dv / L) rounded to BF16 (RNE), LSE = ln 2 (m + log2 L);
     a barrier ends every key tile, so the next tile's LDS stores never meet a wave still reading.
In the diagonal key tile waves 0 and 1 skip the second 64-key block, which their rows cannot see.
Rows past seqlen compute on the last row and are never stored. NaN in V (e4m3fn has no Inf)
must not reach a row that cannot see it, and 0 (a masked P) times NaN is NaN: in the diagonal
key tile the staging threads zero V's NaN codes before the transposition and record the
smallest key that had one; the rows at or after that key, which do see it, are stored as NaN.
K needs nothing: a masked score is replaced (v_cndmask), never multiplied. Wait states: 20 between an MFMA
and VALU reads of its result, 2 between a VALU write of VCC/SGPR and its VALU read, 1 after a
transcendental; every memory result is waited for with s_waitcnt before use, and at most 15
LDS operations are outstanding (what lgkmcnt counts).

usage: gen_attn_fwd_fp8_d128.py OUTPUT.s
       gen_attn_fwd_fp8_d128.py --stats   (static instruction counts and cycle estimate per key tile)
"""

import struct
import sys

import schedule_stats
from gfx950_asm import Kernel, emit
from kernel_args import ATTN_FWD_ARGS

ARGS_SIZE = ATTN_FWD_ARGS.size
THREADS = 256
TILE = 128            # query rows per tile (kAttnTileRows) and keys per key tile
KROW = 144            # LDS bytes per K row (128 + 16: 16-byte aligned rows, banks staggered)
VROW = 132            # LDS bytes per Vt row (one dv, 128 keys; 33 dwords: the 32 rows one operand
                      # read touches fall in 32 different banks)
VT_BASE = TILE * KROW
BADV_BASE = VT_BASE + 128 * VROW  # 4 dwords: wave w's smallest diagonal-tile key with a NaN in V
LDS_BYTES = BADV_BASE + 16
LEAN_BIAS = 56.25     # fp8_model.h kLeanBias (the centred code fit 56.1557, moved to unbiased row sums)
BLOCK_LIFT = 8        # fp8_model.h kLeanBlockLift: a block's maximum is written as about 2^8, not 1
RESCALE_THRESHOLD = 0.125
LARGE_M = 2.0 ** 14   # |running max| from which lean P takes the out-of-line path (8m: ulp 2^-6)
LN2 = 0.6931471805599453


def f32(x: float) -> str:
    """A float as the hex literal of its binary32 bits."""
    return hex(struct.unpack("<I", struct.pack("<f", x))[0])


# ---- SGPRs: s[0:1] kernarg pointer, s2 workgroup id; s[8:75] the whole AttnFwdArgs.
def arg(field: str) -> int:
    return 8 + ATTN_FWD_ARGS.offset[field] // 4


S_Q, S_K, S_V, S_OUT, S_LSE, S_JT = arg("q"), arg("k"), arg("v"), arg("out"), arg("lse"), arg("job_table")
S_QDP, S_KDP, S_VDP = arg("q_descale_ptr"), arg("k_descale_ptr"), arg("v_descale_ptr")
S_QS, S_KS, S_VS, S_OS = arg("q_stride"), arg("k_stride"), arg("v_stride"), arg("o_stride")  # (batch, seq, head) int64
S_DS = arg("descale_stride")                                    # 6 int64
S_SCALE, S_QD, S_KD, S_VD = arg("scale_log2"), arg("q_descale"), arg("k_descale"), arg("v_descale")
S_SEQ, S_HEADS, S_HEADSK = arg("seqlen"), arg("heads"), arg("heads_k")
S_SEQM1 = arg("reserved")  # the reserved word, loaded with the rest, then set to seqlen - 1
S_DIVT, S_DIVH, S_DIVG = arg("div_n_tiles"), arg("div_heads"), arg("div_group")
S_G, S_NT, S_WORD, S_WEND = 76, 77, 78, 79
S_TW, S_BH, S_TILE, S_B, S_H, S_HK, S_WAVE, S_KT, S_NKT, S_T0 = 80, 81, 82, 83, 84, 85, 86, 87, 88, 89
S_X = 90      # s[90:91] 64-bit scratch / mask pair
S_KB = 92     # s[92:93] K base of (b, hk)
S_VB = 94     # s[94:95] V base
S_Y = 96      # s[96:97] 64-bit scratch / mask pair
S_VDS = 98    # v descale of (b, hk)
S_T1 = 99
S_BADV = 100  # smallest key with a NaN in V in the diagonal tile (absolute), past the tile if none
S_LARGE = 101  # 1 when some row's running max is at least LARGE_M in magnitude (lean P's slow path)
NEXT_SGPR = 102
# 8 K rows in bytes (the step between a lane's K loads), in the high word of the K row stride,
# which the kernel never reads (row offsets are 32-bit: the host checks they fit)
S_K8 = S_KS + 3

# ---- VGPRs. VGPRs + AGPRs stay within 256, so that two workgroups (two waves per SIMD) fit a
# CU: while one wave of a SIMD runs its MFMAs, the other's softmax fills the vector pipe.
V_TID, V_BIAS, V_J, V_H = 0, 1, 2, 3
V_ONES = 4         # 8: e4m3 1.0 in every byte
V_P = 12           # 8: P codes of the current 64-key block
V_Q = 20           # 16: Q as the B operand, d 0..63 then 64..127
V_PF = 36          # 32: the next key tile's K (16) and V (16), loaded while this one computes
V_S = 68           # 32: scores of one 64-key block (2 score blocks); V transposed staging; V
                   # operands of the block's P V; with V_KOP the 64 registers of the epilogue
V_KOP = 100        # 32: K operands of the 2 score blocks of a 64-key block; rescale buffer
V_T = 132          # v132..v143 temporaries
V_VRJ = (144, 145, 146, 147)  # Vt read address of dv block J (32 J rows further each)
V_VR = V_VRJ[0]
V_QSIGN = 148      # 0x80808080 when the score factor is negative (Q's signs flip), else 0
V_KOFF, V_KMAX, V_KSTEP = 149, 150, 151  # staging K row: lane offset, its clamp, per-tile step
V_VOFF = 152       # 4: staging V rows' lane offsets
V_VMAX, V_VSTEP = 156, 157
V_M, V_F, V_F8, V_QROW, V_DM0, V_DM1 = 158, 159, 160, 161, 162, 163
V_BM = 164         # block maximum (raw accumulator units)
V_C = 166          # lean-P addend of the block (even: a packed-math operand pair)
V_SC = 167         # E8M0 scale of the block
V_ALPHA, V_KR, V_KW, V_VW = 168, 170, 171, 172  # v169: the pair of alpha (v_pk_mul)
V_NEGINF, V_127 = 173, 174
NEXT_VGPR = 176
A_O = 0            # a[0:63]: O^T accumulators, 4 dv blocks of 32 (AGPRs)
A_L = 64           # a[64:79]: row-sum accumulator (every register holds the row sum)
AGPRS = 80
assert NEXT_VGPR + AGPRS <= 256

MFMA = "v_mfma_scale_f32_32x32x64_f8f6f4"
MFMA_READ_NOPS = ["s_nop 7", "s_nop 7", "s_nop 3"]  # 20 wait states after a 16-pass MFMA


def vr(base: int, n: int) -> str:
    return f"v[{base}:{base + n - 1}]"


class Labels:
    def __init__(self):
        self.n = 0

    def __call__(self, stem: str) -> str:
        self.n += 1
        return f".L{stem}_{self.n}"


L = Labels()
OUT_OF_LINE = []  # rarely taken blocks, placed after s_endpgm


def fast_div(dst: int, n: int, div: int):
    """s_dst = n / d with the host's FastDiv (magic s_div, shift s_div+1): (n * magic) >> shift."""
    return [f"s_mul_i32 s{S_Y}, s{n}, s{div}",
            f"s_mul_hi_u32 s{S_Y + 1}, s{n}, s{div}",
            f"s_lshr_b64 s[{S_Y}:{S_Y + 1}], s[{S_Y}:{S_Y + 1}], s{div + 1}",
            f"s_mov_b32 s{dst}, s{S_Y}"]


def mad64(dst: int, stride: int, idx: int):
    """s[dst:dst+1] += s[stride:stride+1] * s_idx (idx unsigned 32-bit), mod 2^64."""
    return [f"s_mul_i32 s{S_T0}, s{stride}, s{idx}",
            f"s_mul_hi_u32 s{S_T1}, s{stride}, s{idx}",
            f"s_mul_i32 s{S_Y}, s{stride + 1}, s{idx}",
            f"s_add_u32 s{S_T1}, s{S_T1}, s{S_Y}",
            f"s_add_u32 s{dst}, s{dst}, s{S_T0}",
            f"s_addc_u32 s{dst + 1}, s{dst + 1}, s{S_T1}"]


def load_descale(dst: int, ptr: int, host: int, strides: int):
    """s_dst = ptr ? ptr[b * stride_b + hk * stride_hk] : host value."""
    skip = L("descale_host")
    return [f"s_mov_b32 s{dst}, s{host}",
            f"s_cmp_lg_u64 s[{ptr}:{ptr + 1}], 0",
            f"s_cbranch_scc0 {skip}",
            f"s_mul_i32 s{S_T0}, s{S_B}, s{strides}",
            f"s_mul_i32 s{S_T1}, s{S_HK}, s{strides + 2}",
            f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
            f"s_lshl_b32 s{S_T0}, s{S_T0}, 2",
            f"s_load_dword s{dst}, s[{ptr}:{ptr + 1}], s{S_T0}",
            "s_waitcnt lgkmcnt(0)",
            f"{skip}:"]


def prologue():
    b = [
        "// all kernel arguments into s[8:75]",
        "s_load_dwordx16 s[8:23], s[0:1], 0x0",
        "s_load_dwordx16 s[24:39], s[0:1], 0x40",
        "s_load_dwordx16 s[40:55], s[0:1], 0x80",
        "s_load_dwordx16 s[56:71], s[0:1], 0xc0",
        "s_load_dwordx4 s[72:75], s[0:1], 0x100",
        f"v_and_b32 v{V_TID}, 0x3ff, v{V_TID}",
        f"v_and_b32 v{V_J}, 31, v{V_TID}",
        f"v_bfe_u32 v{V_H}, v{V_TID}, 5, 1",
        f"v_lshrrev_b32 v{V_T}, 6, v{V_TID}",
        "s_nop 0",
        f"v_readfirstlane_b32 s{S_WAVE}, v{V_T}",
        f"v_mov_b32 v{V_BIAS}, {f32(LEAN_BIAS)}",
        f"v_mov_b32 v{V_NEGINF}, 0xff800000",
        f"v_mov_b32 v{V_127}, 0x7f",
    ]
    b += [f"v_mov_b32 v{V_ONES + i}, 0x38383838" for i in range(8)]
    b += [
        "// staging roles: K row t/2, half t%2 (64 bytes); V keys 4(t%32)..+3, dv 16(t/32)..+15",
    ]
    b += staging_roles()
    b += [
        f"v_mul_u32_u24 v{V_KW}, {KROW}, v{R_T2}",
        f"v_add_u32 v{V_KW}, v{V_KW}, v{R_KPART}",
        f"v_mul_u32_u24 v{V_VW}, {VROW}, v{R_DG16}",
        f"v_add_u32 v{V_VW}, v{V_VW}, v{R_KG4}",
        f"v_add_u32 v{V_VW}, {VT_BASE}, v{V_VW}",
        "// operand reads: K row j at byte 16h; Vt row j (dv) at key byte 4h",
        f"v_mul_u32_u24 v{V_KR}, {KROW}, v{V_J}",
        f"v_lshl_add_u32 v{V_KR}, v{V_H}, 4, v{V_KR}",
        f"v_mul_u32_u24 v{V_VR}, {VROW}, v{V_J}",
        f"v_lshl_add_u32 v{V_VR}, v{V_H}, 2, v{V_VR}",
        f"v_add_u32 v{V_VR}, {VT_BASE}, v{V_VR}",
        f"v_add_u32 v{V_VRJ[1]}, {32 * VROW}, v{V_VR}",
        f"v_add_u32 v{V_VRJ[2]}, {64 * VROW}, v{V_VR}",
        f"v_add_u32 v{V_VRJ[3]}, {96 * VROW}, v{V_VR}",
        "s_waitcnt lgkmcnt(0)",
        f"s_add_u32 s{S_SEQM1}, s{S_SEQ}, -1",
        "// job table: G, n_tiles, then this workgroup's job range",
        f"s_load_dwordx2 s[{S_G}:{S_NT}], s[{S_JT}:{S_JT + 1}], 0x0",
        f"s_lshl_b32 s{S_T0}, s2, 2",
        f"s_add_u32 s{S_X}, s{S_JT}, s{S_T0}",
        f"s_addc_u32 s{S_X + 1}, s{S_JT + 1}, 0",
        f"s_load_dwordx2 s[{S_WORD}:{S_WEND}], s[{S_X}:{S_X + 1}], 0x8",
        "s_waitcnt lgkmcnt(0)",
        "// each job is two tile words; walk the words of this workgroup's jobs in order",
        f"s_lshl_b32 s{S_WORD}, s{S_WORD}, 1",
        f"s_lshl_b32 s{S_WEND}, s{S_WEND}, 1",
    ]
    return b


def tile_setup():
    b = [
        "// tile word -> (b, h, tile), KV head hk",
    ]
    b += fast_div(S_BH, S_TW, S_DIVT)
    b += [f"s_mul_i32 s{S_T0}, s{S_BH}, s{S_NT}", f"s_sub_u32 s{S_TILE}, s{S_TW}, s{S_T0}"]
    b += fast_div(S_B, S_BH, S_DIVH)
    b += [f"s_mul_i32 s{S_T0}, s{S_B}, s{S_HEADS}", f"s_sub_u32 s{S_H}, s{S_BH}, s{S_T0}"]
    b += fast_div(S_HK, S_H, S_DIVG)
    b += ["// descales of (b, hk); the score factor scale * log2(e) * dq * dk"]
    b += load_descale(S_X, S_QDP, S_QD, S_DS)
    b += load_descale(S_X + 1, S_KDP, S_KD, S_DS + 4)
    b += load_descale(S_VDS, S_VDP, S_VD, S_DS + 8)
    b += [
        f"v_mov_b32 v{V_F}, s{S_SCALE}",
        f"v_mul_f32 v{V_F}, s{S_X}, v{V_F}",
        f"v_mul_f32 v{V_F}, s{S_X + 1}, v{V_F}",
        "// maxima are taken over raw accumulators, which needs factor > 0: a negative factor",
        "// (negative softmax_scale or descale) moves into Q instead, by flipping the sign bit",
        "// of every Q byte (exact), and the factor is used as |factor|",
        f"v_ashrrev_i32 v{V_QSIGN}, 31, v{V_F}",
        f"v_and_b32 v{V_QSIGN}, 0x80808080, v{V_QSIGN}",
        f"v_and_b32 v{V_F}, 0x7fffffff, v{V_F}",
        f"v_mul_f32 v{V_F8}, 0x41000000, v{V_F}",
        "// K and V bases of (b, hk); Q base of (b, h) in s[90:91]",
        f"s_mov_b64 s[{S_KB}:{S_KB + 1}], s[{S_K}:{S_K + 1}]",
    ]
    b += mad64(S_KB, S_KS, S_B) + mad64(S_KB, S_KS + 4, S_HK)
    b += [f"s_mov_b64 s[{S_VB}:{S_VB + 1}], s[{S_V}:{S_V + 1}]"]
    b += mad64(S_VB, S_VS, S_B) + mad64(S_VB, S_VS + 4, S_HK)
    b += [f"s_mov_b64 s[{S_X}:{S_X + 1}], s[{S_Q}:{S_Q + 1}]"]
    b += mad64(S_X, S_QS, S_B) + mad64(S_X, S_QS + 4, S_H)
    b += [
        "// query row of the lane: tile * 128 + 32 wave + j; loads clamp to the last row",
        f"s_lshl_b32 s{S_T0}, s{S_TILE}, 7",
        f"s_lshl_b32 s{S_T1}, s{S_WAVE}, 5",
        f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
        f"v_add_u32 v{V_QROW}, s{S_T0}, v{V_J}",
        f"v_min_u32 v{V_T}, s{S_SEQM1}, v{V_QROW}",
        f"v_mul_lo_u32 v{V_T}, v{V_T}, s{S_QS + 2}",
        f"v_lshl_add_u32 v{V_T}, v{V_H}, 4, v{V_T}",
        "// Q as the B operand: d = 64c + 16h .. +15 and 64c + 32 + 16h .. +15",
    ]
    for i in range(4):
        b.append(f"global_load_dwordx4 {vr(V_Q + 4 * i, 4)}, v{V_T}, s[{S_X}:{S_X + 1}] offset:{32 * i}")
    b += [f"v_accvgpr_write_b32 a{A_O + i}, 0" for i in range(AGPRS)]
    b += [
        f"v_mov_b32 v{V_M}, 0xff800000",
        f"s_add_u32 s{S_NKT}, s{S_TILE}, 1",
        f"s_mov_b32 s{S_KT}, 0",
        "// key tile 0's loads go out before Q is waited for (the 8 of issue_loads after Q's 4)",
    ]
    b += init_row_offsets() + issue_loads()
    b += ["s_waitcnt vmcnt(8)"]
    b += [f"v_xor_b32 v{V_Q + i}, v{V_QSIGN}, v{V_Q + i}" for i in range(16)]
    return b


# Staging roles of thread t = 64 w + l, recomputed where needed (temporaries, not kept). Each
# global load instruction of a wave covers 8 whole 128-byte rows (8 lanes per row, 16 bytes
# each), so no cache line is fetched by two instructions:
#   K: rows 32 w + l/8 + 8 i (load i = 0..3), bytes 16 (l%8) .. +15: R_T2 = 32 w + l/8;
#   V: keys 4 g .. 4 g + 3 with g = t/8 (load i takes key 4 g + i), dv bytes 16 (t%8) .. +15.
# R_KPART = R_DG16 = 16 (t%8), R_KG4 = 4 g.
R_T2, R_KPART, R_KG4, R_DG16 = V_T + 8, V_T + 9, V_T + 10, V_T + 9
K_ROWS_PER_LOAD = 8


def staging_roles():
    return [f"v_lshrrev_b32 v{R_T2}, 6, v{V_TID}",
            f"v_lshlrev_b32 v{R_T2}, 5, v{R_T2}",
            f"v_bfe_u32 v{R_KG4}, v{V_TID}, 3, 3",
            f"v_add_u32 v{R_T2}, v{R_T2}, v{R_KG4}",
            f"v_and_b32 v{R_KPART}, 7, v{V_TID}",
            f"v_lshlrev_b32 v{R_KPART}, 4, v{R_KPART}",
            f"v_lshrrev_b32 v{R_KG4}, 3, v{V_TID}",
            f"v_lshlrev_b32 v{R_KG4}, 2, v{R_KG4}"]


def init_row_offsets():
    """Per query tile: the lane offsets of its staging rows in key tile 0, their clamps (the
    offset of row seqlen - 1) and the step from one key tile to the next (128 rows). Offsets
    grow with the row (strides are not negative), so min(offset, clamp) is the clamped row."""
    t = V_T
    b = staging_roles()
    b += [f"v_mul_lo_u32 v{V_KOFF}, v{R_T2}, s{S_KS + 2}",
         f"v_add_u32 v{V_KOFF}, v{V_KOFF}, v{R_KPART}",
         f"v_mov_b32 v{t}, s{S_SEQM1}",
         f"v_mul_lo_u32 v{V_KMAX}, v{t}, s{S_KS + 2}",
         f"v_add_u32 v{V_KMAX}, v{V_KMAX}, v{R_KPART}",
         f"v_mov_b32 v{V_KSTEP}, s{S_KS + 2}",
         f"v_lshlrev_b32 v{V_KSTEP}, 7, v{V_KSTEP}",
         f"s_lshl_b32 s{S_K8}, s{S_KS + 2}, 3",
         f"v_mul_lo_u32 v{V_VMAX}, v{t}, s{S_VS + 2}",
         f"v_add_u32 v{V_VMAX}, v{V_VMAX}, v{R_DG16}",
         f"v_mov_b32 v{V_VSTEP}, s{S_VS + 2}",
         f"v_lshlrev_b32 v{V_VSTEP}, 7, v{V_VSTEP}"]
    for i in range(4):
        b += [f"v_add_u32 v{t + 1}, {i}, v{R_KG4}",
              f"v_mul_lo_u32 v{V_VOFF + i}, v{t + 1}, s{S_VS + 2}",
              f"v_add_u32 v{V_VOFF + i}, v{V_VOFF + i}, v{R_DG16}"]
    return b


def issue_loads():
    """Global loads of the K and V rows of the next key tile into V_PF, then the offsets move
    on by one key tile."""
    b = ["// K: rows min(key0 + 32 w + l/8 + 8 i, seqlen - 1), bytes 16 (l%8) .. +15"]
    for i in range(4):
        if i == 0:
            b.append(f"v_min_u32 v{V_T + 8}, v{V_KOFF}, v{V_KMAX}")
        else:
            b += [f"v_add_u32 v{V_T + 9}, s{S_K8}, v{V_T + 9 if i > 1 else V_KOFF}",
                  f"v_min_u32 v{V_T + 8}, v{V_T + 9}, v{V_KMAX}"]
        b.append(f"global_load_dwordx4 {vr(V_PF + 4 * i, 4)}, v{V_T + 8}, s[{S_KB}:{S_KB + 1}]")
    b.append("// V: rows min(key0 + 4 (t/8) + i, seqlen - 1), dv 16 (t%8) .. +15")
    for i in range(4):
        b += [f"v_min_u32 v{V_T + 4 + i}, v{V_VOFF + i}, v{V_VMAX}",
              f"global_load_dwordx4 {vr(V_PF + 16 + 4 * i, 4)}, v{V_T + 4 + i}, s[{S_VB}:{S_VB + 1}]"]
    b.append(f"v_add_u32 v{V_KOFF}, v{V_KSTEP}, v{V_KOFF}")
    b += [f"v_add_u32 v{V_VOFF + i}, v{V_VSTEP}, v{V_VOFF + i}" for i in range(4)]
    return b


def store_lds():
    """The loaded key tile into LDS: K row-major, V transposed (Vt[dv][key])."""
    b = ["s_waitcnt vmcnt(0)"]
    for i in range(4):
        b.append(f"ds_write_b128 v{V_KW}, {vr(V_PF + 4 * i, 4)} offset:{K_ROWS_PER_LOAD * KROW * i}")
    b += diagonal_v_check()
    b += ["// 4 keys x 4 dv bytes per dword group -> 4 dv rows x 4 keys (v_perm_b32 byte selects:",
          "// 0-3 the second source, 4-7 the first; VOP3 takes no literal, so they sit in SGPRs)",
          f"s_mov_b32 s{S_X}, 0x05010400",
          f"s_mov_b32 s{S_X + 1}, 0x07030602",
          f"s_mov_b32 s{S_Y}, 0x05040100",
          f"s_mov_b32 s{S_Y + 1}, 0x07060302"]
    for w in range(4):
        a, bb, c, d = (V_PF + 16 + 4 * i + w for i in range(4))
        t = V_T
        b += [f"v_perm_b32 v{t}, v{bb}, v{a}, s{S_X}",      # a0 b0 a1 b1
              f"v_perm_b32 v{t + 1}, v{bb}, v{a}, s{S_X + 1}",  # a2 b2 a3 b3
              f"v_perm_b32 v{t + 2}, v{d}, v{c}, s{S_X}",   # c0 d0 c1 d1
              f"v_perm_b32 v{t + 3}, v{d}, v{c}, s{S_X + 1}",   # c2 d2 c3 d3
              f"v_perm_b32 v{V_S + 4 * w + 0}, v{t + 2}, v{t}, s{S_Y}",
              f"v_perm_b32 v{V_S + 4 * w + 1}, v{t + 2}, v{t}, s{S_Y + 1}",
              f"v_perm_b32 v{V_S + 4 * w + 2}, v{t + 3}, v{t + 1}, s{S_Y}",
              f"v_perm_b32 v{V_S + 4 * w + 3}, v{t + 3}, v{t + 1}, s{S_Y + 1}"]
    for r in range(16):
        if r == 8:
            # 4 + 8 LDS writes outstanding: keep the count within the 15 lgkmcnt can hold
            b.append("s_waitcnt lgkmcnt(4)")
        b.append(f"ds_write_b32 v{V_VW}, v{V_S + r} offset:{r * VROW}")
    return b


def diagonal_v_check():
    """In the diagonal key tile only: the wave's smallest key (tile offset) with a NaN code in
    the V bytes it staged (keys 32 w .. 32 w + 31, every dv) goes to LDS word w, and those
    codes are zeroed, so that a masked P of 0 never multiplies a NaN. A byte x is NaN when
    (x & 0x7f) + 1 carries into bit 7; per dword, 0x80 then marks each NaN byte."""
    t = V_T
    skip, clean = L("not_diagonal"), L("v_finite")
    v = [V_PF + 16 + 4 * i + w for i in range(4) for w in range(4)]  # key 4 (t/8) + i, dword w
    b = [f"s_add_u32 s{S_T1}, s{S_KT}, 1",
         f"s_cmp_lt_u32 s{S_T1}, s{S_NKT}",
         f"s_cbranch_scc1 {skip}",
         "// NaN marks of staged key i, OR over its 4 dwords, in v[t+4+i]"]
    for i in range(4):
        for w in range(4):
            r = v[4 * i + w]
            dst = t + 4 + i if w == 0 else t + 8
            b += [f"v_and_b32 v{dst}, 0x7f7f7f7f, v{r}",
                  f"v_add_u32 v{dst}, 0x1010101, v{dst}",
                  f"v_and_b32 v{dst}, 0x80808080, v{dst}"]
            if w:
                b.append(f"v_or_b32 v{t + 4 + i}, v{t + 4 + i}, v{t + 8}")
    b += ["// lanes 8 g' .. 8 g' + 7 stage keys 32 w + 4 g' .. +3: the first lane l of the ballot of",
          "// staged key i is key 32 w + 4 (l/8) + i; s_ff1 of 0 is -1, which makes the key huge",
          "// (0x7ffffffc + the rest: none)",
          f"s_mov_b32 s{S_BADV}, -1",
          f"s_lshl_b32 s{S_T1}, s{S_WAVE}, 5"]
    for i in range(4):
        b += [f"v_cmp_ne_u32_e64 s[{S_X}:{S_X + 1}], 0, v{t + 4 + i}",
              f"s_ff1_i32_b64 s{S_Y}, s[{S_X}:{S_X + 1}]",
              f"s_lshr_b32 s{S_Y}, s{S_Y}, 3",
              f"s_lshl_b32 s{S_Y}, s{S_Y}, 2",
              f"s_add_u32 s{S_Y}, s{S_Y}, s{S_T1}",
              f"s_add_u32 s{S_Y}, s{S_Y}, {i}",
              f"s_min_u32 s{S_BADV}, s{S_BADV}, s{S_Y}"]
    b += [f"s_min_u32 s{S_BADV}, s{S_BADV}, {TILE}",
          f"s_cmp_ge_u32 s{S_BADV}, {TILE}",
          f"s_cbranch_scc1 {clean}",
          "// zero the NaN bytes: mask = marks | (marks - (marks >> 7)), x & ~mask"]
    for r in v:
        b += [f"v_and_b32 v{t + 8}, 0x7f7f7f7f, v{r}",
              f"v_add_u32 v{t + 8}, 0x1010101, v{t + 8}",
              f"v_and_b32 v{t + 8}, 0x80808080, v{t + 8}",
              f"v_lshrrev_b32 v{t + 9}, 7, v{t + 8}",
              f"v_sub_u32 v{t + 9}, v{t + 8}, v{t + 9}",
              f"v_or_b32 v{t + 8}, v{t + 8}, v{t + 9}",
              f"v_bfi_b32 v{r}, v{t + 8}, 0, v{r}"]
    b += [f"{clean}:",
          f"s_lshl_b32 s{S_T1}, s{S_WAVE}, 2",
          f"v_mov_b32 v{t + 8}, s{S_T1}",
          f"v_mov_b32 v{t + 9}, s{S_BADV}",
          f"ds_write_b32 v{t + 8}, v{t + 9} offset:{BADV_BASE}",
          f"{skip}:"]
    return b


def stage_kv():
    """Key tile kt (loaded during tile kt - 1, or before the loop) into LDS; the loads of tile
    kt + 1 go out right after, so their latency hides behind this tile's MFMAs and softmax."""
    skip = L("no_prefetch")
    b = store_lds()
    b += [f"s_add_u32 s{S_T1}, s{S_KT}, 1",
          f"s_cmp_lt_u32 s{S_T1}, s{S_NKT}",
          f"s_cbranch_scc0 {skip}"]
    b += issue_loads()
    b += [f"{skip}:", "s_waitcnt lgkmcnt(0)", "s_barrier"]
    return b


def k_reads(half: int):
    """K operands of the 64-key block `half` (score blocks 2 half and 2 half + 1) into V_KOP:
    16 registers per score block, d 0..63 then 64..127."""
    return [f"ds_read_b128 {vr(V_KOP + 16 * i + 8 * c + 4 * part, 4)}, v{V_KR} "
            f"offset:{32 * (2 * half + i) * KROW + 64 * c + 32 * part}"
            for i in range(2) for c in range(2) for part in range(2)]


def qk_mfmas(i: int):
    """Score block i of the current 64-key block (32 keys) = K Q^T into V_S + 16 i."""
    out = []
    for c in range(2):
        src_c = "0" if c == 0 else vr(V_S + 16 * i, 16)
        out.append(f"{MFMA} {vr(V_S + 16 * i, 16)}, {vr(V_KOP + 16 * i + 8 * c, 8)}, {vr(V_Q + 8 * c, 8)}, "
                   f"{src_c}, v{V_127}, v{V_127} op_sel_hi:[0,0,0]")
    return out


def qk(half: int):
    """S^T of the 64-key block `half` = K Q^T. Block 0 reads its K operands here (block 1's
    are read while block 0's softmax runs: an MFMA reads SrcA/B at issue, so the registers
    can be refilled right after the MFMAs that use them went out)."""
    if half == 0:
        b = k_reads(0) + ["s_waitcnt lgkmcnt(4)", "s_setprio 1"] + qk_mfmas(0)
        b += ["s_waitcnt lgkmcnt(0)"] + qk_mfmas(1) + ["s_setprio 0"] + k_reads(1)
    else:
        b = ["s_waitcnt lgkmcnt(0)"] + qk_mfmas(0) + qk_mfmas(1) + ["s_setprio 0"]
    return b + MFMA_READ_NOPS


def mask_setup():
    """In the diagonal key tile: the NaN-in-V key over the 4 waves and the mask distances."""
    t = V_T
    return [
        "// the smallest key with a NaN in V over the 4 waves (written before the barrier)",
        f"v_mov_b32 v{t + 4}, 0",
        f"ds_read_b128 {vr(t, 4)}, v{t + 4} offset:{BADV_BASE}",
        "s_waitcnt lgkmcnt(0)",
        f"v_min3_u32 v{t}, v{t}, v{t + 1}, v{t + 2}",
        f"v_min_u32 v{t}, v{t}, v{t + 3}",
        "s_nop 0",
        f"v_readfirstlane_b32 s{S_BADV}, v{t}",
        f"s_lshl_b32 s{S_T0}, s{S_KT}, 7",
        f"s_add_u32 s{S_BADV}, s{S_BADV}, s{S_T0}",
        "// dm0 = qrow - (key0 + 4h), dm1 = dm0 - 64: element (i, r) of 64-key block half is at key",
        "// offset 32 i + 8 (r/4) + r%4 of the block and stays when that offset <= dm_half",
        f"s_lshl_b32 s{S_T0}, s{S_KT}, 7",
        f"v_lshl_add_u32 v{V_DM0}, v{V_H}, 2, s{S_T0}",
        f"v_sub_u32 v{V_DM0}, v{V_QROW}, v{V_DM0}",
        f"v_subrev_u32 v{V_DM1}, 64, v{V_DM0}",
    ]


def mask_block(half: int):
    """Keys past the row (causal) or past seqlen get -inf; only the diagonal key tile has any."""
    b = mask_setup() if half == 0 else []
    dm = V_DM0 if half == 0 else V_DM1
    elems = [(i, r) for i in range(2) for r in range(16)]
    masks = [f"s[{S_X}:{S_X + 1}]", f"s[{S_Y}:{S_Y + 1}]", "vcc"]
    for g in range(0, len(elems), 3):
        group = elems[g:g + 3]
        for n, (i, r) in enumerate(group):
            b.append(f"v_cmp_le_i32_e64 {masks[n]}, {32 * i + 8 * (r // 4) + r % 4}, v{dm}")
        if len(group) < 3:
            b.append("s_nop 1")
        for n, (i, r) in enumerate(group):
            s = V_S + 16 * i + r
            b.append(f"v_cndmask_b32_e64 v{s}, v{V_NEGINF}, v{s}, {masks[n]}")
    return b


def max_of(dst: int, regs):
    b = [f"v_max3_f32 v{dst}, v{regs[0]}, v{regs[1]}, v{regs[2]}"]
    rest = regs[3:]
    while rest:
        if len(rest) >= 2:
            b.append(f"v_max3_f32 v{dst}, v{dst}, v{rest[0]}, v{rest[1]}")
            rest = rest[2:]
        else:
            b.append(f"v_max_f32 v{dst}, v{dst}, v{rest[0]}")
            rest = []
    return b


def large_m_check():
    """S_LARGE = 1 when some row's running maximum reached LARGE_M in magnitude. m only moves
    in the rescale path (always on the first key block), so the flag is set there."""
    return [f"s_mov_b32 s{S_T1}, {f32(LARGE_M)}",
            f"v_cmp_lt_f32_e64 s[{S_Y}:{S_Y + 1}], s{S_T1}, |v{V_M}|",
            f"s_cmp_lg_u64 s[{S_Y}:{S_Y + 1}], 0",
            f"s_cselect_b32 s{S_LARGE}, 1, 0"]


def rescale_accumulators():
    """O and L (AGPRs) times alpha, 8 at a time through the P operand (free until lean P; the
    K operand registers hold the next block's K by now)."""
    b = []
    for first in range(0, AGPRS, 8):
        b += [f"v_accvgpr_read_b32 v{V_P + i}, a{first + i}" for i in range(8)]
        b += [f"v_pk_mul_f32 {vr(V_P + i, 2)}, {vr(V_P + i, 2)}, v[{V_ALPHA}:{V_ALPHA + 1}] op_sel_hi:[1,0]"
              for i in range(0, 8, 2)]
        b += [f"v_accvgpr_write_b32 a{first + i}, v{V_P + i}" for i in range(8)]
    return b


def softmax():
    """Softmax of the current 64-key block (the lane's 32 scores in V_S) into the P codes."""
    t = V_T
    b = ["// block maximum (raw accumulator units) over the lane's 32 scores, then with the partner lane"]
    b += max_of(V_BM, [V_S + i for i in range(32)])
    b += ["// lanes j and j + 32 exchange their maxima (v_permlane32_swap: lanes 32-63 of the first",
          "// operand with lanes 0-31 of the second), no LDS round trip",
          f"v_mov_b32 v{t}, v{V_BM}",
          "s_nop 1",
          f"v_permlane32_swap_b32 v{t}, v{V_BM}",
          f"v_max_f32 v{V_BM}, v{V_BM}, v{t}",
          "// block max in base-2 score units; lazy rescaling: m moves only beyond the threshold",
          f"v_mul_f32 v{t}, v{V_BM}, v{V_F}",
          f"v_sub_f32 v{t + 1}, v{t}, v{V_M}",
          f"v_mov_b32 v{t + 2}, v{V_M}",
          f"v_cmp_lt_f32 vcc, {f32(RESCALE_THRESHOLD)}, v{t + 1}",
          "s_nop 1",
          f"v_cndmask_b32 v{V_M}, v{V_M}, v{t}, vcc",
          f"s_and_b64 s[{S_X}:{S_X + 1}], vcc, exec",
          f"v_sub_f32 v{t + 2}, v{t + 2}, v{V_M}",
          "// alpha = 2^(m_old - m_new): 1 where m stays, 0 on the first key block (m_old = -inf)",
          f"v_exp_f32 v{V_ALPHA}, v{t + 2}",
          "s_nop 0"]
    skip = L("no_rescale")
    b += [f"s_cmp_eq_u64 s[{S_X}:{S_X + 1}], 0", f"s_cbranch_scc1 {skip}"]
    b += rescale_accumulators() + large_m_check()
    b += [f"{skip}:"]
    b += ["// k = clamp(floor(m - block max), 0, 126 - lift) + lift: the block max is written as about",
          "// 2^lift, so lean P keeps 8 more binades below it in normal codes (e4m3 reaches 448 = 2^8.8;",
          "// P <= 2^(lift + 0.125)); addend C = bias + 8 (k - m); scale byte 127 - k",
          f"v_sub_f32 v{t}, v{t}, v{V_M}",
          f"v_floor_f32_e64 v{t}, -v{t}",
          f"v_max_f32 v{t}, 0, v{t}",
          f"v_min_f32 v{t}, {f32(126.0 - BLOCK_LIFT)}, v{t}",
          f"v_add_f32 v{t}, {f32(float(BLOCK_LIFT))}, v{t}",
          f"v_sub_f32 v{t + 1}, v{t}, v{V_M}",
          f"v_mul_f32 v{t + 1}, 0x41000000, v{t + 1}",
          f"v_add_f32 v{V_C}, v{V_BIAS}, v{t + 1}",
          f"v_cvt_u32_f32 v{t}, v{t}",
          f"v_sub_u32 v{V_SC}, 0x7f, v{t}"]
    b += ["// lean P: code = trunc(8 * scale * acc + C), two multiply-adds per packed instruction",
          "// (multiplier and addend from the low dword of their pairs); each truncating conversion",
          "// writes its code straight into its byte of the P operand (SDWA dst_sel, other bytes",
          "// kept), byte-major so that writes to one dword are 8 instructions apart (a partial",
          "// write needs 1 wait state before the register is read again)"]
    large, codes = L("large_scores"), L("p_codes")
    b += [f"s_cmp_lg_u32 s{S_LARGE}, 0",
          f"s_cbranch_scc1 {large}"]
    for r in range(0, 32, 2):
        s = V_S + r
        b.append(f"v_pk_fma_f32 {vr(s, 2)}, {vr(s, 2)}, {vr(V_F8, 2)}, {vr(V_C, 2)} op_sel_hi:[1,0,0]")
    b += [f"{codes}:"]
    OUT_OF_LINE.extend(lean_p_large_scores(large, codes))
    # P dword 4 i + e holds score registers 4e .. 4e + 3 of score block i
    for byte in range(4):
        for i in range(2):
            for e in range(4):
                b.append(f"v_cvt_u32_f32_sdwa v{V_P + 4 * i + e}, v{V_S + 16 * i + 4 * e + byte} "
                         f"dst_sel:BYTE_{byte} dst_unused:UNUSED_PRESERVE src0_sel:DWORD")
    return b


def lean_p_large_scores(label: str, back: str):
    """Lean P's 8x + C for a wave in which some row's running maximum m is at least LARGE_M
    in magnitude (out of line; taken only for such scores). The one multiply-add folds -8m
    into C, whose rounding then loses lean P's bias: at |m| = 2^24 a code is off by a whole
    binade and far beyond, the conversion's low byte is any code, NaN included. Here
    x = F acc - m is formed first (the product rounded as m itself was, so the row maximum
    gets x = 0 exactly), then 8x + (bias + 8k): three packed instructions per two scores."""
    t = V_T
    c = t + 6
    b = [f"{label}:",
         f"v_mov_b32 v{t}, v{V_F}",
         f"v_xor_b32 v{t + 2}, 0x80000000, v{V_M}",
         f"v_mov_b32 v{t + 4}, 0x41000000",
         f"v_sub_u32 v{c}, 0x7f, v{V_SC}",  # k
         f"v_cvt_f32_u32 v{c}, v{c}",
         f"v_mul_f32 v{c}, 0x41000000, v{c}",
         f"v_add_f32 v{c}, v{V_BIAS}, v{c}"]
    for r in range(0, 32, 2):
        s = vr(V_S + r, 2)
        b += [f"v_pk_mul_f32 {s}, {s}, {vr(t, 2)} op_sel_hi:[1,0]",
              f"v_pk_add_f32 {s}, {s}, {vr(t + 2, 2)} op_sel_hi:[1,0]",
              f"v_pk_fma_f32 {s}, {s}, {vr(t + 4, 2)}, {vr(c, 2)} op_sel_hi:[1,0,0]"]
    b.append(f"s_branch {back}")
    return b


def pv(half: int):
    """O^T += V^T P^T and L += ones P^T for the 64-key block `half`, P scaled back by 2^-k.

    The V^T operand of dv block J is 4 ds_read2_b32 from the lane's Vt row of J (V_VR + J rows
    of 32) into V_S + 8 J (the scores are codes in V_P by now). Reads run three operands ahead
    of the MFMAs (at most 12 LDS operations outstanding, under the 15 of lgkmcnt; LDS results
    return in order)."""
    def reads(J):
        out = []
        for e in range(0, 8, 2):
            off = 16 * half + 2 * (e % 4) + 8 * (e // 4)  # dwords; e + 1 is 2 dwords further
            out.append(f"ds_read2_b32 {vr(V_S + 8 * J + e, 2)}, v{V_VRJ[J]} offset0:{off} offset1:{off + 2}")
        return out

    ahead = 3
    b = ["s_setprio 1"]
    for J in range(ahead):
        b += reads(J)
    for J in range(4):
        issued = min(4, J + ahead)
        b.append(f"s_waitcnt lgkmcnt({4 * (issued - J - 1)})")
        if J + ahead < 4:
            b += reads(J + ahead)
        o = f"a[{A_O + 16 * J}:{A_O + 16 * J + 15}]"
        b.append(f"{MFMA} {o}, {vr(V_S + 8 * J, 8)}, {vr(V_P, 8)}, {o}, "
                 f"v{V_127}, v{V_SC} op_sel_hi:[0,0,0]")
    lreg = f"a[{A_L}:{A_L + 15}]"
    b.append(f"{MFMA} {lreg}, {vr(V_ONES, 8)}, {vr(V_P, 8)}, {lreg}, "
             f"v{V_127}, v{V_SC} op_sel_hi:[0,0,0]")
    # the first block's P V runs straight into the second block's scores (one MFMA phase)
    return b + (["s_setprio 0"] if half == 1 else [])


def key_block(half: int):
    """One 64-key block of the key tile: scores, the diagonal tile's mask, softmax, P V."""
    unmasked = L("unmasked")
    b = qk(half)
    b += [f"s_add_u32 s{S_T0}, s{S_KT}, 1",
          f"s_cmp_lt_u32 s{S_T0}, s{S_NKT}",
          f"s_cbranch_scc1 {unmasked}"]
    b += mask_block(half)
    b += [f"{unmasked}:"]
    b += softmax()
    b += pv(half)
    return b


def epilogue():
    t = V_T
    b = MFMA_READ_NOPS + [
        "// out = O * (dv / L), BF16 RNE; rows past seqlen are not stored",
        f"v_accvgpr_read_b32 v{t + 4}, a{A_L}",
        f"v_rcp_f32 v{t}, v{t + 4}",
        "s_nop 0",
        f"v_mul_f32 v{t}, s{S_VDS}, v{t}",
        "// rows at or after the diagonal tile's first key with a NaN in V saw it: NaN output",
        f"v_cmp_gt_u32 vcc, s{S_BADV}, v{V_QROW}",
        f"v_mov_b32 v{t + 5}, {f32(float('nan'))}",
        "s_nop 0",
        f"v_cndmask_b32 v{t}, v{t + 5}, v{t}, vcc",
    ]
    b += [f"v_accvgpr_read_b32 v{V_S + i}, a{A_O + i}" for i in range(64)]
    for i in range(64):
        b.append(f"v_mul_f32 v{V_S + i}, v{t}, v{V_S + i}")
    # pair i lands in V_S + i, never above the registers it reads (2i, 2i + 1)
    for i in range(32):
        b.append(f"v_cvt_pk_bf16_f32 v{V_S + i}, v{V_S + 2 * i}, v{V_S + 2 * i + 1}")
    # out base of (b, h) in bytes: out + 2 (b * os0 + h * os2)
    b += [f"s_mov_b64 s[{S_X}:{S_X + 1}], 0"]
    b += mad64(S_X, S_OS, S_B) + mad64(S_X, S_OS + 4, S_H)
    b += [f"s_lshl_b64 s[{S_X}:{S_X + 1}], s[{S_X}:{S_X + 1}], 1",
          f"s_add_u32 s{S_X}, s{S_X}, s{S_OUT}",
          f"s_addc_u32 s{S_X + 1}, s{S_X + 1}, s{S_OUT + 1}",
          f"v_mul_lo_u32 v{t + 1}, v{V_QROW}, s{S_OS + 2}",
          f"v_lshlrev_b32 v{t + 1}, 1, v{t + 1}",
          f"v_lshl_add_u32 v{t + 1}, v{V_H}, 4, v{t + 1}",
          f"v_cmp_gt_i32 vcc, s{S_SEQ}, v{V_QROW}",
          f"s_and_saveexec_b64 s[{S_Y}:{S_Y + 1}], vcc"]
    # Registers 4g..4g+3 of block J hold dv 32J + 8g + 4h .. +3 as 2 dwords: the two lanes of a
    # row each hold 8 bytes of every 16. Lanes j and j + 32 swap (v_permlane32_swap, EXEC
    # ignored) the upper half's first 8 bytes of each 32 with the lower half's last 8, so that
    # lane h holds dv 32J + 16p + 8h .. +7 in 4 consecutive registers: one 16-byte store per
    # lane, 8 stores instead of 16, each output line requested from the L2 half as often.
    b += ["// 16 contiguous bytes per lane: lanes 0-31 keep dv +0..7 of each 16, lanes 32-63 take +8..15"]
    for J in range(4):
        for p in range(2):
            base = V_S + 8 * J + 4 * p
            b += [f"v_permlane32_swap_b32 v{base}, v{base + 2}", f"v_permlane32_swap_b32 v{base + 1}, v{base + 3}"]
    for J in range(4):
        for p in range(2):
            src = V_S + 8 * J + 4 * p
            b.append(f"global_store_dwordx4 v{t + 1}, {vr(src, 4)}, s[{S_X}:{S_X + 1}] offset:{2 * (32 * J + 16 * p)}")
    done = L("no_lse")
    b += ["// LSE (natural log) from the rounded P: ln 2 (m + log2 L), by the lanes of the first half",
          f"s_cmp_eq_u64 s[{S_LSE}:{S_LSE + 1}], 0",
          f"s_cbranch_scc1 {done}",
          f"v_cmp_eq_u32 vcc, 0, v{V_H}",
          "s_nop 1",
          "s_and_b64 exec, exec, vcc",
          f"v_log_f32 v{t + 2}, v{t + 4}",
          "s_nop 0",
          f"v_add_f32 v{t + 2}, v{V_M}, v{t + 2}",
          f"v_mul_f32 v{t + 2}, {f32(LN2)}, v{t + 2}",
          f"s_mul_i32 s{S_T0}, s{S_B}, s{S_HEADS}",
          f"s_add_u32 s{S_T0}, s{S_T0}, s{S_H}",
          f"s_mul_i32 s{S_X}, s{S_T0}, s{S_SEQ}",
          f"s_mul_hi_u32 s{S_X + 1}, s{S_T0}, s{S_SEQ}",
          f"s_lshl_b64 s[{S_X}:{S_X + 1}], s[{S_X}:{S_X + 1}], 2",
          f"s_add_u32 s{S_X}, s{S_X}, s{S_LSE}",
          f"s_addc_u32 s{S_X + 1}, s{S_X + 1}, s{S_LSE + 1}",
          f"v_lshlrev_b32 v{t + 3}, 2, v{V_QROW}",
          f"global_store_dword v{t + 3}, v{t + 2}, s[{S_X}:{S_X + 1}]",
          f"{done}:",
          "// the workgroup is always full: every lane comes back",
          "s_mov_b64 exec, -1"]
    return b


def body():
    b = prologue()
    b += [".Ljob_loop:",
          f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
          "s_cbranch_scc1 .Ldone",
          f"s_add_u32 s{S_T0}, s{S_G}, s{S_WORD}",
          f"s_add_u32 s{S_T0}, s{S_T0}, 3",
          f"s_lshl_b32 s{S_T0}, s{S_T0}, 2",
          f"s_load_dword s{S_TW}, s[{S_JT}:{S_JT + 1}], s{S_T0}",
          "s_waitcnt lgkmcnt(0)",
          f"s_add_u32 s{S_WORD}, s{S_WORD}, 1",
          f"s_cmp_eq_u32 s{S_TW}, -1",
          "s_cbranch_scc1 .Ljob_loop"]
    b += tile_setup()
    b += [".Lkey_loop:"]
    b += stage_kv()
    b += key_block(0)
    b += ["// in the diagonal key tile, waves 0 and 1 (rows 0 .. 63 of the query tile) see none",
          "// of keys 64 .. 127: their second block is all zeros of P and is skipped",
          f"s_add_u32 s{S_T0}, s{S_KT}, 1",
          f"s_cmp_lt_u32 s{S_T0}, s{S_NKT}",
          "s_cbranch_scc1 .Lsecond_block",
          f"s_cmp_lt_u32 s{S_WAVE}, 2",
          "s_cbranch_scc1 .Lkey_tile_end",
          ".Lsecond_block:"]
    b += key_block(1)
    b += [".Lkey_tile_end:",
          "// every wave is done with this tile's LDS before the next one overwrites it",
          "s_waitcnt lgkmcnt(0)",
          "s_barrier",
          f"s_add_u32 s{S_KT}, s{S_KT}, 1",
          f"s_cmp_lt_u32 s{S_KT}, s{S_NKT}",
          "s_cbranch_scc1 .Lkey_loop"]
    b += epilogue()
    b += ["s_branch .Ljob_loop", ".Ldone:", "s_endpgm"]
    b += OUT_OF_LINE
    return b


def print_stats():
    """Static counts of one 128-key tile of the key loop (steady state: no mask, no rescale),
    and what the diagonal tile's mask and a rescale add (schedule_stats.py has the rates)."""
    steady = stage_kv()
    for half in range(2):
        steady += qk(half) + softmax() + pv(half)
    steady += ["s_waitcnt lgkmcnt(0)", "s_barrier", "s_add_u32", "s_cmp_lt_u32", "s_cbranch_scc1"]
    rescale = rescale_accumulators() + large_m_check()
    diagonal = diagonal_v_check()[3:]  # what the branch at its top skips off the diagonal
    steady = [l for l in steady if l not in rescale and l not in diagonal]
    print(schedule_stats.report("key tile (128 keys x 32 queries per wave), steady state",
                                schedule_stats.count(steady)))
    print(schedule_stats.report("  + diagonal tile mask", schedule_stats.count(mask_block(0) + mask_block(1))))
    print(schedule_stats.report("  + diagonal tile V NaN check (zeroing only when one is found)",
                                schedule_stats.count(diagonal_v_check())))
    print(schedule_stats.report("  + rescale (when a row's max grows by more than 0.125), large-max flag",
                                schedule_stats.count(rescale)))
    print(schedule_stats.report("epilogue per query tile", schedule_stats.count(epilogue())))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--stats":
        print_stats()
        return
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)  # usage: the one argument is the output .s path
    k = Kernel(name="attn_fwd_fp8_d128", body=body(), kernarg_size=ARGS_SIZE,
               workgroup_size=THREADS, next_free_vgpr=NEXT_VGPR, next_free_sgpr=NEXT_SGPR,
               lds_bytes=LDS_BYTES, agprs=AGPRS)
    text = emit([k], ["Generated by src/asm/gen_attn_fwd_fp8_d128.py; do not edit.",
                      "Causal FP8 e4m3 attention, d = 128, for gfx950 (see the generator)."])
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
