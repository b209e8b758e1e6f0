#!/usr/bin/env python3
"""Generates attn_fwd_fp8_d{128,192}_asm.s: causal FP8 e4m3 attention, d_qk = 128 or 192 and
d_v = 128, for gfx950.

Kernel attn_fwd_fp8_d<d_qk> (code object attn_fwd_fp8_d<d_qk>_asm), 512 threads (8 waves), kernel
arguments AttnFwdArgs (src/kernels/hip/attn_fwd_args.h, 272 bytes), job table host/job_table.h
with 256-row tiles. Rows are addressed as a 64-bit scalar base per (batch, head) plus a 32-bit
lane offset; src/host/amd/attn_launch.cpp sends larger problems to the HIP kernel.

Work split. A persistent workgroup (one per CU) walks its jobs' tile words; a tile is 256 query
rows, wave w owns rows 32w' .. 32w'+31, w' = w ^ 4 (ROW_SWAP). The kernel takes 256 VGPRs per
lane and no AGPRs (two waves per SIMD). The key loop runs over 64-key blocks 0 .. 4t + 3 of query tile t (the
online-softmax step), with one workgroup barrier per block, in ping-pong: waves 0-3 meet it
before their matrix phase, waves 4-7 after it, so between two barriers waves 0-3 run matrix
phase j (P V of block j, then the scores of block j + 1) and then the softmax of block j + 1,
while waves 4-7 run the softmax of block j and then matrix phase j: on each SIMD one wave's
MFMAs meet the other's vector work. Matrix phases run at s_setprio 1. Per block:
  1. staging (in the vector phase): all 512 threads store a 128-key tile's K (row-major into
     LDS) in one block and its V (row-major, 16-byte chunks swizzled, read transposed by
     ds_read_b64_tr_b8) in the next, into the second of two buffers each, from global loads issued two
     blocks earlier (stage() says why the buffers never meet a read);
  2. scores transposed, S^T = K Q^T: K (from LDS) is the A operand of
     v_mfma_scale_f32_32x32x64_f8f6f4 (one per 64 of d_qk), Q (registers, whole tile) the B operand, so lane
     32h + j holds query j's scores of keys 8(r/4) + 4h + r%4 of each 32-key score block in
     accumulator register r;
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
     into the row-sum accumulator L (O and L are VGPRs);
  5. after the last block: out = O * (dv / L) rounded to BF16 (RNE), LSE = ln 2 (m + log2 L)
     (in a sequence's first 64 rows with the unrounded 2^x instead of the rounded P: lse_row_sum());
     the next query tile's Q and key tile 0 loads go out between the epilogue's reads of
     L and m and its output math, so that the math and the stores cover their latency.
     A wave's output rows pass through LDS, so that each store writes 4 whole rows
     (output_through_lds()); fixed-length kernels also swap the wave groups' roles every
     tile (S_ROLE): the waves that trailed a tile, whose output went out early, lead the next.
     Fixed-length kernels do more of this ahead of the epilogue: each wave loads the next
     tile's Q and key tile 0 once its own scores are done (early_q_loads(): waves 4-7 in
     body 4t + 1, waves 0-3 at the start of body 4t + 3), waves 4-7, whose rows end with
     block 4t + 1, store their output in body 4t + 2 (early_epilogue()), and past the
     barrier after the loop key tile 0 goes into LDS and key tile 1's loads go out before
     the output math of waves 0-3 (early_key_tile0()).
Wave w sees blocks 0 .. 4t + w'/2 (the last one through the causal mask); it skips the rest but
still meets their barriers and does its share of the staging. Rows past seqlen compute on the
last row and are never stored. NaN in V (e4m3fn has no Inf) must not reach a row that cannot
see it, and 0 (a masked P) times NaN is NaN: in the last two key tiles the staging threads zero
V's NaN codes before the transposition and record the smallest key that had one; the rows at or
after that key, which do see it, are stored as NaN. K needs nothing: a masked score is replaced
(v_cndmask), never multiplied. Wait states: 20 between an MFMA and VALU reads of its result, 2
between a VALU write of VCC/SGPR and its VALU read, 1 after a transcendental; every memory
result is waited for with s_waitcnt before use, and at most 15 LDS operations are outstanding
(what lgkmcnt counts).

--varlen: kernel attn_fwd_fp8_d<d_qk>_varlen, arguments AttnLengthsArgs
(src/kernels/hip/attn_fwd_lengths_args.h, 312 bytes): varlen batches (cu_seqlens) and
seqlen_k != seqlen_q, the same schedule with each tile's sequence read and clamped at its
setup (the "Any lengths" section below; docs/design.md "Varlen tables").

usage: gen_attn_fwd_fp8.py [--d-qk 128|192] [--varlen] OUTPUT.s
       gen_attn_fwd_fp8.py [--d-qk 128|192] [--varlen] --stats   (static instruction counts and cycle estimate per key tile)
"""

import struct
import sys

import schedule_stats
from gfx950_asm import Kernel, emit
from kernel_args import ATTN_FWD_ARGS, ATTN_LENGTHS_ARGS


def head_dim(argv) -> int:
    """d_qk from `--d-qk N` on the command line (128 or 192; 128 when absent): the whole register
    and LDS plan below follows from it, so it is read before anything is laid out."""
    if "--d-qk" not in argv:
        return 128
    at = argv.index("--d-qk")
    if at + 1 >= len(argv) or argv[at + 1] not in ("128", "192"):
        sys.exit("--d-qk takes 128 or 192")
    d = int(argv[at + 1])
    del argv[at:at + 2]
    return d


def varlen_mode(argv) -> bool:
    """`--varlen` on the command line: the any-lengths kernel (the "Any lengths" section)."""
    if "--varlen" not in argv:
        return False
    argv.remove("--varlen")
    return True


D_QK = head_dim(sys.argv)
VARLEN = varlen_mode(sys.argv)
D_V = 128
NAME = f"attn_fwd_fp8_d{D_QK}" + ("_varlen" if VARLEN else "")
NQ = D_QK // 64       # 64-wide d chunks of Q and K: MFMAs per 32-key score block
ARGS_SIZE = (ATTN_LENGTHS_ARGS if VARLEN else ATTN_FWD_ARGS).size
WAVES = 8
THREADS = 64 * WAVES
TILE_Q = 32 * WAVES   # query rows per tile (the job table's tile_rows; wave w owns 32)
# Wave w owns the tile's 32-row block w ^ ROW_SWAP: waves 0-3, whose softmax follows their
# matrix phase, take the upper half (the rows that see the most key blocks), so that a tile's
# last block is only the trailing waves' matrix phase, not also a masked softmax, and the
# waves past their diagonal block are the trailing ones (S 2K: d 128 1693.3 -> 1719.8 TFLOP/s,
# d 192/128 1826.2 -> 1851.2; docs/tuning-fp8-gfx950.md row 36)
ROW_SWAP = WAVES // 2
TILE = 128            # keys per key tile (staged into LDS together)
# LDS bytes per K row: d_qk + 16 (16-byte aligned rows whose 16-byte chunks step through the
# banks: row j starts at dword 4 (d_qk / 16 + 1) j, an odd multiple of 4, so 16 rows read at one
# column fall on 16 distinct 4-bank groups)
KROW = D_QK + 16
VROW = 128            # LDS bytes per V row (one key, row-major; read transposed by ds_read_b64_tr_b8)
KBUF = TILE * KROW    # two K buffers at 0 and KBUF (every K read's offset fits 16 bits)
VT_BASE = 2 * KBUF
VBUF = TILE * VROW    # two V buffers at VT_BASE and VT_BASE + VBUF
BADV_BASE = VT_BASE + 2 * VBUF  # 8 dwords: wave w's smallest diagonal key with a NaN in V
# A wave's output rows pass through LDS on their way out (epilogue_stores()),
# 32 rows of 256 bytes per wave, each row padded by 16 bytes (its 16-byte chunks step through
# the banks), so that every store instruction writes 4 whole rows
OUT_ROW = 2 * D_V + 16
OUT_BASE = BADV_BASE + 4 * WAVES
OUT_WAVE = 32 * OUT_ROW
LDS_BYTES = OUT_BASE + WAVES * OUT_WAVE
LEAN_BIAS = 56.25     # fp8_model.h kLeanBias (the centred code fit 56.1557, moved to unbiased row sums)
BLOCK_LIFT = 8        # fp8_model.h kLeanBlockLift: a block's maximum is written as about 2^8, not 1
RESCALE_THRESHOLD = 0.125
LARGE_M = 2.0 ** 14   # |running max| from which lean P takes the out-of-line path (8m: ulp 2^-6)
LN2 = 0.6931471805599453
LSE_OFFSET = -0.005   # fp8_model.h kLeanLseOffset: nats added to the LSE (the mean of lean P's bias)
assert D_V == 128 and KBUF + 32 * 3 * KROW + D_QK < 1 << 16


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
# this wave's smallest staged key with a NaN in V (absolute, all ones if none), until the loop
# ends; then the smallest over the workgroup
S_BADVW = S_BADV
NEXT_SGPR = 102
# s0-s7: the kernarg pointer and the workgroup id are read only by the prologue, s3-s7 not at
# all. early_q_loads() decodes the next tile into s0-s3 and s7 (temporaries of its loads), its
# Q base in s[4:5]; S_EARLYQ holds what a tile's end did ahead of the epilogue (fixed-length
# kernels): bit 0 the next tile's Q and key tile 0 loads (early_q_loads()), bit 1 this
# tile's output (early_epilogue(), waves 4-7), bit 2 key tile 0 into LDS and key tile 1's
# loads (early_key_tile0()); tile_start() clears it
S_EBH, S_ETILE, S_EB, S_EH, S_EQB, S_EARLYQ, S_EHK = 0, 1, 2, 3, 4, 6, 7
# the out base of (b, h) from epilogue_values() to epilogue_stores(): the next
# tile's Q base is no longer read once its loads went out (early_q_loads(), before the output)
S_OUTB = S_EQB
# 8 K rows in bytes (the step between a lane's K loads), in the high word of the K row stride,
# which the kernel never reads (row offsets are 32-bit: the host checks they fit)
S_K8 = S_KS + 3
# 64-key blocks this wave's rows see (the last one partly: its diagonal block), in the high word
# of the V row stride (unread too); S_NKT holds the query tile's 4 t + 4
S_NBW = S_VS + 3

# Per-tile steps of the staging rows (128 rows in bytes) and Q's sign flip (tile_setup), in
# high words of arguments the kernel never reads (the Q and output row strides', the q descale's
# batch stride's), so that no VGPR holds a value that is the same in every lane
S_KSTEP, S_VSTEP, S_QSIGN = S_QS + 3, S_OS + 3, S_DS + 1
# The wave's role in the current query tile (fixed-length kernels): its wave index with bit 2
# flipped in every other tile of the workgroup, so that the waves that lead a tile (waves
# 0-3's role: the tile's rows 128-255, the barrier before the matrix phase) are those that
# trailed the previous one, whose rows ended two blocks before its end (early_epilogue()):
# they start the next tile while the previous leaders run their epilogue. In the high word of
# the q descale's head stride (unread; the any-lengths kernel keeps S_WAVE, its roles fixed)
S_ROLE = S_WAVE if VARLEN else S_DS + 3
SWAP = not VARLEN

# The any-lengths kernel (--varlen): the tile's sequence, in words the kernel never reads
# otherwise (the descale strides' high words: the host keeps device descale offsets below
# 2^32; heads_k). Per tile (tile_geometry()): its query rows, their first row in q / out,
# the key shift lk - lq (query i sees keys j <= i + shift), and the first 64-key block of the
# key tiles whose V is checked for NaN; per kernel, the LSE's rows per (batch, head) and
# max_seqlen_k. (S_SEQM1 holds the sequence's last key row, lk - 1, during the setup.)
S_SHIFT, S_LQ, S_Q0, S_VCHK = S_DS + 3, S_DS + 5, S_DS + 7, S_DS + 9
S_LSEROWS, S_SEQK = S_HEADSK, S_DS + 11
S_LSE_ROWS = S_LSEROWS if VARLEN else S_SEQ  # LSE rows per (batch, head)
# Block b of the wave needs no mask when b + 1 < S_UNMASKED: the wave's blocks (S_NBW) but the
# diagonal one; with any lengths the rows' last keys span 32 keys from anywhere in a block,
# and those of the wave's first masked block on (mask_start(): S_SEQM1's word, which that
# kernel needs only in the tile's setup)
S_UNMASKED = S_SEQM1 if VARLEN else S_NBW


class Registers:
    """VGPRs laid out in order; tuples of two or more registers start at an even one (gfx950)."""

    def __init__(self):
        self.next = 0

    def __call__(self, n: int = 1) -> int:
        if n > 1:
            self.next += self.next % 2
        at, self.next = self.next, self.next + n
        return at


# ---- VGPRs: 256 per lane (no AGPRs), so that two waves per SIMD (8 per CU) fit a
# CU: while one wave of a SIMD runs its MFMAs, the other's softmax fills the vector pipe.
# At d_qk 192, Q (24), the K prefetch (12) and the K operands (48) grow by 28 registers over
# d_qk 128; what makes room is that every value the vector phase alone uses (temporaries, the
# block maximum, the lean-P addend, alpha, the mask's row distance) lives in the K operands'
# registers, which hold operands only from their LDS reads to the score MFMAs of the same
# matrix phase, and that values the same in every lane are SGPRs or literals.
_r = Registers()
V_TID, V_NEGINF, V_J, V_H = _r(), _r(), _r(), _r()
V_ONES = _r(8)     # e4m3 1.0 in every byte
V_P = _r(8)        # P codes of the current 64-key block
V_Q = _r(8 * NQ)   # Q as the B operand, d 0..63, 64..127 (, 128..191)
K_LOADS = NQ       # staging loads of K per thread and tile: 2 of d 0..127 (+ 1 of d 128..191)
V_PF = _r(4 * K_LOADS + 8)  # K (4 per load) and V (8) of a later key tile, loaded while earlier ones compute
V_VW2 = _r()       # V write address of the staged keys 4 g + 2, 4 g + 3 (V_VW: 4 g, 4 g + 1)
V_KW2 = _r() if NQ == 3 else None  # K write address of the d 128..191 staging (tail_roles())
V_S = _r(32)       # scores of one 64-key block (2 score blocks); V operands of the block's P V;
                   # the epilogue's values (V_OUT_ADDR ..)
