"""Kernel-argument layouts of the gfx950 kernels: the one table of field offsets.

The C++ structs (src/kernels/hip/*args*.h) are checked against it by a header of static_asserts
that gen_kernel_args_asserts.py writes into the build tree, and the assembly generators take
their kernarg offsets from it, so neither side copies a number by hand.
"""

# Bytes of each field kind (FastDiv: magic and shift, two uint32).
_SIZES = {"u64": 8, "i64": 8, "f32": 4, "i32": 4, "u32": 4, "FastDiv": 8}


class Layout:
    """A packed struct: fields in order, each (name, kind, count); offsets follow by size."""

    def __init__(self, struct: str, header: str, fields):
        self.struct = struct
        self.header = header
        self.fields = fields
        self.offset = {}
        self.bytes = {}
        off = 0
        for name, kind, count in fields:
            size = _SIZES[kind]
            assert off % size == 0, f"{struct}.{name} at {off} is not naturally aligned"
            self.offset[name] = off
            self.bytes[name] = size * count
            off += size * count
        assert off % 8 == 0, f"{struct} is {off} bytes, not a multiple of 8"
        self.size = off


ATTN_FWD_ARGS = Layout("AttnFwdArgs", "attn_fwd_args.h", [
    ("q", "u64", 1), ("k", "u64", 1), ("v", "u64", 1), ("out", "u64", 1), ("lse", "u64", 1),
    ("job_table", "u64", 1),
    ("q_descale_ptr", "u64", 1), ("k_descale_ptr", "u64", 1), ("v_descale_ptr", "u64", 1),
    ("q_stride", "i64", 3), ("k_stride", "i64", 3), ("v_stride", "i64", 3), ("o_stride", "i64", 3),
    ("descale_stride", "i64", 6),
    ("scale_log2", "f32", 1), ("q_descale", "f32", 1), ("k_descale", "f32", 1), ("v_descale", "f32", 1),
    ("seqlen", "i32", 1), ("heads", "i32", 1), ("heads_k", "i32", 1), ("reserved", "i32", 1),
    ("div_n_tiles", "FastDiv", 1), ("div_heads", "FastDiv", 1), ("div_group", "FastDiv", 1),
])

# The any-lengths kernels' arguments: AttnFwdArgs, then the sequences' (attn_fwd_lengths_args.h).
_SIZES["AttnFwdArgs"] = ATTN_FWD_ARGS.size
ATTN_LENGTHS_ARGS = Layout("AttnLengthsArgs", "attn_fwd_lengths_args.h", [
    ("f", "AttnFwdArgs", 1),
    ("cu_seqlens_q", "u64", 1), ("cu_seqlens_k", "u64", 1), ("lse_rows", "i64", 1),
    ("total_q", "i32", 1), ("total_k", "i32", 1), ("seqlen_k", "i32", 1), ("reserved", "i32", 1),
])

FP8_CONVERT_ARGS = Layout("Fp8ConvertArgs", "fp8_quantize_args.h", [
    ("src", "u64", 1), ("dst", "u64", 1), ("partials", "u64", 1), ("descale", "u64", 1),
    ("src_stride_y", "i64", 1), ("src_stride_z", "i64", 1),
    ("dst_stride_y", "i64", 1), ("dst_stride_z", "i64", 1),
    ("row_len", "u32", 1), ("reserved", "u32", 1),
])

LAYOUTS = [ATTN_FWD_ARGS, ATTN_LENGTHS_ARGS, FP8_CONVERT_ARGS]
