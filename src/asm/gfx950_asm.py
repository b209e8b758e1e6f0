"""Helpers to emit gfx950 assembly kernels with their descriptor and code-object metadata.

A kernel is its instruction text plus what the loader needs: the kernel descriptor
(.amdhsa_kernel) and the NT_AMDGPU_METADATA note (.amdgpu_metadata, code object v5), which
llvm-readobj --notes shows and the build's manifest reads. Python 3 standard library only.
"""

from dataclasses import dataclass, field
from typing import List

TARGET = "amdgcn-amd-amdhsa--gfx950"


@dataclass
class Kernel:
    name: str
    body: List[str]
    kernarg_size: int
    workgroup_size: int
    next_free_vgpr: int
    next_free_sgpr: int
    lds_bytes: int = 0
    workgroup_id_dims: int = 1  # how many of workgroup id x, y, z the kernel reads (s2, s3, s4)
    agprs: int = 0  # accumulation registers a0.. (after the VGPRs in the unified register file)
    comment: List[str] = field(default_factory=list)


def _registers(k: Kernel):
    """(VGPRs rounded to the multiple of 4 that accum_offset needs, VGPRs + AGPRs)."""
    vgprs = max(4, (k.next_free_vgpr + 3) // 4 * 4)
    return vgprs, vgprs + k.agprs


def _descriptor(k: Kernel) -> List[str]:
    # gfx950 has one register file: the accumulation registers start at accum_offset, right
    # after the VGPRs (a multiple of 4), and next_free_vgpr counts both.
    vgprs, total = _registers(k)
    return [
        "\t.section .rodata,\"a\",@progbits",
        "\t.p2align 6, 0x0",
        f"\t.amdhsa_kernel {k.name}",
        f"\t\t.amdhsa_group_segment_fixed_size {k.lds_bytes}",
        "\t\t.amdhsa_private_segment_fixed_size 0",
        f"\t\t.amdhsa_kernarg_size {k.kernarg_size}",
        "\t\t.amdhsa_user_sgpr_count 2",
        "\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1",
        "\t\t.amdhsa_system_sgpr_workgroup_id_x 1",
        f"\t\t.amdhsa_system_sgpr_workgroup_id_y {1 if k.workgroup_id_dims >= 2 else 0}",
        f"\t\t.amdhsa_system_sgpr_workgroup_id_z {1 if k.workgroup_id_dims >= 3 else 0}",
        "\t\t.amdhsa_system_vgpr_workitem_id 0",
        f"\t\t.amdhsa_next_free_vgpr {total}",
        f"\t\t.amdhsa_next_free_sgpr {k.next_free_sgpr}",
        f"\t\t.amdhsa_accum_offset {vgprs}",
        "\t\t.amdhsa_reserve_vcc 1",
        # f32 denormals kept: scaling a subnormal input by 2^k must stay exact.
        "\t\t.amdhsa_float_denorm_mode_32 3",
        "\t\t.amdhsa_float_denorm_mode_16_64 3",
        "\t\t.amdhsa_ieee_mode 1",
        "\t\t.amdhsa_dx10_clamp 1",
        "\t.end_amdhsa_kernel",
    ]


def _metadata(kernels: List[Kernel]) -> List[str]:
    out = ["\t.amdgpu_metadata", "---", "amdhsa.kernels:"]
    for k in kernels:
        _, total = _registers(k)
        out += [
            f"  - .agpr_count: {k.agprs}",
            "    .args:",
            "      - .offset: 0",
            f"        .size: {k.kernarg_size}",
            "        .value_kind: by_value",
            f"    .group_segment_fixed_size: {k.lds_bytes}",
            "    .kernarg_segment_align: 8",
            f"    .kernarg_segment_size: {k.kernarg_size}",
            f"    .max_flat_workgroup_size: {k.workgroup_size}",
            f"    .name: {k.name}",
            "    .private_segment_fixed_size: 0",
            # next_free_sgpr plus VCC, as the compiler counts it
            f"    .sgpr_count: {k.next_free_sgpr + 2}",
            "    .sgpr_spill_count: 0",
            f"    .symbol: {k.name}.kd",
            "    .uniform_work_group_size: 1",
            f"    .vgpr_count: {total}",
            "    .vgpr_spill_count: 0",
            "    .wavefront_size: 64",
        ]
    out += [f"amdhsa.target: {TARGET}", "amdhsa.version:", "  - 1", "  - 2", "...",
            "\t.end_amdgpu_metadata"]
    return out


def emit(kernels: List[Kernel], header: List[str]) -> str:
    lines = [f"// {h}" if h else "//" for h in header]
    lines += [f"\t.amdgcn_target \"{TARGET}\"", "\t.amdhsa_code_object_version 5"]
    for k in kernels:
        lines += ["", "\t.text", f"\t.globl {k.name}", "\t.p2align 8", f"\t.type {k.name},@function"]
        lines += [f"// {c}" for c in k.comment]
        lines += [f"{k.name}:"]
        lines += [l if l.endswith(":") else f"\t{l}" for l in k.body]
        lines += [f".L{k.name}_end:", f"\t.size {k.name}, .L{k.name}_end-{k.name}", ""]
        lines += _descriptor(k)
    lines += [""] + _metadata(kernels)
    return "\n".join(lines) + "\n"