V_KOP = _r(16 * NQ)  # K operands of the 2 score blocks of a 64-key block (d chunk c of block i at 8 (NQ i + c))
V_T = V_KOP        # temporaries of the vector phase (the staging, the softmax, the mask), 24 at most:
V_BM = V_T + 12    # block maximum (raw accumulator units)
V_DM0 = V_T + 13   # the diagonal block's key distance (mask_block)
V_C = V_T + 14     # lean-P addend of the block (a packed-math operand pair)
V_ALPHA = V_T + 16  # alpha (the pair: v_pk_mul)
# the LSE's row sum (lse_row_sum()): set in the diagonal block's softmax, read by the epilogue;
# nothing in between writes it (past its diagonal block a wave runs only the staging, whose
# temporaries are V_T .. V_T + 11, and its last matrix phase reads no K)
V_LSE_SUM = V_T + 18
assert V_T % 2 == 0 and V_LSE_SUM < V_KOP + 16 * NQ
V_VRJ = tuple(_r() for _ in range(4))  # V transposing-read address of dv block J
V_KOFF, V_KMAX = _r(), _r()  # staging K row: lane offset, its clamp
V_KTOFF, V_KTMAX = (_r(), _r()) if NQ == 3 else (None, None)  # the same for the d 128..191 staging
V_VOFF = _r(4)     # staging V rows' lane offsets
V_VMAX = _r()
V_M, V_F, V_QROW = _r(), _r(), _r()
V_F8 = _r(2)       # 8 |factor| (a packed-math operand pair: its second register is not read)
V_SC = V_F8 + 1    # E8M0 scale of the block
_r.next = V_SC + 1
V_KR, V_KW, V_VW, V_127 = _r(), _r(), _r(), _r()
NEXT_VGPR = 176
assert _r.next <= NEXT_VGPR, _r.next
# The accumulators are VGPRs too (MFMAs accumulate in either file): a lazy rescale multiplies
# them in place (40 packed multiplies, not 80 reads, 40 multiplies and 80 writes through AGPRs)
# and the epilogue reads them directly.
A_O = NEXT_VGPR    # v[176:239]: O^T accumulators, 4 dv blocks of 32
A_L = A_O + 64     # v[240:255]: row-sum accumulator (every register holds the row sum)
ACC_REGS = 80
assert A_O + ACC_REGS <= 256

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


