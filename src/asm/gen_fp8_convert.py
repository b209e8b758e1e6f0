#!/usr/bin/env python3
"""Generates fp8_convert.s: the conversion pass of zyfa_fp8_quantize for gfx950.

Kernels fp8_convert_bf16 and fp8_convert_f32, 256 threads, one element per thread, grid
(ceil(row_len / 256), rows_y, rows_z). Each workgroup
  1. reduces the kAmaxWorkgroups = 64 partial amax bit patterns written by fp8_amax_* with
     scalar loads and s_max_u32 (same inputs, same order in every workgroup: deterministic),
  2. derives descale = 2^e with e the smallest integer such that amax <= 448 * 2^e, by integer
     arithmetic on the bits (exact, no log2): descale 1 when amax == 0, NaN when amax is not
     finite, and at least 2^-126 so that the descale is always a normal float,
  3. converts its element: fp8 = RNE(x * 2^-e) with v_cvt_pk_fp8_f32 (|x * 2^-e| <= 448, so
     no overflow; f32 denormals are kept so the scaling is exact),
and workgroup (0, 0, 0) stores the descale. Argument offsets come from kernel_args.py
(FP8_CONVERT_ARGS), which the C++ struct Fp8ConvertArgs is checked against.

usage: gen_fp8_convert.py OUTPUT.s
"""

import sys

from gfx950_asm import Kernel, emit
from kernel_args import FP8_CONVERT_ARGS

ARGS_SIZE = FP8_CONVERT_ARGS.size
# The pointers and strides, read with one s_load_dwordx16 into s[S_SRC:S_SRC+15] in this order.
HEAD_FIELDS = ("src", "dst", "partials", "descale", "src_stride_y", "src_stride_z", "dst_stride_y",
               "dst_stride_z")
HEAD_OFFSET = FP8_CONVERT_ARGS.offset["src"]
assert [FP8_CONVERT_ARGS.offset[f] for f in HEAD_FIELDS] == [HEAD_OFFSET + 8 * i for i in range(8)], \
    "the pointers and strides of Fp8ConvertArgs must stay 64 contiguous bytes in this order"
PARTIALS = 64
THREADS = 256

# SGPR map (s[0:1] kernarg pointer, s2/s3/s4 workgroup id x/y/z from the dispatch).
S_SRC, S_DST, S_PART, S_DESC = 8, 10, 12, 14      # 64-bit pointers
S_SY, S_SZ, S_DY, S_DZ = 16, 18, 20, 22           # 64-bit byte strides
S_ROWLEN = 24
S_AMAX, S_E, S_T, S_DESCALE, S_INV = 25, 26, 27, 28, 29
S_BLK = 32   # s[32:63]: 32 partials at a time
S_OFF = 64   # s[64:67] 64-bit scratch sums
S_SAVE = 68  # s[68:69] saved exec


def mul64_add(dst: int, stride: int, idx: str):
    """s[dst:dst+1] += s[stride:stride+1] * idx (idx a 32-bit unsigned SGPR), mod 2^64."""
    return [
        f"s_mul_i32 s{S_OFF}, s{stride}, {idx}",
        f"s_mul_hi_u32 s{S_OFF + 1}, s{stride}, {idx}",
        f"s_mul_i32 s{S_OFF + 2}, s{stride + 1}, {idx}",
        f"s_add_u32 s{S_OFF + 1}, s{S_OFF + 1}, s{S_OFF + 2}",
        f"s_add_u32 s{dst}, s{dst}, s{S_OFF}",
        f"s_addc_u32 s{dst + 1}, s{dst + 1}, s{S_OFF + 1}",
    ]