def row_offset(dst: int, next_tile: bool = False):
    """dst = 32 (w ^ ROW_SWAP): the first row of this wave's rows in its tile (w: the wave's
    role, S_ROLE; `next_tile`: in the next query tile, whose role is the other)."""
    if next_tile and SWAP:
        return [f"s_lshl_b32 s{dst}, s{S_ROLE}, 5"]
    return [f"s_lshl_b32 s{dst}, s{S_ROLE}, 5", f"s_xor_b32 s{dst}, s{dst}, {32 * ROW_SWAP}"]


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
    """s_dst = ptr ? ptr[b * stride_b + hk * stride_hk] : host value; the caller waits
    (lgkmcnt(0)) before reading s_dst, once for all three descales."""
    skip = L("descale_host")
    return [f"s_mov_b32 s{dst}, s{host}",
            f"s_cmp_lg_u64 s[{ptr}:{ptr + 1}], 0",
            f"s_cbranch_scc0 {skip}",
            f"s_mul_i32 s{S_T0}, s{S_B}, s{strides}",
            f"s_mul_i32 s{S_T1}, s{S_HK}, s{strides + 2}",
            f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
            f"s_lshl_b32 s{S_T0}, s{S_T0}, 2",
            f"s_load_dword s{dst}, s[{ptr}:{ptr + 1}], s{S_T0}",
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
        f"v_mov_b32 v{V_NEGINF}, 0xff800000",
        f"v_mov_b32 v{V_127}, 0x7f",
    ]
    b += [] if VARLEN else [f"s_mov_b32 s{S_EARLYQ}, 0"]
    b += [f"v_mov_b32 v{V_ONES + i}, 0x38383838" for i in range(8)]
    b += [
        "// staging roles (see staging_roles): LDS write addresses of the K rows and Vt rows",
    ]
    b += staging_roles()
    b += [
        f"v_mul_u32_u24 v{V_KW}, {KROW}, v{R_T2}",
        f"v_add_u32 v{V_KW}, v{V_KW}, v{R_KPART}",
    ]
    if NQ == 3:
        b += tail_roles(V_T, V_T + 1)
        b += [f"v_mul_u32_u24 v{V_KW2}, {KROW}, v{V_T}", f"v_add_u32 v{V_KW2}, v{V_KW2}, v{V_T + 1}"]
    b += [
        "// V rows (keys) in 16-byte chunks, chunk c of row r at position c ^ swz(r), swz(r) =",
        "// (r & 2) | ((r >> 1) & 4) (v_swizzle() says why): the lane's 8 bytes of key 4 g + i sit",
        "// at 128 (4 g + i) + (R_DG8 ^ (16 swz)), swz = 4 ((g >> 1) & 1) + (i & 2)",
        f"v_and_b32 v{V_T}, 8, v{R_KG4}",
        f"v_lshlrev_b32 v{V_T}, 3, v{V_T}",
        f"v_xor_b32 v{V_VW}, v{R_DG8}, v{V_T}",
        f"v_xor_b32 v{V_VW2}, 32, v{V_VW}",
        f"v_lshlrev_b32 v{V_T}, 7, v{R_KG4}",
        f"v_add_u32 v{V_T}, {VT_BASE}, v{V_T}",
        f"v_add_u32 v{V_VW}, v{V_VW}, v{V_T}",
        f"v_add_u32 v{V_VW2}, v{V_VW2}, v{V_T}",
        f"v_add_u32 v{V_VW2}, {2 * VROW}, v{V_VW2}",
        "// operand reads: K row j at byte 16h; V by transposing reads (v_swizzle())",
        f"v_mul_u32_u24 v{V_KR}, {KROW}, v{V_J}",
        f"v_lshl_add_u32 v{V_KR}, v{V_H}, 4, v{V_KR}",
    ]
    b += v_read_addresses()
    b += [
        "s_waitcnt lgkmcnt(0)",
        f"s_add_u32 s{S_SEQM1}, s{S_SEQ}, -1",
    ]
    b += [] if VARLEN else [f"s_mov_b32 s{S_ROLE}, s{S_WAVE}"]
    if VARLEN:
        b += ["// the any-lengths arguments past AttnFwdArgs that every tile reads (waited for below);",
              "// S_LARGE defined before the first tile, whose block 0 may move no row's maximum",
              f"s_load_dword s{S_LSEROWS}, s[0:1], {ATTN_LENGTHS_ARGS.offset['lse_rows']:#x}",
              f"s_load_dword s{S_SEQK}, s[0:1], {ATTN_LENGTHS_ARGS.offset['seqlen_k']:#x}",
              f"s_mov_b32 s{S_LARGE}, 0"]
    b += [
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
    b += sequence_loads() if VARLEN else []
    b += ["// descales of (b, hk); the score factor scale * log2(e) * dq * dk"]
    b += load_descale(S_X, S_QDP, S_QD, S_DS)
    b += load_descale(S_X + 1, S_KDP, S_KD, S_DS + 4)
    b += load_descale(S_VDS, S_VDP, S_VD, S_DS + 8)
    b += ["// device descales: the three loads waited for together (a scalar load takes ~200 clocks)",
          "s_waitcnt lgkmcnt(0)"]
    b += [
        f"v_mov_b32 v{V_F}, s{S_SCALE}",
        f"v_mul_f32 v{V_F}, s{S_X}, v{V_F}",
        f"v_mul_f32 v{V_F}, s{S_X + 1}, v{V_F}",
        "// maxima are taken over raw accumulators, which needs factor > 0: a negative factor",
        "// (negative softmax_scale or descale) moves into Q instead, by flipping the sign bit",
        "// of every Q byte (exact), and the factor is used as |factor|; the product's sign is",
        "// the XOR of its factors' signs",
        f"s_xor_b32 s{S_QSIGN}, s{S_SCALE}, s{S_X}",
        f"s_xor_b32 s{S_QSIGN}, s{S_QSIGN}, s{S_X + 1}",
        f"s_ashr_i32 s{S_QSIGN}, s{S_QSIGN}, 31",
        f"s_and_b32 s{S_QSIGN}, s{S_QSIGN}, 0x80808080",
        f"v_and_b32 v{V_F}, 0x7fffffff, v{V_F}",
        f"v_mul_f32 v{V_F8}, 0x41000000, v{V_F}",
    ]
    b += sequence_geometry() if VARLEN else []
    b += [
        "// K and V bases of (b, hk); Q base of (b, h) in s[90:91]",
        f"s_mov_b64 s[{S_KB}:{S_KB + 1}], s[{S_K}:{S_K + 1}]",
    ]
    b += mad64(S_KB, S_KS, S_B) + mad64(S_KB, S_KS + 4, S_HK)
    b += mad_row(S_KB, S_KS + 2, S_K0) if VARLEN else []
    b += [f"s_mov_b64 s[{S_VB}:{S_VB + 1}], s[{S_V}:{S_V + 1}]"]
    b += mad64(S_VB, S_VS, S_B) + mad64(S_VB, S_VS + 4, S_HK)
    b += mad_row(S_VB, S_VS + 2, S_K0) if VARLEN else []
    b += [f"s_mov_b64 s[{S_X}:{S_X + 1}], s[{S_Q}:{S_Q + 1}]"]
    b += mad64(S_X, S_QS, S_B) + mad64(S_X, S_QS + 4, S_H)
    b += (mad_row(S_X, S_QS + 2, S_Q0) + no_keys_base()) if VARLEN else []
    b += [
        "// query row of the lane: tile * 256 + 32 wave + j; loads clamp to the last row",
        f"s_lshl_b32 s{S_T0}, s{S_TILE}, 8",
    ] + row_offset(S_T1) + [
        f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
        f"v_add_u32 v{V_QROW}, s{S_T0}, v{V_J}",
    ]
    # (any lengths: the sequence's last query row; S_SEQM1 is its last key row)
    b += [f"s_add_u32 s{S_T1}, s{S_LQ}, -1", f"v_min_u32 v{V_T}, s{S_T1}, v{V_QROW}"] if VARLEN else \
         [f"v_min_u32 v{V_T}, s{S_SEQM1}, v{V_QROW}"]
    b += [
        f"v_mul_lo_u32 v{V_T}, v{V_T}, s{S_QS + 2}",
        f"v_lshl_add_u32 v{V_T}, v{V_H}, 4, v{V_T}",
        "// Q as the B operand: d = 64c + 16h .. +15 and 64c + 32 + 16h .. +15",
    ]
    loaded = None if VARLEN else L("q_loaded")
    b += [] if VARLEN else ["// (unless early_q_loads() brought it)",
                            f"s_bitcmp1_b32 s{S_EARLYQ}, 0",
                            f"s_cbranch_scc1 {loaded}"]
    for i in range(2 * NQ):
        b.append(f"global_load_dwordx4 {vr(V_Q + 4 * i, 4)}, v{V_T}, s[{S_X}:{S_X + 1}] offset:{32 * i}")
    b += [] if VARLEN else [f"{loaded}:"]
    if VARLEN:
        b += key_block_counts()
    else:
        b += [
            "// 64-key blocks: the tile's rows see 4 t + 4 of them, this wave's 4 t + (w ^ 4)/2 + 1 (the",
            "// last one partly: the diagonal block)",
            f"s_lshl_b32 s{S_T0}, s{S_TILE}, 2",
            f"s_add_u32 s{S_NKT}, s{S_T0}, 4",
            f"s_lshr_b32 s{S_T1}, s{S_ROLE}, 1",
            f"s_xor_b32 s{S_T1}, s{S_T1}, {ROW_SWAP // 2}",
            f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
            f"s_add_u32 s{S_NBW}, s{S_T0}, 1",
        ]
    b += ["// key tile 0's loads go out before Q is waited for (K's, then V's 4, after Q's)"]
    kv_loaded = None if VARLEN else L("kv_loaded")
    b += [] if VARLEN else [f"s_bitcmp1_b32 s{S_EARLYQ}, 0", f"s_cbranch_scc1 {kv_loaded}"]
    b += init_row_offsets() + issue_k_loads() + issue_v_loads()
    b += [] if VARLEN else [f"{kv_loaded}:"]
    b += mask_start() if VARLEN else []
    return b


# ---- Any lengths (--varlen): varlen batches (cu_seqlens) and seqlen_k != seqlen_q. A tile's
# sequence is read from the prefix sums and clamped as varlen::span_of does (first rows into
# the tensors, lengths to the maxima), so that bad device values move no access out of them.
# Its geometry then sets everything the fixed-length kernel derives from the tile index:
# the bases (the sequence's first rows), the clamps (its last rows), the blocks the tile and
# each wave see (bottom-right causal: query i sees keys j <= i + lk - lq), the mask (in key
# space, across up to two blocks per wave: the diagonal is not aligned to the blocks) and
# the key tiles whose V is checked for NaN (those with a key that the tile's first row
# cannot see). Temporaries of the setup: S_KT (lk), S_BADV (k0), s[92:95] (the prefix-sum
# pointers, then total_q and total_k), s[90:91] and s[96:97] (the prefix sums of b).
S_LK, S_K0 = S_KT, S_BADV


def sequence_loads():
    """The prefix-sum pointers, loaded with the descales."""
    o = ATTN_LENGTHS_ARGS.offset
    assert o["cu_seqlens_k"] == o["cu_seqlens_q"] + 8
    return ["// the sequence's prefix-sum pointers (waited for with the descales)",
            f"s_load_dwordx4 s[{S_KB}:{S_KB + 3}], s[0:1], {o['cu_seqlens_q']:#x}"]


def clamp_span(start: int, length: int, begin: int, end: int, total: int, most: int):
    """varlen::span_of in scalar registers: start = clamp(begin, 0, total), length =
    min(clamp(end, start, total) - start, most); `end` is overwritten."""
    return [f"s_max_i32 s{start}, s{begin}, 0",
            f"s_min_i32 s{start}, s{start}, s{total}",
            f"s_max_i32 s{end}, s{end}, s{start}",
            f"s_min_i32 s{end}, s{end}, s{total}",
            f"s_sub_u32 s{length}, s{end}, s{start}",
            f"s_min_u32 s{length}, s{length}, s{most}"]


def sequence_geometry():
    """S_LQ, S_Q0, S_LK, S_K0 and S_SHIFT of the tile's sequence b: fixed lengths (no prefix
    sums) seqlen and seqlen_k rows from row 0 of batch b; varlen rows cu[b] .. cu[b + 1] of
    the packed tensors, whose one batch then makes S_B 0 (read by the bases and the LSE;
    the descales, issued already, took the sequence b). S_SEQM1: the last key row, 0 when
    the sequence has no key (no_keys_base())."""
    fixed = L("fixed_lengths")
    o = ATTN_LENGTHS_ARGS.offset
    assert o["total_k"] == o["total_q"] + 4
    b = ["// the tile's sequence: fixed lengths, or the clamped prefix sums of sequence b",
         f"s_mov_b32 s{S_LQ}, s{S_SEQ}",
         f"s_mov_b32 s{S_LK}, s{S_SEQK}",
         f"s_mov_b32 s{S_Q0}, 0",
         f"s_mov_b32 s{S_K0}, 0",
         f"s_cmp_eq_u64 s[{S_KB}:{S_KB + 1}], 0",
         f"s_cbranch_scc1 {fixed}",
         f"s_lshl_b32 s{S_T0}, s{S_B}, 2",
         f"s_load_dwordx2 s[{S_X}:{S_X + 1}], s[{S_KB}:{S_KB + 1}], s{S_T0}",
         f"s_load_dwordx2 s[{S_Y}:{S_Y + 1}], s[{S_VB}:{S_VB + 1}], s{S_T0}",
         "// the packed tensors' rows, over the pointers (read by the loads above at their issue)",
         f"s_load_dwordx2 s[{S_KB}:{S_KB + 1}], s[0:1], {o['total_q']:#x}",
         "s_waitcnt lgkmcnt(0)"]
    b += clamp_span(S_Q0, S_LQ, S_X, S_X + 1, S_KB, S_SEQ)
    b += clamp_span(S_K0, S_LK, S_Y, S_Y + 1, S_KB + 1, S_SEQK)
    b += [f"s_mov_b32 s{S_B}, 0",
          f"{fixed}:",
          f"s_sub_u32 s{S_SHIFT}, s{S_LK}, s{S_LQ}",
          f"s_add_u32 s{S_SEQM1}, s{S_LK}, -1",
          f"s_max_i32 s{S_SEQM1}, s{S_SEQM1}, 0"]
    return b


def mad_row(dst: int, stride: int, row: int):
    """s[dst:dst+1] += s_stride * s_row (both unsigned 32-bit: the row stride's low word; its
    high word holds other values, S_K8 and the like)."""
    return [f"s_mul_i32 s{S_T0}, s{stride}, s{row}",
            f"s_mul_hi_u32 s{S_T1}, s{stride}, s{row}",
            f"s_add_u32 s{dst}, s{dst}, s{S_T0}",
            f"s_addc_u32 s{dst + 1}, s{dst + 1}, s{S_T1}"]


def no_keys_base():
    """A sequence with no key (lk = 0, its first key row possibly the end of k and v) still
    stages its key tiles, which no row sees: they are read from its Q row 0 instead (the
    clamp makes every staging offset a lane's bytes of row 0, within d_qk >= d_v bytes)."""
    has_keys = L("has_keys")
    return [f"s_cmp_lg_u32 s{S_LK}, 0",
            f"s_cbranch_scc1 {has_keys}",
            f"s_mov_b64 s[{S_KB}:{S_KB + 1}], s[{S_X}:{S_X + 1}]",
            f"s_mov_b64 s[{S_VB}:{S_VB + 1}], s[{S_X}:{S_X + 1}]",
            f"{has_keys}:"]


def blocks_through(dst: int, rows_end: int):
    """s_dst = 64-key blocks that query rows before s_rows_end see: keys before
    min(lk, min(lq, rows_end) + shift), none when that is not positive (varlen key_blocks)."""
    return [f"s_min_u32 s{dst}, s{rows_end}, s{S_LQ}",
            f"s_add_u32 s{dst}, s{dst}, s{S_SHIFT}",
            f"s_min_i32 s{dst}, s{dst}, s{S_LK}",
            f"s_max_i32 s{dst}, s{dst}, 0",
            f"s_add_u32 s{dst}, s{dst}, 63",
            f"s_lshr_b32 s{dst}, s{dst}, 6"]


def mask_start():
    """S_UNMASKED = min(MB + 1, S_NBW), MB = (q0w + shift + 1) / 64 (at least 0): the first
    block with a key that the wave's first row q0w cannot see, which its mask starts at (blocks
    below it are seen whole by every row of the wave; the diagonal block S_NBW - 1 takes the
    mask in any case). MB is S_NBW - 1 or S_NBW - 2: the rows' last keys span 32."""
    t0, t1 = S_T0, S_T1
    return ["// the wave's first masked block",
            f"s_lshl_b32 s{t0}, s{S_TILE}, 8"] + row_offset(t1) + [
            f"s_add_u32 s{t0}, s{t0}, s{t1}",
            f"s_add_u32 s{t0}, s{t0}, s{S_SHIFT}",
            f"s_add_u32 s{t0}, s{t0}, 1",
            f"s_max_i32 s{t0}, s{t0}, 0",
            f"s_lshr_b32 s{t0}, s{t0}, 6",
            f"s_add_u32 s{t0}, s{t0}, 1",
            f"s_min_u32 s{S_UNMASKED}, s{t0}, s{S_NBW}"]


def key_block_counts():
    """S_NKT: the tile's 64-key blocks, at least 1 (a tile whose rows see no key runs one
    body that computes nothing, so that both wave groups meet the same barriers); S_NBW: this
    wave's (0 for rows all past the sequence); S_VCHK: twice the first key tile with a key
    that the tile's first row cannot see (the NaN check of V starts there; at most the last
    staged key tile, so that every wave's LDS word is written)."""
    t0, t1 = S_T0, S_T1
    b = ["// 64-key blocks of the tile (at least one), of this wave; the first checked key tile",
         f"s_lshl_b32 s{t0}, s{S_TILE}, 8",
         f"s_add_u32 s{t1}, s{t0}, 256"]
    b += blocks_through(S_NKT, t1)
    b += [f"s_max_u32 s{S_NKT}, s{S_NKT}, 1",
          f"s_add_u32 s{t1}, s{t0}, s{S_SHIFT}",
          f"s_add_u32 s{t1}, s{t1}, 1",
          f"s_max_i32 s{t1}, s{t1}, 0",
          f"s_lshr_b32 s{t1}, s{t1}, 7",
          f"s_lshl_b32 s{S_VCHK}, s{t1}, 1",
          f"s_add_u32 s{t1}, s{S_NKT}, -1",
          f"s_lshr_b32 s{t1}, s{t1}, 1",
          f"s_lshl_b32 s{t1}, s{t1}, 1",
          f"s_min_u32 s{S_VCHK}, s{S_VCHK}, s{t1}"] + row_offset(t1) + [
          f"s_add_u32 s{t0}, s{t0}, s{t1}",
          f"s_add_u32 s{t1}, s{t0}, 32"]
    b += blocks_through(S_NBW, t1)
    b += [f"s_cmp_lt_u32 s{t0}, s{S_LQ}",
          f"s_cselect_b32 s{S_NBW}, s{S_NBW}, 0"]
    return b


EPILOGUE_STORES = 9  # vector memory operations of epilogue_stores(), every one always issued


def tile_zero(badv: bool = True):
    """O, L, the running max and (`badv`) the NaN-in-V key of a new query tile."""
    if VARLEN:
        b = [f"v_mov_b32 v{A_O + i}, 0" for i in range(ACC_REGS)]
    else:
        # a register pair per instruction (v_pk_mov_b32 takes no inline constant: the first
        # pair's zeros)
        b = [f"v_mov_b32 v{A_O}, 0", f"v_mov_b32 v{A_O + 1}, 0"]
        b += [f"v_pk_mov_b32 {vr(A_O + i, 2)}, {vr(A_O, 2)}, {vr(A_O, 2)}" for i in range(2, ACC_REGS, 2)]
    return b + [f"v_mov_b32 v{V_M}, 0xff800000"] + ([f"s_mov_b32 s{S_BADVW}, -1"] if badv else [])


def tile_start(stores: int, sfx: str):
    """The rest of a query tile's start, once the previous tile's epilogue has read O, L and
    m: the tile's Q, then key tile 0 into LDS and the first scores. `stores`: the previous
    tile's output stores that went out after this tile's loads (their place in the vmcnt
    order: the waits let them stay in flight). When early_key_tile0() staged key tile 0
    (bit 2 of S_EARLYQ), only the zeros, Q's sign and the barrier are left, and the
    previous tile's leaders store their output past the barrier (output_after_barrier()).
    Fixed lengths: the zeros of O, L and m go into the first scores' wait states."""
    early = not VARLEN and stores  # (early_key_tile0() may have staged key tile 0)
    staged = L("kv_staged") if early else None
    late = L("output_late") if early and SWAP else None
    # key tile 0 staged and this wave's output not yet stored (bits 2 and 1 of S_EARLYQ: the
    # previous tile's leaders, which trail this one): the output after the barrier
    b = [f"s_and_b32 s{S_T0}, s{S_EARLYQ}, 6", f"s_cmp_eq_u32 s{S_T0}, 4", f"s_cbranch_scc1 {late}"] if late else []
    if VARLEN:
        b += tile_zero(badv=not early)
    else:
        # (fixed lengths: the zeros of O, L and m in the first scores' wait states, qk_first())
        b += [] if early else [f"s_mov_b32 s{S_BADVW}, -1"]
    b += [f"s_bitcmp1_b32 s{S_EARLYQ}, 2", f"s_cbranch_scc1 {staged}_badv", f"s_mov_b32 s{S_BADVW}, -1",
          f"{staged}_badv:"] if early else []
    b += [f"s_waitcnt vmcnt({K_LOADS + 4 + stores})"] + prefetch_tile_word()
    unsigned = None if VARLEN else L("q_unsigned")
    b += [] if VARLEN else [f"s_cmp_eq_u32 s{S_QSIGN}, 0", f"s_cbranch_scc1 {unsigned}"]
    b += [f"v_xor_b32 v{V_Q + i}, s{S_QSIGN}, v{V_Q + i}" for i in range(8 * NQ)]
    b += [] if VARLEN else [f"{unsigned}:"]
    b += ["// key tile 0 into the first buffers, tile 1's loads behind each half (a query tile has",
          "// at least two key tiles)"]
    b += [f"s_bitcmp1_b32 s{S_EARLYQ}, 2", f"s_cbranch_scc1 {staged}"] if early else []
    b += store_k(0, 4 + stores) + issue_k_loads()
    b += [f"s_waitcnt vmcnt({K_LOADS + stores})"] + store_v(0, first_tile=True) + issue_v_loads()
    b += [f"{staged}:", f"s_mov_b32 s{S_EARLYQ}, 0"] if early else []
    b += ["s_waitcnt lgkmcnt(0)", "s_barrier"]
    b += output_after_barrier(late) if late else []
    b += qk_first() if VARLEN else qk_first(fill=tile_zero(badv=False))
    b += ["// waves 4-7 start half an iteration behind: their first barrier is met by waves 0-3",
          "// after the softmax of block 0",
          f"s_cmp_lt_u32 s{S_ROLE}, 4",
          f"s_cbranch_scc1 .Lleading{sfx}",
          "s_barrier",
          f".Lleading{sfx}:",
          f"s_mov_b32 s{S_KT}, 0"]
    return b


def output_after_barrier(late: str):
    """The tile start of the previous tile's leaders when early_key_tile0() staged key tile 0:
    they led the previous tile and trail this one (S_ROLE), so their output math and stores
    (O is still in its registers, the store offsets in the scores' registers) go out past the
    tile start's barrier, while the new leaders (whose output went out in early_epilogue())
    run the first scores and softmax, and before this wave's first scores (which overwrite
    those registers) and its zeros of O and L (qk_first()). At priority 2: this wave's way
    to its extra barrier is the longer one. Q came in early_key_tile0() (its wait for key
    tile 0). The stores follow key tile 1's loads in the vmcnt order, as they did before the
    barrier."""
    started, unsigned = L("tile_started"), L("q_unsigned")
    b = [f"s_branch {started}", f"{late}:"] + prefetch_tile_word()
    b += [f"s_cmp_eq_u32 s{S_QSIGN}, 0", f"s_cbranch_scc1 {unsigned}"]
    b += [f"v_xor_b32 v{V_Q + i}, s{S_QSIGN}, v{V_Q + i}" for i in range(8 * NQ)]
    b += [f"{unsigned}:", f"s_mov_b32 s{S_EARLYQ}, 0", "s_waitcnt lgkmcnt(0)", "s_barrier"]
    b += ["s_setprio 2"] + epilogue_stores()
    return b + [f"{started}:"]


# Staging roles of thread t = 64 w + l (w = 0..7), recomputed where needed (temporaries, not
# kept). Each global load instruction of a wave reads whole 128-byte rows, so no cache line is
# fetched by two instructions:
#   K: rows 16 w + l/8 + 8 i (load i = 0, 1), bytes 16 (l%8) .. +15: R_T2 = 16 w + l/8;
#   V: keys 4 g .. 4 g + 3 with g = t/16 (load i takes key 4 g + i: 4 rows per instruction),
#      dv bytes 8 (t%16) .. +7.
# R_KPART = 16 (l%8), R_KG4 = 4 g, R_DG8 = 8 (t%16).
# At d_qk 192 each K row's last 64 bytes come by a third load (tail_roles()).
R_T2, R_KPART, R_KG4, R_DG8 = V_T + 8, V_T + 9, V_T + 10, V_T + 11
K_ROWS_PER_LOAD = 8
V_PF_K, V_PF_V = V_PF, V_PF + 4 * K_LOADS  # K loads of 4 dwords, 4 V loads (keys) of 2 dwords
V_PF_KT = V_PF_K + 8  # the d 128..191 load (d_qk 192)


def staging_roles():
    return [f"v_lshrrev_b32 v{R_T2}, 6, v{V_TID}",
            f"v_lshlrev_b32 v{R_T2}, 4, v{R_T2}",
            f"v_bfe_u32 v{R_KG4}, v{V_TID}, 3, 3",
            f"v_add_u32 v{R_T2}, v{R_T2}, v{R_KG4}",
            f"v_and_b32 v{R_KPART}, 7, v{V_TID}",
            f"v_lshlrev_b32 v{R_KPART}, 4, v{R_KPART}",
            f"v_and_b32 v{R_DG8}, 15, v{V_TID}",
            f"v_lshlrev_b32 v{R_DG8}, 3, v{R_DG8}",
            f"v_lshrrev_b32 v{R_KG4}, 4, v{V_TID}",
            f"v_lshlrev_b32 v{R_KG4}, 2, v{R_KG4}"]


def tail_roles(row: int, byte: int):
    """d_qk 192: the K rows' bytes 128..191 of a key tile, 16 bytes per thread t = 64 w + l, the
    wave's 16 rows by one instruction: row 16 w + l/4 into v_row, byte 128 + 16 (l%4) into v_byte."""
    return [f"v_lshrrev_b32 v{row}, 2, v{V_TID}",
            f"v_and_b32 v{byte}, 3, v{V_TID}",
            f"v_lshlrev_b32 v{byte}, 4, v{byte}",
            f"v_add_u32 v{byte}, 128, v{byte}"]


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
          f"s_lshl_b32 s{S_KSTEP}, s{S_KS + 2}, 7",
          f"s_lshl_b32 s{S_K8}, s{S_KS + 2}, 3",
          f"v_mul_lo_u32 v{V_VMAX}, v{t}, s{S_VS + 2}",
          f"v_add_u32 v{V_VMAX}, v{V_VMAX}, v{R_DG8}",
          f"s_lshl_b32 s{S_VSTEP}, s{S_VS + 2}, 7"]
    if NQ == 3:
        b += tail_roles(t + 2, t + 3)
        b += [f"v_mul_lo_u32 v{V_KTOFF}, v{t + 2}, s{S_KS + 2}",
              f"v_add_u32 v{V_KTOFF}, v{V_KTOFF}, v{t + 3}",
              f"v_mul_lo_u32 v{V_KTMAX}, v{t}, s{S_KS + 2}",
              f"v_add_u32 v{V_KTMAX}, v{V_KTMAX}, v{t + 3}"]
    for i in range(4):
        b += [f"v_add_u32 v{t + 1}, {i}, v{R_KG4}",
              f"v_mul_lo_u32 v{V_VOFF + i}, v{t + 1}, s{S_VS + 2}",
              f"v_add_u32 v{V_VOFF + i}, v{V_VOFF + i}, v{R_DG8}"]
    return b


def issue_k_loads():
    """Global loads of the K rows of the next key tile to load, then the offset moves on."""
    return ["// K: rows min(key0 + 16 w + l/8 + 8 i, seqlen - 1), bytes 16 (l%8) .. +15",
            f"v_min_u32 v{V_T + 8}, v{V_KOFF}, v{V_KMAX}",
            f"global_load_dwordx4 {vr(V_PF_K, 4)}, v{V_T + 8}, s[{S_KB}:{S_KB + 1}]",
            f"v_add_u32 v{V_T + 9}, s{S_K8}, v{V_KOFF}",
            f"v_min_u32 v{V_T + 8}, v{V_T + 9}, v{V_KMAX}",
            f"global_load_dwordx4 {vr(V_PF_K + 4, 4)}, v{V_T + 8}, s[{S_KB}:{S_KB + 1}]",
            f"v_add_u32 v{V_KOFF}, s{S_KSTEP}, v{V_KOFF}"] + issue_k_tail_load()


def issue_k_tail_load():
    """d_qk 192: the load of the K rows' bytes 128..191 (tail_roles()), then its offset moves on."""
    if NQ == 2:
        return []
    return ["// K: rows min(key0 + 16 w + l/4, seqlen - 1), bytes 128 + 16 (l%4) .. +15",
            f"v_min_u32 v{V_T + 8}, v{V_KTOFF}, v{V_KTMAX}",
            f"global_load_dwordx4 {vr(V_PF_KT, 4)}, v{V_T + 8}, s[{S_KB}:{S_KB + 1}]",
            f"v_add_u32 v{V_KTOFF}, s{S_KSTEP}, v{V_KTOFF}"]


def issue_v_loads():
    """Global loads of the V rows of the next key tile to load, then the offsets move on."""
    b = ["// V: rows min(key0 + 4 (t/16) + i, seqlen - 1), dv 8 (t%16) .. +7"]
    for i in range(4):
        b += [f"v_min_u32 v{V_T + 4 + i}, v{V_VOFF + i}, v{V_VMAX}",
              f"global_load_dwordx2 {vr(V_PF_V + 2 * i, 2)}, v{V_T + 4 + i}, s[{S_VB}:{S_VB + 1}]"]
    b += [f"v_add_u32 v{V_VOFF + i}, s{S_VSTEP}, v{V_VOFF + i}" for i in range(4)]
    return b


def store_k(buf: int, newer: int):
    """The loaded K rows into K buffer `buf` (row-major); `newer` loads were issued after them."""
    b = [f"s_waitcnt vmcnt({newer})"]
    for i in range(2):
        b.append(f"ds_write_b128 v{V_KW}, {vr(V_PF_K + 4 * i, 4)} offset:{buf * KBUF + K_ROWS_PER_LOAD * KROW * i}")
    if NQ == 3:
        b.append(f"ds_write_b128 v{V_KW2}, {vr(V_PF_KT, 4)} offset:{buf * KBUF}")
    return b


def store_v(buf: int, first_tile: bool = False, check: bool = True):
    """The loaded V rows into V buffer `buf` (row-major, swizzled chunks). The caller has waited
    for the loads. In the last two key tiles (keys some rows of the query tile cannot see) the
    NaN codes are zeroed first and the smallest such key recorded (diagonal_v_check)."""
    b = diagonal_v_check(first_tile) if check else []
    b += ["// keys 4 g .. 4 g + 3 of the lane, 8 bytes each (the swizzled chunk of v_swizzle())"]
    for i in range(4):
        addr = V_VW if i < 2 else V_VW2
        b.append(f"ds_write_b64 v{addr}, {vr(V_PF_V + 2 * i, 2)} offset:{buf * VBUF + (i % 2) * VROW}")
    return b


def diagonal_v_check(first_tile: bool):
    """In the last two key tiles of the query tile only (its rows see keys up to 256 t + 255, so
    some rows cannot see some of these keys): the smallest key with a NaN code in the V bytes
    this wave staged (keys 16 w .. 16 w + 15 of the key tile, every dv) updates S_BADVW, which
    goes to LDS word w, and those codes are zeroed, so that a masked P of 0 never multiplies a
    NaN. A byte x is NaN when (x & 0x7f) + 1 carries into bit 7; per dword, 0x80 then marks
    each NaN byte. The key tile is S_KT / 2 + 1 (V of key tile U is stored in body 2 U - 1),
    0 for the first."""
    t = V_T
    skip, clean = L("not_diagonal"), L("v_finite")
    v = [V_PF_V + 2 * i + w for i in range(4) for w in range(2)]  # key 4 (t/16) + i, dword w
    b = ["// key tile U in s_t1 (0 before the loop; (S_KT + 1) / 2 in body S_KT)"]
    if first_tile:
        b += [f"s_mov_b32 s{S_T1}, 0"]
    else:
        b += [f"s_add_u32 s{S_T1}, s{S_KT}, 1", f"s_lshr_b32 s{S_T1}, s{S_T1}, 1"]
    if VARLEN:
        b += ["// key tiles with a key the tile's first row cannot see: 2 U >= S_VCHK",
              f"s_lshl_b32 s{S_T0}, s{S_T1}, 1",
              f"s_cmp_lt_u32 s{S_T0}, s{S_VCHK}",
              f"s_cbranch_scc1 {skip}"]
    else:
        b += ["// the last two key tiles: U >= n / 2 - 2 (n = S_NKT blocks, two per key tile)",
              f"s_add_u32 s{S_T0}, s{S_T1}, 2",
              f"s_lshl_b32 s{S_T0}, s{S_T0}, 1",
              f"s_cmp_lt_u32 s{S_T0}, s{S_NKT}",
              f"s_cbranch_scc1 {skip}"]
    b += [
          "// NaN marks of staged key i, OR over its 2 dwords, in v[t+4+i]"]
    for i in range(4):
        for w in range(2):
            r = v[2 * i + w]
            dst = t + 4 + i if w == 0 else t + 8
            b += [f"v_and_b32 v{dst}, 0x7f7f7f7f, v{r}",
                  f"v_add_u32 v{dst}, 0x1010101, v{dst}",
                  f"v_and_b32 v{dst}, 0x80808080, v{dst}"]
            if w:
                b.append(f"v_or_b32 v{t + 4 + i}, v{t + 4 + i}, v{t + 8}")
    b += ["// lanes 16 g' .. 16 g' + 15 stage keys 16 w + 4 g' .. +3: the first lane l of the ballot",
          "// of staged key i is key 16 w + 4 (l/16) + i of the tile; s_ff1 of 0 is -1, which makes",
          "// the key huge (0x3ffffffc + the rest: none)",
          f"s_lshl_b32 s{S_T1}, s{S_T1}, 7",
          f"s_lshl_b32 s{S_T0}, s{S_WAVE}, 4",
          f"s_add_u32 s{S_T1}, s{S_T1}, s{S_T0}",
          f"s_mov_b32 s{S_T0}, -1"]
    for i in range(4):
        b += [f"v_cmp_ne_u32_e64 s[{S_X}:{S_X + 1}], 0, v{t + 4 + i}",
              f"s_ff1_i32_b64 s{S_Y}, s[{S_X}:{S_X + 1}]",
              f"s_lshr_b32 s{S_Y}, s{S_Y}, 4",
              f"s_lshl_b32 s{S_Y}, s{S_Y}, 2",
              f"s_add_u32 s{S_Y}, s{S_Y}, {i}",
              f"s_min_u32 s{S_T0}, s{S_T0}, s{S_Y}"]
    b += [f"s_cmp_ge_u32 s{S_T0}, {TILE}",
          f"s_cbranch_scc1 {clean}",
          f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
          f"s_min_u32 s{S_BADVW}, s{S_BADVW}, s{S_T0}",
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
          "// (LDS offsets past 64 KiB need the address register)",
          f"s_lshl_b32 s{S_T1}, s{S_WAVE}, 2",
          f"s_add_u32 s{S_T1}, s{S_T1}, {BADV_BASE}",
          f"v_mov_b32 v{t + 8}, s{S_T1}",
          f"v_mov_b32 v{t + 9}, s{S_BADVW}",
          f"ds_write_b32 v{t + 8}, v{t + 9}",
          f"{skip}:"]
    return b


def unless_before_end(k: int, label: str):
    """Branch to `label` unless S_KT + k < S_NKT (block S_KT + k exists in this query tile)."""
    return [f"s_add_u32 s{S_T0}, s{S_KT}, {k}",
            f"s_cmp_lt_u32 s{S_T0}, s{S_NKT}",
            f"s_cbranch_scc0 {label}"]