def body(elem_bytes: int):
    b = [
        "// arguments: src, dst, partials, descale, four byte strides (64 bytes), then row_len",
        f"s_load_dwordx16 s[{S_SRC}:{S_SRC + 15}], s[0:1], {hex(HEAD_OFFSET)}",
        f"s_load_dword s{S_ROWLEN}, s[0:1], {hex(FP8_CONVERT_ARGS.offset['row_len'])}",
        "s_waitcnt lgkmcnt(0)",
        "// 1. amax = max of the 64 partial bit patterns (unsigned order = float order for |x|)",
        f"s_mov_b32 s{S_AMAX}, 0",
    ]
    for chunk in range(PARTIALS // 32):
        b += [f"s_load_dwordx16 s[{S_BLK}:{S_BLK + 15}], s[{S_PART}:{S_PART + 1}], {hex(128 * chunk)}",
              f"s_load_dwordx16 s[{S_BLK + 16}:{S_BLK + 31}], s[{S_PART}:{S_PART + 1}], {hex(128 * chunk + 64)}",
              "s_waitcnt lgkmcnt(0)"]
        b += [f"s_max_u32 s{S_AMAX}, s{S_AMAX}, s{S_BLK + i}" for i in range(32)]
    b += [
        "// 2. descale exponent field: amax = 1.m * 2^(E-127); amax <= 448 * 2^e with 448 = 1.75 * 2^8",
        "//    gives e = E - 127 - 8, plus 1 when the mantissa field exceeds that of 1.75 (0x600000)",
        f"s_lshr_b32 s{S_E}, s{S_AMAX}, 23",
        f"s_and_b32 s{S_T}, s{S_AMAX}, 0x7fffff",
        f"s_cmp_gt_u32 s{S_T}, 0x600000",
        f"s_cselect_b32 s{S_T}, 1, 0",
        f"s_add_i32 s{S_E}, s{S_E}, s{S_T}",
        f"s_add_i32 s{S_E}, s{S_E}, -8",
        "// at least 2^-126 (exponent field 1): the descale stays a normal float",
        f"s_max_i32 s{S_E}, s{S_E}, 1",
        f"s_lshl_b32 s{S_DESCALE}, s{S_E}, 23",
        "// 1 / descale = 2^-e: exponent field 254 - field(descale)",
        f"s_sub_u32 s{S_INV}, 254, s{S_E}",
        f"s_lshl_b32 s{S_INV}, s{S_INV}, 23",
        "// amax == 0: descale 1",
        f"s_cmp_eq_u32 s{S_AMAX}, 0",
        f"s_cselect_b32 s{S_DESCALE}, 0x3f800000, s{S_DESCALE}",
        f"s_cselect_b32 s{S_INV}, 0x3f800000, s{S_INV}",
        "// inf or NaN anywhere: NaN descale, and NaN outputs",
        f"s_cmp_ge_u32 s{S_AMAX}, 0x7f800000",
        f"s_cselect_b32 s{S_DESCALE}, 0x7fc00000, s{S_DESCALE}",
        f"s_cselect_b32 s{S_INV}, 0x7fc00000, s{S_INV}",
        "// 3. element x = wg_x * 256 + thread; rows beyond row_len do nothing",
        "v_and_b32 v0, 0x3ff, v0",
        f"s_lshl_b32 s{S_T}, s2, 8",
        f"v_add_u32 v1, s{S_T}, v0",
        f"v_cmp_gt_u32 vcc, s{S_ROWLEN}, v1",
        f"s_and_saveexec_b64 s[{S_SAVE}:{S_SAVE + 1}], vcc",
        f"s_cbranch_execz .Lstore_descale_{elem_bytes}",
        "// row bases: src += y*sy + z*sz, dst += y*dy + z*dz (64-bit byte offsets)",
    ]
    b += mul64_add(S_SRC, S_SY, "s3") + mul64_add(S_SRC, S_SZ, "s4")
    b += mul64_add(S_DST, S_DY, "s3") + mul64_add(S_DST, S_DZ, "s4")
    shift = 1 if elem_bytes == 2 else 2
    load = "global_load_ushort" if elem_bytes == 2 else "global_load_dword"
    b += [
        "// src address = src + x * element size (64-bit)",
        f"v_lshlrev_b32 v2, {shift}, v1",
        f"v_lshrrev_b32 v3, {32 - shift}, v1",
        f"v_mov_b32 v4, s{S_SRC + 1}",
        f"v_add_co_u32 v2, vcc, s{S_SRC}, v2",
        "// gfx940+: a VALU read of VCC needs 2 wait states after a VALU wrote it (no interlock)",
        "s_nop 1",
        "v_addc_co_u32 v3, vcc, v4, v3, vcc",
        f"{load} v5, v[2:3], off",
        "// dst address = dst + x",
        f"v_mov_b32 v7, s{S_DST + 1}",
        f"v_add_co_u32 v6, vcc, s{S_DST}, v1",
        "s_nop 1",
        "v_addc_co_u32 v7, vcc, v7, 0, vcc",
        "s_waitcnt vmcnt(0)",
    ]
    if elem_bytes == 2:
        b += ["// bf16 -> f32 is exact: the bits move to the high half",
              "v_lshlrev_b32 v5, 16, v5"]
    b += [
        f"v_mul_f32 v5, s{S_INV}, v5",
        "// round to nearest even to e4m3 (byte 0 of the result)",
        "v_cvt_pk_fp8_f32 v8, v5, v5",
        "global_store_byte v[6:7], v8, off",
        f".Lstore_descale_{elem_bytes}:",
        f"s_or_b64 exec, exec, s[{S_SAVE}:{S_SAVE + 1}]",
        "// workgroup (0, 0, 0), thread 0 stores the descale",
        f"s_or_b32 s{S_T}, s2, s3",
        f"s_or_b32 s{S_T}, s{S_T}, s4",
        f"s_cmp_eq_u32 s{S_T}, 0",
        f"s_cbranch_scc0 .Ldone_{elem_bytes}",
        "v_cmp_eq_u32 vcc, 0, v0",
        "s_and_b64 exec, exec, vcc",
        f"v_mov_b32 v9, s{S_DESCALE}",
        "v_mov_b32 v10, 0",
        f"global_store_dword v10, v9, s[{S_DESC}:{S_DESC + 1}]",
        f".Ldone_{elem_bytes}:",
        "s_endpgm",
    ]
    return b


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)  # usage: the one argument is the output .s path
    kernels = [
        Kernel(name=f"fp8_convert_{tag}", body=body(eb), kernarg_size=ARGS_SIZE,
               workgroup_size=THREADS, next_free_vgpr=11, next_free_sgpr=70,
               workgroup_id_dims=3)
        for tag, eb in (("bf16", 2), ("f32", 4))
    ]
    text = emit(kernels, ["Generated by src/asm/gen_fp8_convert.py; do not edit.",
                          "zyfa_fp8_quantize conversion pass for gfx950 (see the generator)."])
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