def stage(r: int, steady: bool):
    """Staging in body b = S_KT (b % 4 = r), in the wave's vector phase. K of key tile U goes
    into LDS in body 2 U - 2 and V of tile U in body 2 U - 1 (tile 0 before the loop), each into
    buffer U % 2; the loads of tile U + 1's half go out right after. Body b's matrix phase
    reads K block b + 1 and V block b, and the two wave groups, half an iteration apart, stage
    in different windows between barriers; this order keeps every write out of the windows
    that read the buffer's previous tile and ahead of the barrier before its first read.
    `steady`: tile U + 1 exists and U is not one of the last two key tiles (no test made)."""
    skip = L("no_stage")
    b = []
    if r % 2 == 0:
        buf = (r // 2 + 1) % 2
        b += [f"// K of key tile S_KT / 2 + 1 into K buffer {buf}"]
        b += [] if steady else unless_before_end(2, skip)
        b += store_k(buf, 4)  # V of the same tile was issued after it
        b += [] if steady else unless_before_end(4, skip)
        b += issue_k_loads()
    else:
        buf = ((r + 1) // 2) % 2
        wait_all, waited = L("wait_all"), L("waited")
        b += [f"// V of key tile (S_KT + 1) / 2 into Vt buffer {buf}"]
        if steady:
            b += [f"s_waitcnt vmcnt({K_LOADS})"]
        else:
            b += unless_before_end(1, skip)
            b += ["// the next tile's K loads went out after these (in the previous body) unless none is left"]
            b += unless_before_end(3, wait_all)
            b += [f"s_waitcnt vmcnt({K_LOADS})", f"s_branch {waited}", f"{wait_all}:", "s_waitcnt vmcnt(0)", f"{waited}:"]
        b += store_v(buf, check=not steady)
        b += [] if steady else unless_before_end(3, skip)
        b += issue_v_loads()
    b += [f"{skip}:"] if not steady else []
    return b


def k_reads(buf: int, half: int, i: int):
    """K operands of score block i (32 keys) of the 64-key block `half` of K buffer `buf` into
    V_KOP + 8 NQ i: 8 registers per 64-wide d chunk (2 LDS reads each)."""
    return [f"ds_read_b128 {vr(V_KOP + 8 * NQ * i + 8 * c + 4 * part, 4)}, v{V_KR} "
            f"offset:{buf * KBUF + 32 * (2 * half + i) * KROW + 64 * c + 32 * part}"
            for c in range(NQ) for part in range(2)]


def qk_mfmas(i: int):
    """Score block i of the current 64-key block (32 keys) = K Q^T into V_S + 16 i, one MFMA
    per 64-wide d chunk."""
    out = []
    for c in range(NQ):
        src_c = "0" if c == 0 else vr(V_S + 16 * i, 16)
        out.append(f"{MFMA} {vr(V_S + 16 * i, 16)}, {vr(V_KOP + 8 * NQ * i + 8 * c, 8)}, {vr(V_Q + 8 * c, 8)}, "
                   f"{src_c}, v{V_127}, v{V_127} op_sel_hi:[0,0,0]")
    return out


def qk_first(fill=None):
    """S^T of block 0 = K Q^T, before the loop (both wave groups). An MFMA reads SrcA/B at
    issue, so operand registers can be refilled right after the MFMAs that use them went out.
    `fill`: at least 20 instructions that read no score, in place of the wait states before
    the softmax may read them (fixed lengths: the new tile's zeros of O, L and m, off the
    way to the tile start's barrier)."""
    b = k_reads(0, 0, 0) + k_reads(0, 0, 1) + ["s_setprio 1", f"s_waitcnt lgkmcnt({2 * NQ})"] + qk_mfmas(0)
    b += ["s_waitcnt lgkmcnt(0)"] + qk_mfmas(1) + ["s_setprio 0"]
    if fill:
        assert len(fill) >= 20
        return b + fill
    return b + MFMA_READ_NOPS


def mask_block():
    """Keys past the row (causal) get -inf in the wave's diagonal 64-key block b = S_KT (the
    last one it sees; keys past seqlen are only seen by rows past it, which are not stored).
    dm = qrow - (64 b + 4h): element (i, r) is at key offset 32 i + 8 (r/4) + r%4 of the block
    and stays when that offset <= dm."""
    b = ["// dm = qrow - (64 b + 4h); element (i, r) stays when 32 i + 8 (r/4) + r%4 <= dm",
         f"s_lshl_b32 s{S_T0}, s{S_KT}, 6"]
    # (any lengths: the row's last key is qrow + shift)
    b += [f"s_sub_u32 s{S_T0}, s{S_T0}, s{S_SHIFT}"] if VARLEN else []
    b += [
         f"v_lshl_add_u32 v{V_DM0}, v{V_H}, 2, s{S_T0}",
         f"v_sub_u32 v{V_DM0}, v{V_QROW}, v{V_DM0}"]
    elems = [(i, r) for i in range(2) for r in range(16)]
    masks = [f"s[{S_X}:{S_X + 1}]", f"s[{S_Y}:{S_Y + 1}]", "vcc"]
    for g in range(0, len(elems), 3):
        group = elems[g:g + 3]
        for n, (i, r) in enumerate(group):
            b.append(f"v_cmp_le_i32_e64 {masks[n]}, {32 * i + 8 * (r // 4) + r % 4}, v{V_DM0}")
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


def no_key_alpha():
    """Any lengths: a row that has seen no key yet keeps m = -inf while another row of the
    wave moves, and its alpha 2^(-inf + inf) is NaN; its O and L are 0, and stay 0 with
    alpha 0. (Fixed lengths: every row sees key 0 in block 0, where they all move.)"""
    if not VARLEN:
        return []
    return [f"v_cmp_u_f32_e64 s[{S_Y}:{S_Y + 1}], v{V_ALPHA}, v{V_ALPHA}",
            "s_nop 1",
            f"v_cndmask_b32_e64 v{V_ALPHA}, v{V_ALPHA}, 0, s[{S_Y}:{S_Y + 1}]"]


def rescale_accumulators():
    """O and L times alpha (the row's factor in both dwords' low half: op_sel_hi)."""
    return [f"v_pk_mul_f32 {vr(A_O + i, 2)}, {vr(A_O + i, 2)}, v[{V_ALPHA}:{V_ALPHA + 1}] op_sel_hi:[1,0]"
            for i in range(0, ACC_REGS, 2)]


def softmax(first_block: bool = False):
    """Softmax of the current 64-key block (the lane's 32 scores in V_S) into the P codes;
    `first_block`: the block may be block 0, where the first 64 rows' LSE takes its unrounded
    sum (lse_row_sum(), out of line: one block per (batch, head) takes it; tested by S_NBW,
    not S_KT, so that no other wave takes a branch: at S 2K a test on S_KT, taken to the
    out-of-line block and back by every wave in block 0 of the general path, cost 0.5%)."""
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
          f"v_cmp_lt_f32 vcc, {f32(RESCALE_THRESHOLD)}, v{t + 1}",
          "// (the next two give v_cndmask its 2 wait states after the VCC write; SCC: some lane moves)",
          f"v_mov_b32 v{t + 2}, v{V_M}",
          f"s_and_b64 s[{S_X}:{S_X + 1}], vcc, exec",
          f"v_cndmask_b32 v{V_M}, v{V_M}, v{t}, vcc",
          f"v_sub_f32 v{t + 2}, v{t + 2}, v{V_M}",
          "// alpha = 2^(m_old - m_new): 1 where m stays, 0 on the first key block (m_old = -inf);",
          "// only the rescale reads it, past the branch (its wait state)",
          f"v_exp_f32 v{V_ALPHA}, v{t + 2}"]
    # the rescale (rare past a row's first blocks) sits out of line: the usual path falls through
    rescale, back = L("rescale"), L("rescaled")
    b += [f"s_cbranch_scc1 {rescale}", f"{back}:"]
    # (block 0: O and L are the tile start's zeros, nothing to scale; every row's first block
    # takes this path, m_old = -inf)
    zeros = None if VARLEN else L("zero_accumulators")
    OUT_OF_LINE.extend([f"{rescale}:"] + no_key_alpha() +
                       ([] if VARLEN else [f"s_cmp_eq_u32 s{S_KT}, 0", f"s_cbranch_scc1 {zeros}"]) +
                       rescale_accumulators() + ([] if VARLEN else [f"{zeros}:"]) + large_m_check() +
                       [f"s_branch {back}"])
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
          f"v_add_f32 v{V_C}, {f32(LEAN_BIAS)}, v{t + 1}",
          f"v_cvt_u32_f32 v{t}, v{t}",
          f"v_sub_u32 v{V_SC}, 0x7f, v{t}"]
    b += ["// lean P: code = trunc(8 * scale * acc + C), two multiply-adds per packed instruction",
          "// (multiplier and addend from the low dword of their pairs); each truncating conversion",
          "// writes its code straight into its byte of the P operand (SDWA dst_sel, other bytes",
          "// kept), byte-major so that writes to one dword are 8 instructions apart (a partial",
          "// write needs 1 wait state before the register is read again)"]
    if first_block:
        lse, back = L("lse_row_sum"), L("lse_summed")
        b += [f"s_cmp_eq_u32 s{S_NBW}, 1", f"s_cbranch_scc1 {lse}", f"{back}:"]
        OUT_OF_LINE.extend([f"{lse}:"] + lse_row_sum(back) + [f"s_branch {back}"])
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


def lse_row_sum(skip: str):
    """In a sequence's first 64 rows (the waves whose diagonal block is block 0), the row sum
    the LSE takes, into V_LSE_SUM: the fp32 sum of the block's unrounded 2^x, x = acc F - m
    (the product rounded as m was, so that the row maximum gets x = 0 exactly at any magnitude,
    as lean_p_large_scores() says; masked keys: 2^-inf = 0), over the row's keys (the partner lane's half by
    v_permlane32_swap), plus L, which is 0 before the row's first block. These rows see at most
    64 keys, often a few that dominate, whose e4m3 rounding (up to 7% each with lean P) would go
    into the LSE undiluted; the output keeps the rounded denominator, so its weights still sum
    to one. Every other row's LSE takes L (epilogue_values()): there, in every later diagonal
    block, the 32 exponentials per lane cost the waves whose diagonal block is the tile's last
    more than 500 clocks at the end of every query tile, for less than what lean P's rounding
    in the rows' earlier blocks leaves (docs/numerics.md). The caller branches here in the
    waves whose diagonal block is block 0 (S_NBW = 1: their softmax runs for that block only);
    without an LSE output this branches to `skip`. Temporaries V_T .. V_T + 9."""
    t = V_T
    b = ["// LSE of the first 64 rows: the block's unrounded 2^x (docs/numerics.md)",
         f"s_cmp_eq_u64 s[{S_LSE}:{S_LSE + 1}], 0",
         f"s_cbranch_scc1 {skip}",
         f"v_mov_b32 v{t}, v{V_F}",
         f"v_xor_b32 v{t + 2}, 0x80000000, v{V_M}",
         f"v_mov_b32 v{t + 4}, 0",
         f"v_mov_b32 v{t + 5}, 0"]
    if VARLEN:
        # a row that sees no key (m = -inf, every score -inf) sums 2^(-inf + 0) = 0, not
        # 2^(-inf + inf): its LSE is -inf
        b += [f"v_cmp_neq_f32 vcc, {f32(float('inf'))}, v{t + 2}",
              "s_nop 1",
              f"v_cndmask_b32 v{t + 2}, 0, v{t + 2}, vcc"]
    # pairs of scores into alternating pairs t + 6, t + 8; each pair's sum is added after the
    # next pair's exponentials (the wait state after a transcendental)
    pair = lambda i: t + 6 + 2 * (i % 2)
    for i in range(16):
        x = pair(i)
        b += [f"v_pk_mul_f32 {vr(x, 2)}, {vr(V_S + 2 * i, 2)}, {vr(t, 2)} op_sel_hi:[1,0]",
              f"v_pk_add_f32 {vr(x, 2)}, {vr(x, 2)}, {vr(t + 2, 2)} op_sel_hi:[1,0]",
              f"v_exp_f32 v{x}, v{x}",
              f"v_exp_f32 v{x + 1}, v{x + 1}"]
        if i:
            b.append(f"v_pk_add_f32 {vr(t + 4, 2)}, {vr(t + 4, 2)}, {vr(pair(i - 1), 2)}")
    b += ["s_nop 0",
          f"v_pk_add_f32 {vr(t + 4, 2)}, {vr(t + 4, 2)}, {vr(pair(15), 2)}",
          f"v_add_f32 v{t + 4}, v{t + 4}, v{t + 5}",
          f"v_mov_b32 v{t + 6}, v{t + 4}",
          "s_nop 1",
          f"v_permlane32_swap_b32 v{t + 6}, v{t + 4}",
          f"v_add_f32 v{t + 4}, v{t + 4}, v{t + 6}",
          f"v_add_f32 v{V_LSE_SUM}, v{A_L}, v{t + 4}"]
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
         f"v_add_f32 v{c}, {f32(LEAN_BIAS)}, v{c}"]
    for r in range(0, 32, 2):
        s = vr(V_S + r, 2)
        b += [f"v_pk_mul_f32 {s}, {s}, {vr(t, 2)} op_sel_hi:[1,0]",
              f"v_pk_add_f32 {s}, {s}, {vr(t + 2, 2)} op_sel_hi:[1,0]",
              f"v_pk_fma_f32 {s}, {s}, {vr(t + 4, 2)}, {vr(c, 2)} op_sel_hi:[1,0,0]"]
    b.append(f"s_branch {back}")
    return b


def v_swizzle():
    """Why V rows are swizzled. A ds_read_b64_tr_b8 hands lane l of each 16-lane group the byte
    l % 8 of the 8 bytes that lanes 2k + l / 8 (k = 0..7) of the group read, as its byte k
    (docs/emulator.md; src/emu/core/ds_transpose.cpp). The PV MFMA's A operand for dv block J
    needs, in lane (j, h) and P dword pair p, the keys of the lane's P dwords 2p and 2p + 1:
    16 p + 4 h + (k & 3) + 8 (k >> 2), k = 0..7, of dv 32 J + j. So lane 2k + c of group G
    (h = G / 2) reads key row 16 p + 4 h + (k & 3) + 8 (k >> 2) at dv bytes 32 J + 16 (G % 2) +
    8 c: chunk 2 J + G % 2 of the row, half c. A read phase (32 lanes, one h) then touches rows
    r = {0, 1, 2, 3, 8, 9, 10, 11} + 4 h, two chunks each; rows of one parity share the 64
    banks, so their 8 chunk positions must differ: position c ^ swz(r) with swz(r) = (r & 2) |
    ((r >> 1) & 4) = k & 6 does it. Row r's swizzle depends on r % 16 only, so the 16-row steps
    of p, the 64-row half and the buffer are instruction offsets."""
    return None


def v_read_addresses():
    """V_VRJ[J] = VT_BASE + 128 r + ((2 J + G % 2) ^ swz(r)) * 16 + 8 c for the lane's row r =
    4 h + (k & 3) + 8 (k >> 2), k = (l & 15) >> 1, c = l & 1 (v_swizzle()); the chunk bits are
    address bits 5-6 and 4, so dv block J is the address of J = 0 XOR 32 J."""
    t = V_T
    return [f"v_bfe_u32 v{t}, v{V_TID}, 1, 3",             # k
            f"v_and_b32 v{t + 1}, 3, v{t}",
            f"v_and_b32 v{t + 2}, 4, v{t}",
            f"v_lshl_add_u32 v{t + 1}, v{t + 2}, 1, v{t + 1}",  # (k & 3) + 8 (k >> 2)
            f"v_lshl_add_u32 v{t + 1}, v{V_H}, 2, v{t + 1}",    # r
            f"v_bfe_u32 v{t + 2}, v{V_TID}, 4, 1",          # G % 2
            f"v_and_b32 v{t}, 6, v{t}",                     # swz(r) = k & 6
            f"v_xor_b32 v{t}, v{t}, v{t + 2}",              # chunk of J = 0
            f"v_lshlrev_b32 v{t}, 4, v{t}",
            f"v_and_b32 v{t + 2}, 1, v{V_TID}",
            f"v_lshl_add_u32 v{t}, v{t + 2}, 3, v{t}",      # + 8 c
            f"v_lshl_add_u32 v{t}, v{t + 1}, 7, v{t}",      # + 128 r
            f"v_add_u32 v{V_VRJ[0]}, {VT_BASE}, v{t}"] + \
           [f"v_xor_b32 v{V_VRJ[J]}, {32 * J}, v{V_VRJ[0]}" for J in range(1, 4)]


def v_reads(buf: int, half: int, J: int):
    """V^T operand of dv block J for the 64-key block `half` of V buffer `buf`: 4 transposing
    reads (P dword pairs p = 0..3, 16 key rows apart) into V_S + 8 J (the scores are codes in
    V_P by now), in the key order the lane holds P in (v_swizzle())."""
    return [f"ds_read_b64_tr_b8 {vr(V_S + 8 * J + 2 * p, 2)}, v{V_VRJ[J]} "
            f"offset:{buf * VBUF + (64 * half + 16 * p) * VROW}" for p in range(4)]


def pv_mfma(J: int):
    o = vr(A_O + 16 * J, 16)
    return f"{MFMA} {o}, {vr(V_S + 8 * J, 8)}, {vr(V_P, 8)}, {o}, v{V_127}, v{V_SC} op_sel_hi:[0,0,0]"


def l_mfma():
    lreg = vr(A_L, 16)
    return f"{MFMA} {lreg}, {vr(V_ONES, 8)}, {vr(V_P, 8)}, {lreg}, v{V_127}, v{V_SC} op_sel_hi:[0,0,0]"


def first_v_reads(r: int):
    """The matrix phase's first 12 reads: V^T of dv blocks 0-2 of block b (b % 4 = r)."""
    return v_reads((r // 2) % 2, r % 2, 0) + v_reads((r // 2) % 2, r % 2, 1) + v_reads((r // 2) % 2, r % 2, 2)


READS_AHEAD = 12  # LDS reads in flight at most in a matrix phase (lgkmcnt counts 15)


def matrix_phase(r: int, scores: bool, preissued: bool = False):
    """O^T += V^T P^T and L += ones P^T for block b = S_KT (b % 4 = r), P scaled back by 2^-k
    (one more MFMA with a ones A operand adds the same rounded P into the row sum); then, when
    `scores`, S^T of block b + 1 = K Q^T. V block b is in Vt buffer (r / 2) % 2, K block b + 1
    in K buffer ((r + 1) / 2) % 2. LDS reads run ahead of their MFMAs, at most READS_AHEAD
    outstanding (LDS results return in order): V of dv blocks 0-2 first, then each MFMA's wait
    releases as many of the later reads (V of dv block 3, then K of the two score blocks) as
    were waited for; an MFMA group (one P V MFMA, or the NQ MFMAs of a score block) waits until
    its last read is done."""
    vbuf, vhalf = (r // 2) % 2, r % 2
    kbuf, khalf = ((r + 1) // 2) % 2, (r + 1) % 2
    later = v_reads(vbuf, vhalf, 3)
    groups = [([pv_mfma(J)], 4 * (J + 1)) for J in range(4)]  # (MFMAs, reads done before them)
    if scores:
        later += k_reads(kbuf, khalf, 0) + k_reads(kbuf, khalf, 1)
        groups += [(qk_mfmas(i), 16 + 2 * NQ * (i + 1)) for i in range(2)]
    b = [] if preissued else first_v_reads(r)
    # the row-sum MFMA needs no LDS operand: it covers the first reads' latency
    b.append(l_mfma())
    issued, done = 12, 0
    for mfmas, needed in groups:
        if needed > done:
            # reads complete in order: the group's are done when only those after them are outstanding
            b.append(f"s_waitcnt lgkmcnt({issued - needed})")
            done = needed
        b += mfmas
        n = min(len(later), READS_AHEAD - (issued - done))
        b += later[:n]
        later, issued = later[n:], issued + n
    assert not later
    if scores:
        b += MFMA_READ_NOPS
    return b


def loop_prio(lead: bool, matrix: bool) -> int:
    """s_setprio of a key loop phase. A SIMD issues by priority, then by age (wave index):
    matrix phases above vector phases, and at equal priority waves 0-3 first, which lead
    every tile when the roles are fixed. With roles that swap per tile (S_ROLE, fixed-length
    kernels) the leading wave of a SIMD is the younger one every other tile, so the role
    takes the place of the age: leading matrix 3, trailing matrix 2, leading vector 1,
    trailing vector 0."""
    if not SWAP:
        return 1 if matrix else 0
    return (3 if matrix else 1) if lead else (2 if matrix else 0)


def body_step(r: int, lead: bool, steady: bool):
    """Body b = S_KT (b % 4 = r) of the key loop for waves 0-3 (`lead`) or 4-7: the softmax of
    block b, the staging share, then the matrix phase (P V of block b, scores of block b + 1).
    Waves 0-3 meet the barrier before their matrix phase, waves 4-7 after it (but for the last
    body, whose barrier is the one after the loop), so between two barriers waves 0-3 run
    matrix phase j, then the softmax of block j + 1, while waves 4-7 run the softmax of block
    j, then matrix phase j: on each SIMD one wave's MFMAs meet the other's softmax. Blocks past
    the wave's diagonal block (S_NBW) are skipped; only the barriers and staging remain.
    `steady`: the caller checked that blocks b .. b + 4 are before the wave's diagonal block
    and that this body's staging and loads are needed and not in the last two key tiles, so
    none of those tests is made (each scalar instruction takes an issue slot of the wave, and
    a taken branch 16 clocks)."""
    no_softmax, unmasked = L("no_softmax"), L("unmasked")
    no_scores, no_pv, end = L("no_scores"), L("no_pv"), L("body_end")
    b = [f"// ---- body b % 4 = {r}: softmax of block b"]
    b += early_epilogue() if not lead and not steady and r == 2 and not VARLEN else []
    b += early_q_loads(1) if lead and not steady and r == 3 and not VARLEN else []
    if not steady:
        b += [f"s_cmp_lt_u32 s{S_KT}, s{S_NBW}",
              f"s_cbranch_scc0 {no_softmax}",
              f"s_add_u32 s{S_T0}, s{S_KT}, 1",
              f"s_cmp_lt_u32 s{S_T0}, s{S_UNMASKED}",
              f"s_cbranch_scc1 {unmasked}"]
        b += mask_block()
        b += [f"{unmasked}:"]
    b += softmax(first_block=not steady and r == 0)
    b += [f"{no_softmax}:"] if not steady else []
    b += stage(r, steady)
    b += early_q_loads(3) if not lead and not steady and r == 1 and not VARLEN else []
    # steady waves 0-3 in an odd block (the second of its key tile, whose V was visible before
    # this barrier) issue the matrix phase's first reads before the barrier, which waits only
    # for their staging writes (issued before them; LDS operations return in order)
    early_reads = steady and lead and r % 2 == 1
    if lead:
        b += ["// waves 0-3: barrier before the matrix phase"]
        b += first_v_reads(r) + ["s_waitcnt lgkmcnt(12)"] if early_reads else ["s_waitcnt lgkmcnt(0)"]
        b += ["s_barrier"]
    b += [f"s_setprio {loop_prio(lead, True)}"]
    if steady:
        b += matrix_phase(r, True, preissued=early_reads)
    else:
        b += [f"s_add_u32 s{S_T0}, s{S_KT}, 1",
              f"s_cmp_lt_u32 s{S_T0}, s{S_NBW}",
              f"s_cbranch_scc0 {no_scores}"]
        b += matrix_phase(r, True)
        b += [f"s_branch {no_pv}", f"{no_scores}:",
              f"s_cmp_lt_u32 s{S_KT}, s{S_NBW}",
              f"s_cbranch_scc0 {no_pv}"]
        b += matrix_phase(r, False)
        b += [f"{no_pv}:"]
    b += [f"s_setprio {loop_prio(lead, False)}", f"s_add_u32 s{S_KT}, s{S_KT}, 1"]
    if not lead:
        b += ["// waves 4-7: barrier after the matrix phase"]
        if not steady:
            b += ["// (but for the last body: the barrier after the loop)",
                  f"s_cmp_lt_u32 s{S_KT}, s{S_NKT}",
                  f"s_cbranch_scc0 {end}"]
        b += ["s_waitcnt lgkmcnt(0)", "s_barrier"]
        b += [f"{end}:"] if not steady else []
    if VARLEN and not steady:
        b += ["// (any lengths: the tile's blocks need not fill the group of 4 bodies)",
              f"s_cmp_lt_u32 s{S_KT}, s{S_NKT}",
              "s_cbranch_scc0 .Lkey_loop_end"]
    return b


def early_epilogue():
    """The epilogue of waves 4-7 (the tile's rows 0-127), at the start of body 4 t + 2 of a
    tile of 4 t + 4 blocks: their last P V was in body 4 t + 1 at the latest, and the marks of
    V's NaN keys (the staging of the last key tile, body 4 t + 1) are visible past the barrier
    that ended it, so their output goes out while waves 0-3 run the last two blocks, instead
    of sharing each SIMD's vector and scalar issue with those waves' epilogue after the loop
    (in body 4 t + 3 instead, where waves 2-3 run the tile's last softmax, S 2K gave 1803.2
    TFLOP/s against 1869.4; the next tile's zeros of O and L here too: 1844.9). In the vmcnt
    order the stores must follow the next tile's loads, as in the epilogue: so only when
    those went out early (early_q_loads(), body 4 t + 1) or no next tile can follow (the
    jobs' words are done); otherwise (a lone tile's empty word next) the epilogue does it.
    Bit 1 of S_EARLYQ tells the epilogue."""
    skip, run = L("no_early_epilogue"), L("early_epilogue")
    b = ["// waves 4-7: this tile's output, two bodies before the loop ends (early_epilogue())",
         f"s_add_u32 s{S_T0}, s{S_KT}, 2",
         f"s_cmp_eq_u32 s{S_T0}, s{S_NKT}",
         f"s_cbranch_scc0 {skip}",
         f"s_bitcmp1_b32 s{S_EARLYQ}, 0",
         f"s_cbranch_scc1 {run}",
         f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
         f"s_cbranch_scc0 {skip}",
         f"{run}:"]
    b += bad_v_key() + MFMA_READ_NOPS + epilogue_values() + epilogue_stores()
    b += [f"s_or_b32 s{S_EARLYQ}, s{S_EARLYQ}, 2", f"{skip}:"]
    return b


def early_key_tile0():
    """Past the barrier after the loop (no wave reads this tile's LDS any more) and the next
    tile's setup (its block counts, for the NaN check), key tile 0 of the next tile goes into
    LDS and key tile 1's loads go out, when early_q_loads() brought tile 0 (bit 0 of S_EARLYQ;
    bit 2 tells tile_start() to skip them): before the leading waves' output math instead of
    after it, so that key tile 1 (from HBM at a new head) is in by the first body's staging.
    The waits count no newer operation, which holds for waves 0-3; waves 4-7 also wait for
    their output stores (early_epilogue()), which went out two bodies earlier. Waves 0-3's
    output stores go out after key tile 1's loads, so that their first body's wait for K
    (which counts V's 4 loads as the only newer operations) also waits for the first five
    stores, issued about a thousand clocks before it."""
    skip = L("no_early_tile0")
    return ["// key tile 0 of the next tile into LDS now, tile 1's loads out (early_key_tile0())",
            f"s_bitcmp1_b32 s{S_EARLYQ}, 0",
            f"s_cbranch_scc0 {skip}",
            f"s_mov_b32 s{S_BADVW}, -1"] + \
           store_k(0, 4) + issue_k_loads() + [f"s_waitcnt vmcnt({K_LOADS})"] + \
           store_v(0, first_tile=True) + issue_v_loads() + \
           [f"s_or_b32 s{S_EARLYQ}, s{S_EARLYQ}, 4", f"{skip}:"]


def early_q_loads(left: int):
    """The next query tile's Q and key tile 0 loads of this wave, `left` bodies before a
    tile's end (S_KT + left = 4 t + 4): waves 4-7 in body 4 t + 1, after its staging (the
    tile's last global loads), waves 0-3 at the start of body 4 t + 3. By then the wave's
    scores are done (waves 4-7 own the tile's rows 0-127, whose last scores are computed in
    body 4 t; waves 0-3's last in body 4 t + 2), so its Q registers are free, and so are its
    staging registers. In the epilogue the loads went out only after the last block: Q and
    key tile 0 come from HBM at a new head (32 KiB each per tile at the CU's share, about
    2400 clocks), and they held the next tile's first barrier. Only when the next tile is
    the prefetched word (as the epilogue finds it unless a lone tile's empty word comes
    first); bit 0 of S_EARLYQ tells tile_setup() not to load them again. The loads are in the
    vmcnt order where the epilogue's were (Q, K, V, then the output stores), so the tile
    start's waits are unchanged. The K and V bases of the current tile are no longer read
    (its last loads went out), so the next tile's go into S_KB and S_VB (tile_setup()
    writes the same values again)."""
    skip = L("no_early_q")
    b = ["// the next tile's Q and key tile 0 loads, ahead of the epilogue (early_q_loads())",
         f"s_add_u32 s{S_T0}, s{S_KT}, {left}",
         f"s_cmp_eq_u32 s{S_T0}, s{S_NKT}",
         f"s_cbranch_scc0 {skip}",
         f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
         f"s_cbranch_scc1 {skip}",
         f"s_cmp_eq_u32 s{S_TW}, -1",
         f"s_cbranch_scc1 {skip}"]
    b += fast_div(S_EBH, S_TW, S_DIVT)
    b += [f"s_mul_i32 s{S_T0}, s{S_EBH}, s{S_NT}", f"s_sub_u32 s{S_ETILE}, s{S_TW}, s{S_T0}"]
    b += fast_div(S_EB, S_EBH, S_DIVH)
    b += [f"s_mul_i32 s{S_T0}, s{S_EB}, s{S_HEADS}", f"s_sub_u32 s{S_EH}, s{S_EBH}, s{S_T0}"]
    b += [f"s_mov_b64 s[{S_EQB}:{S_EQB + 1}], s[{S_Q}:{S_Q + 1}]"]
    b += mad64(S_EQB, S_QS, S_EB) + mad64(S_EQB, S_QS + 4, S_EH)
    b += [f"s_lshl_b32 s{S_T0}, s{S_ETILE}, 8"] + row_offset(S_T1, next_tile=True) + [
        f"s_add_u32 s{S_T0}, s{S_T0}, s{S_T1}",
        f"v_add_u32 v{V_T}, s{S_T0}, v{V_J}",
        f"v_min_u32 v{V_T}, s{S_SEQM1}, v{V_T}",
        f"v_mul_lo_u32 v{V_T}, v{V_T}, s{S_QS + 2}",
        f"v_lshl_add_u32 v{V_T}, v{V_H}, 4, v{V_T}"]
    for i in range(2 * NQ):
        b.append(f"global_load_dwordx4 {vr(V_Q + 4 * i, 4)}, v{V_T}, s[{S_EQB}:{S_EQB + 1}] offset:{32 * i}")
    b += fast_div(S_EHK, S_EH, S_DIVG)
    b += ["// K and V bases of the next tile's (b, hk): this tile's last loads went out",
          f"s_mov_b64 s[{S_KB}:{S_KB + 1}], s[{S_K}:{S_K + 1}]"]
    b += mad64(S_KB, S_KS, S_EB) + mad64(S_KB, S_KS + 4, S_EHK)
    b += [f"s_mov_b64 s[{S_VB}:{S_VB + 1}], s[{S_V}:{S_V + 1}]"]
    b += mad64(S_VB, S_VS, S_EB) + mad64(S_VB, S_VS + 4, S_EHK)
    b += ["// its key tile 0 (this tile's staging registers are free: its last staging was in body 4 t + 1)"]
    b += init_row_offsets() + issue_k_loads() + issue_v_loads()
    b += [f"s_or_b32 s{S_EARLYQ}, s{S_EARLYQ}, 1", f"{skip}:"]
    return b


def key_loop(lead: bool):
    """The key loop of one wave group: groups of 4 bodies (2 key tiles, both buffers once), 4 t
    + 4 blocks in all; a group runs the steady bodies when none of its tests can fail (all but
    the last two groups of a query tile for most waves)."""
    g = "lead" if lead else "trail"
    b = [f".Lkey_loop_{g}:",
         f"s_add_u32 s{S_T0}, s{S_KT}, 8",
         f"s_cmp_lt_u32 s{S_T0}, s{S_NKT}",
         f"s_cbranch_scc0 .Lgeneral_{g}",
         f"s_add_u32 s{S_T0}, s{S_KT}, 4",
         f"s_cmp_lt_u32 s{S_T0}, s{S_UNMASKED}",
         f"s_cbranch_scc0 .Lgeneral_{g}"]
    if VARLEN:
        b += ["// (any lengths: and no V of the group's key tiles is checked for NaN)",
              f"s_add_u32 s{S_T0}, s{S_KT}, 4",
              f"s_cmp_lt_u32 s{S_T0}, s{S_VCHK}",
              f"s_cbranch_scc0 .Lgeneral_{g}"]
    for r in range(4):
        b += body_step(r, lead, True)
    b += [f"s_branch .Lkey_loop_{g}", f".Lgeneral_{g}:"]
    for r in range(4):
        b += body_step(r, lead, False)
    b += [f"s_cmp_lt_u32 s{S_KT}, s{S_NKT}",
          f"s_cbranch_scc1 .Lkey_loop_{g}"]
    return b


def bad_v_key():
    """S_BADV: the smallest key with a NaN in V over the 8 waves (their LDS words were last
    written in the staging of the last key tile, two barriers back), read before the barrier
    after the loop, past which the next query tile may write them."""
    t = V_T
    return [f"v_mov_b32 v{t + 8}, {BADV_BASE}",
            f"ds_read_b128 {vr(t, 4)}, v{t + 8}",
            f"ds_read_b128 {vr(t + 4, 4)}, v{t + 8} offset:16",
            "s_waitcnt lgkmcnt(0)",
            f"v_min3_u32 v{t}, v{t}, v{t + 1}, v{t + 2}",
            f"v_min3_u32 v{t}, v{t}, v{t + 3}, v{t + 4}",
            f"v_min3_u32 v{t}, v{t}, v{t + 5}, v{t + 6}",
            f"v_min_u32 v{t}, v{t}, v{t + 7}",
            "s_nop 0",
            f"v_readfirstlane_b32 s{S_BADV}, v{t}"] + \
           ([f"s_min_u32 s{S_BADV}, s{S_BADV}, 0x7fffffff  // none: above every key, as a signed key"]
            if VARLEN else [])


# The epilogue's values, in the scores' registers (free from the last P V MFMA's issue to the
# next tile's first scores; the next tile's setup between them does not touch them)
V_OUT_ADDR, V_LSE_ADDR = V_S, V_S + 2  # 64-bit lane addresses (pairs)
V_FACTOR, V_LSUM, V_OROW, V_LSE = V_S + 4, V_S + 5, V_S + 6, V_S + 7  # output factor, row sum, row, LSE


def epilogue_values():
    """What the output stores need from this tile, into registers the next tile's setup does
    not touch: the output factor dv / L (NaN for rows that saw a NaN in V), the row, the LSE
    and the lane addresses of the output and LSE rows; O stays in its registers."""
    t = V_T
    b = [
        "// out = O * (dv / L), BF16 RNE; rows past seqlen are not stored",
        f"v_mov_b32 v{V_LSUM}, v{A_L}",
        f"v_rcp_f32 v{t}, v{V_LSUM}",
        "s_nop 0",
        f"v_mul_f32 v{t}, s{S_VDS}, v{t}",
    ]
    if VARLEN:
        b += ["// (any lengths: a row that saw no key, L = 0, is zeros; its last key qrow + shift,",
              "// negative for such rows, compared signed; rows past the sequence are not stored:",
              "// V_OROW = qrow - the sequence's length, negative for the rows stored, since the next",
              "// tile's setup replaces the length before the stores)",
              f"v_cmp_lt_f32 vcc, 0, v{V_LSUM}",
              "s_nop 1",
              f"v_cndmask_b32 v{t}, 0, v{t}, vcc",
              f"v_add_u32 v{t + 4}, s{S_SHIFT}, v{V_QROW}",
              f"v_subrev_u32 v{V_OROW}, s{S_LQ}, v{V_QROW}",
              f"v_cmp_gt_i32 vcc, s{S_BADV}, v{t + 4}"]
    else:
        b += ["// rows at or after the diagonal tile's first key with a NaN in V saw it: NaN output",
              f"v_cmp_gt_u32 vcc, s{S_BADV}, v{V_QROW}"]
    b += [
        f"v_mov_b32 v{t + 5}, {f32(float('nan'))}",
        "s_nop 0",
        f"v_cndmask_b32 v{V_FACTOR}, v{t + 5}, v{t}, vcc",
    ]
    b += [] if VARLEN else [f"v_mov_b32 v{V_OROW}, v{V_QROW}"]
    b += [
        "// LSE (natural log): ln 2 (m + log2 L) + LSE_OFFSET, the first 64 rows' from their",
        "// unrounded sum instead, without the offset (lse_row_sum())",
        f"s_cmp_eq_u32 s{S_NBW}, 1",
        f"s_cselect_b64 s[{S_Y}:{S_Y + 1}], -1, 0",
        f"s_cselect_b32 s{S_T1}, 0, {f32(LSE_OFFSET)}",
        f"v_cndmask_b32_e64 v{t + 2}, v{V_LSUM}, v{V_LSE_SUM}, s[{S_Y}:{S_Y + 1}]",
        f"v_log_f32 v{t + 2}, v{t + 2}",
        "s_nop 0",
        f"v_add_f32 v{t + 2}, v{V_M}, v{t + 2}",
        f"v_mul_f32 v{V_LSE}, {f32(LN2)}, v{t + 2}",
        f"v_add_f32 v{V_LSE}, s{S_T1}, v{V_LSE}"]
    # out base of (b, h) in bytes: out + 2 (b * os0 + h * os2), then the lane's row and half
    b += [f"s_mov_b64 s[{S_X}:{S_X + 1}], 0"]
    b += mad64(S_X, S_OS, S_B) + mad64(S_X, S_OS + 4, S_H)
    b += mad_row(S_X, S_OS + 2, S_Q0) if VARLEN else []  # (the sequence's first row)
    b += [f"s_lshl_b64 s[{S_X}:{S_X + 1}], s[{S_X}:{S_X + 1}], 1",
          f"s_add_u32 s{S_X}, s{S_X}, s{S_OUT}",
          f"s_addc_u32 s{S_X + 1}, s{S_X + 1}, s{S_OUT + 1}"]
    b += ["// (the first of 4 whole rows per store: row 32 w' + l / 16, bytes 16 (l % 16))",
          f"v_sub_u32 v{t + 1}, v{V_QROW}, v{V_J}",
          f"v_bfe_u32 v{t + 6}, v{V_TID}, 4, 2",
          f"v_add_u32 v{t + 1}, v{t + 1}, v{t + 6}",
          f"v_mul_lo_u32 v{t + 1}, v{t + 1}, s{S_OS + 2}",
          f"v_lshlrev_b32 v{t + 1}, 1, v{t + 1}",
          f"v_and_b32 v{t + 6}, 15, v{V_TID}",
          f"v_lshl_add_u32 v{t + 1}, v{t + 6}, 4, v{t + 1}"]
    # (the out base of (b, h), of the sequence's first row with any lengths, stays in S_OUTB, the
    # lane's offset in V_OUT_ADDR)
    b += [f"s_mov_b64 s[{S_OUTB}:{S_OUTB + 1}], s[{S_X}:{S_X + 1}]", f"v_mov_b32 v{V_OUT_ADDR}, v{t + 1}"]
    b += ["// LSE row of (b, h): lse + 4 ((b H + h) S + row)",
          f"s_mul_i32 s{S_T0}, s{S_B}, s{S_HEADS}",
          f"s_add_u32 s{S_T0}, s{S_T0}, s{S_H}",
          f"s_mul_i32 s{S_X}, s{S_T0}, s{S_LSE_ROWS}",
          f"s_mul_hi_u32 s{S_X + 1}, s{S_T0}, s{S_LSE_ROWS}"]
    # (any lengths: lse_rows per (batch, head), total_q for varlen, from the sequence's first row)
    b += [f"s_add_u32 s{S_X}, s{S_X}, s{S_Q0}", f"s_addc_u32 s{S_X + 1}, s{S_X + 1}, 0"] if VARLEN else []
    b += [f"s_lshl_b64 s[{S_X}:{S_X + 1}], s[{S_X}:{S_X + 1}], 2",
          f"s_add_u32 s{S_X}, s{S_X}, s{S_LSE}",
          f"s_addc_u32 s{S_X + 1}, s{S_X + 1}, s{S_LSE + 1}",
          f"v_lshlrev_b32 v{t + 3}, 2, v{V_QROW}"]
    b += add64_lane(V_LSE_ADDR, S_X, t + 3)
    return b


def add64_lane(dst: int, base: int, off: int):
    """v[dst:dst+1] = s[base:base+1] + v_off (unsigned 32-bit)."""
    return [f"v_mov_b32 v{dst + 1}, s{base + 1}",
            f"v_add_co_u32 v{dst}, vcc, s{base}, v{off}",
            "s_nop 1",  # the carry's VCC: 2 wait states
            f"v_addc_co_u32 v{dst + 1}, vcc, 0, v{dst + 1}, vcc"]


def epilogue_stores():
    """The output rows (BF16) and the LSE of the tile that epilogue_values() ended; rows past
    seqlen are not stored."""
    t = V_T
    if VARLEN:
        b = [f"v_mul_f32 v{A_O + i}, v{V_FACTOR}, v{A_O + i}" for i in range(64)]
    else:
        # two rows' values per instruction (the factor's pair: its low register for both)
        b = [f"v_pk_mul_f32 {vr(A_O + i, 2)}, {vr(A_O + i, 2)}, {vr(V_FACTOR, 2)} op_sel_hi:[1,0]"
             for i in range(0, 64, 2)]
    # pair i lands in A_O + i, never above the registers it reads (2i, 2i + 1)
    for i in range(32):
        b.append(f"v_cvt_pk_bf16_f32 v{A_O + i}, v{A_O + 2 * i}, v{A_O + 2 * i + 1}")
    # (every lane takes part in the rows' way through LDS; output_through_lds() masks each store)
    # Registers 4g..4g+3 of block J hold dv 32J + 8g + 4h .. +3 as 2 dwords: the two lanes of a
    # row each hold 8 bytes of every 16. Lanes j and j + 32 swap (v_permlane32_swap, EXEC
    # ignored) the upper half's first 8 bytes of each 32 with the lower half's last 8, so that
    # lane h holds dv 32J + 16p + 8h .. +7 in 4 consecutive registers: one 16-byte store per
    # lane, 8 stores instead of 16, each output line requested from the L2 half as often.
    b += ["// 16 contiguous bytes per lane: lanes 0-31 keep dv +0..7 of each 16, lanes 32-63 take +8..15"]
    for J in range(4):
        for p in range(2):
            base = A_O + 8 * J + 4 * p
            b += [f"v_permlane32_swap_b32 v{base}, v{base + 2}", f"v_permlane32_swap_b32 v{base + 1}, v{base + 3}"]
    b += output_through_lds()
    b += ["// the LSE, by the lanes of the first half; issued (no lane) without an LSE output too,",
          "// so that the stores' count in the vmcnt order is fixed (EPILOGUE_STORES)",
          f"v_cmp_eq_u32 vcc, 0, v{V_H}",
          f"s_cmp_eq_u64 s[{S_LSE}:{S_LSE + 1}], 0",
          f"s_cselect_b64 s[{S_X}:{S_X + 1}], 0, -1",
          "s_and_b64 exec, exec, vcc",
          f"s_and_b64 exec, exec, s[{S_X}:{S_X + 1}]",
          f"global_store_dword {vr(V_LSE_ADDR, 2)}, v{V_LSE}, off",
          "// the workgroup is always full: every lane comes back",
          "s_mov_b64 exec, -1"]
    return b


def output_through_lds():
    """The 16 contiguous bytes of each lane (row j, bytes 64 J + 32 p +
    16 h) go into the wave's rows in LDS and come back as whole rows, lane l taking bytes
    16 (l % 16) of row 4 k + l / 16 for store k: each store writes 4 rows of 256 bytes (8 lines
    on the L2 path) where a lane-per-row store wrote 16 bytes of 32 rows (32 lines): the
    vector memory path at a tile's end carries the next tile's loads too. Row k of a lane
    is stored when it is below seqlen (the sequence's length with any lengths; the rows grow
    with k, so the mask only narrows)."""
    t = V_T
    b = ["// the output through LDS: 4 whole rows per store (output_through_lds())",
         f"s_mul_i32 s{S_T0}, s{S_WAVE}, {OUT_WAVE}",
         f"s_add_u32 s{S_T0}, s{S_T0}, {OUT_BASE}",
         f"v_mul_u32_u24 v{t}, {OUT_ROW}, v{V_J}",
         f"v_lshl_add_u32 v{t}, v{V_H}, 4, v{t}",
         f"v_add_u32 v{t}, s{S_T0}, v{t}"]
    for J in range(4):
        for p in range(2):
            b.append(f"ds_write_b128 v{t}, {vr(A_O + 8 * J + 4 * p, 4)} offset:{2 * (32 * J + 16 * p)}")
    b += [f"v_bfe_u32 v{t + 1}, v{V_TID}, 4, 2",
          f"v_mul_u32_u24 v{t + 1}, {OUT_ROW}, v{t + 1}",
          f"v_and_b32 v{t + 2}, 15, v{V_TID}",
          f"v_lshl_add_u32 v{t + 1}, v{t + 2}, 4, v{t + 1}",
          f"v_add_u32 v{t + 1}, s{S_T0}, v{t + 1}"]
    for k in range(8):
        b.append(f"ds_read_b128 {vr(A_O + 32 + 4 * k, 4)}, v{t + 1} offset:{4 * k * OUT_ROW}")
    b += ["// the lane offsets of stores 1-7 (4 rows apart), the row of store 0",
          f"s_lshl_b32 s{S_T1}, s{S_OS + 2}, 3"]
    addr = [V_OUT_ADDR] + [V_S + 8 + k for k in range(7)]
    for k in range(1, 8):
        b += [f"v_add_u32 v{addr[k]}, s{S_T1}, v{addr[k - 1]}"]
    # (the row of store 0, less the sequence's length with any lengths: stored when negative)
    b += [f"v_sub_u32 v{t + 2}, v{V_OROW}, v{V_J}",
          f"v_bfe_u32 v{t + 3}, v{V_TID}, 4, 2",
          f"v_add_u32 v{t + 2}, v{t + 2}, v{t + 3}"]
    for k in range(8):
        b += [f"v_cmp_gt_i32 vcc, {0 if VARLEN else f's{S_SEQ}'}, v{t + 2}",
              f"v_add_u32 v{t + 2}, 4, v{t + 2}",
              "s_mov_b64 exec, vcc",
              f"s_waitcnt lgkmcnt({7 - k})",
              f"global_store_dwordx4 v{addr[k]}, {vr(A_O + 32 + 4 * k, 4)}, s[{S_OUTB}:{S_OUTB + 1}]"]
    b += ["s_mov_b64 exec, -1",
          f"v_cmp_gt_i32 vcc, {0 if VARLEN else f's{S_SEQ}'}, v{V_OROW}",
          "s_mov_b64 exec, vcc"]
    return b


def find_tile_word(loop: str, none: str):
    """The next tile word of this workgroup's jobs into S_TW (lone tiles' empty words, -1, are
    skipped), or a branch to `none` when the jobs are done."""
    return [f"{loop}:",
            f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
            f"s_cbranch_scc1 {none}",
            f"s_add_u32 s{S_T0}, s{S_G}, s{S_WORD}",
            f"s_add_u32 s{S_T0}, s{S_T0}, 3",
            f"s_lshl_b32 s{S_T0}, s{S_T0}, 2",
            f"s_load_dword s{S_TW}, s[{S_JT}:{S_JT + 1}], s{S_T0}",
            "s_waitcnt lgkmcnt(0)",
            f"s_add_u32 s{S_WORD}, s{S_WORD}, 1",
            f"s_cmp_eq_u32 s{S_TW}, -1",
            f"s_cbranch_scc1 {loop}"]


def prefetch_tile_word():
    """The load of the next tile word (S_TW is free once tile_setup() has decoded it), issued in
    a tile's start right after the wait for Q, so that the epilogue, where the waves whose
    diagonal block is the tile's last would wait for it (a scalar load takes about 200 clocks)
    on their way to the next tile's loads, finds it there. The tile start's lgkmcnt(0) before
    its barrier waits for it under the V wait and the LDS stores; issued after the first
    scores instead, it held the first bodies' partial lgkmcnt waits (docs/tuning-fp8-gfx950.md
    rows 30-31)."""
    skip = L("no_next_word")
    return [f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
            f"s_cbranch_scc1 {skip}",
            f"s_add_u32 s{S_T0}, s{S_G}, s{S_WORD}",
            f"s_add_u32 s{S_T0}, s{S_T0}, 3",
            f"s_lshl_b32 s{S_T0}, s{S_T0}, 2",
            f"s_load_dword s{S_TW}, s[{S_JT}:{S_JT + 1}], s{S_T0}",
            f"{skip}:"]


def next_tile_word(loop: str, none: str):
    """find_tile_word() with the first word already loaded by prefetch_tile_word()."""
    found = L("word_found")
    return [f"{loop}:",
            f"s_cmp_ge_u32 s{S_WORD}, s{S_WEND}",
            f"s_cbranch_scc1 {none}",
            "s_waitcnt lgkmcnt(0)",
            f"s_add_u32 s{S_WORD}, s{S_WORD}, 1",
            f"s_cmp_eq_u32 s{S_TW}, -1",
            f"s_cbranch_scc0 {found}"] + prefetch_tile_word() + [f"s_branch {loop}", f"{found}:"]


def body():
    b = prologue()
    b += find_tile_word(".Lfirst_word", ".Ldone")
    b += tile_setup()
    b += tile_start(0, "_first") + ["s_branch .Ltile_started"]
    b += [".Ltile:"] + tile_start(EPILOGUE_STORES, "") + [".Ltile_started:"]
    b += [f"s_cmp_lt_u32 s{S_ROLE}, 4", "s_cbranch_scc0 .Lkey_loop_trail"]
    # (the leading waves keep their vector priority past the loop: their epilogue is the longer
    # way to the next tile's start; qk_first() drops it)
    b += [] if VARLEN else [f"s_setprio {loop_prio(True, False)}"]
    b += key_loop(True) + ["s_branch .Lkey_loop_end"] + key_loop(False) + [".Lkey_loop_end:"]

    def unless_early(code, label):
        """code but for the waves that ran it in early_epilogue()."""
        return code if VARLEN else [f"s_bitcmp1_b32 s{S_EARLYQ}, 1", f"s_cbranch_scc1 {label}"] + code + [f"{label}:"]

    b += unless_early(bad_v_key(), ".Lbad_v_read")
    b += ["// every wave is done with this query tile's LDS before the next one overwrites it",
          "s_waitcnt lgkmcnt(0)",
          "s_barrier"]
    b += unless_early(MFMA_READ_NOPS + epilogue_values(), ".Lvalues_read")
    b += ["// the next tile's Q and key tile 0 loads go out before this tile's output math, which",
          "// covers their latency"]
    b += next_tile_word(".Lnext_word", ".Lno_next_tile")
    b += [] if not SWAP else ["// the roles swap (S_ROLE)", f"s_xor_b32 s{S_ROLE}, s{S_ROLE}, 4"]
    b += tile_setup()
    b += [] if VARLEN else early_key_tile0()
    b += ["s_branch .Lnext_tile_loading", ".Lno_next_tile:", f"s_mov_b32 s{S_TW}, -1", ".Lnext_tile_loading:"]
    # (key tile 0 staged, bit 2: the output goes out in the tile start, output_after_barrier())
    b += unless_early(epilogue_stores(), ".Loutput_stored") if not SWAP else \
        [f"s_bitcmp1_b32 s{S_EARLYQ}, 2", "s_cbranch_scc1 .Loutput_stored"] + \
        unless_early(epilogue_stores(), ".Loutput_stored")
    b += [f"s_cmp_lg_u32 s{S_TW}, -1", "s_cbranch_scc1 .Ltile"]
    b += [".Ldone:", "s_endpgm"]
    b += OUT_OF_LINE
    return b


def print_stats():
    """Static counts of one 128-key tile of the key loop per wave (two bodies, steady state: no
    mask, no rescale), and what the diagonal block's mask and a rescale add (schedule_stats.py
    has the rates)."""
    steady = []
    for r in range(2):
        steady += softmax() + stage(r, True) + matrix_phase(r, True)
        steady += ["s_waitcnt lgkmcnt(0)", "s_barrier", "s_add_u32", "s_cmp_lt_u32", "s_cbranch_scc1"]
    rescale = rescale_accumulators() + large_m_check()
    check = diagonal_v_check(False)
    diagonal = check[next(i for i, l in enumerate(check) if l.startswith("s_cbranch")) + 1:]
    steady = [l for l in steady if l not in rescale and l not in diagonal]
    print(schedule_stats.report("key tile (128 keys x 32 queries per wave), steady state",
                                schedule_stats.count(steady)))
    print(schedule_stats.report("  + diagonal block mask", schedule_stats.count(mask_block())))
    print(schedule_stats.report("  + V NaN check of the last two key tiles (zeroing only when one is found)",
                                schedule_stats.count(check)))
    print(schedule_stats.report("  + the LSE's unrounded sum of a sequence's first block (with an LSE output)",
                                schedule_stats.count(lse_row_sum(""))))
    print(schedule_stats.report("  + rescale (when a row's max grows by more than 0.125), large-max flag",
                                schedule_stats.count(rescale)))
    print(schedule_stats.report("epilogue per query tile", schedule_stats.count(epilogue_values() + epilogue_stores())))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--stats":
        print_stats()
        return
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)  # usage: the one argument is the output .s path
    k = Kernel(name=NAME, body=body(), kernarg_size=ARGS_SIZE,
               workgroup_size=THREADS, next_free_vgpr=A_O + ACC_REGS, next_free_sgpr=NEXT_SGPR,
               lds_bytes=LDS_BYTES)
    mode = " --varlen" if VARLEN else ""
    text = emit([k], [f"Generated by src/asm/gen_attn_fwd_fp8.py --d-qk {D_QK}{mode}; do not edit.",
                      f"Causal FP8 e4m3 attention, d_qk = {D_QK}, d_v = {D_V}, for gfx950 (see the generator)."])
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
