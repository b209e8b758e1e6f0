// An MFMA result read that is early in its own wave's wait states and safe only because
// another wave on the same SIMD fills the cycles in between (test_cycle_hazards.cpp).
//
// The lower half of the workgroup's waves run a long chain of dependent FMAs; the upper half
// each issue one v_mfma_f32_16x16x16_bf16 (4 passes: gfx950 asks for 8 wait states before a
// VALU reads its result) and read the result 3 wait states later. On the MI355X model the
// waves of a workgroup go round robin over the 4 SIMDs, so with 8 waves each SIMD holds one
// wave of each half: the MFMA raises its priority to issue before the chain, then drops it,
// and its reads wait for the older chain's VALU issue slots. With 4 waves every MFMA wave has
// a SIMD to itself and nothing covers the reads.
//
// The MFMA and its reads are inline assembly: clang's hazard recognizer counts wait states
// per wave and would put the full 8 in front of any read it emits itself. Everything else
// (addresses, loads, the role branch, the chain, the stores) is compiled.
#include <hip/hip_runtime.h>

typedef short bf16x4 __attribute__((ext_vector_type(4)));

// in: per MFMA wave w (w counted from the first MFMA wave) 64 lanes x 4 bf16 of A at
// in[w * 128 + 2 * lane], and of B at in[1024 + w * 128 + 2 * lane]; per chain wave w, the
// start value at in[2048 + w * 64 + lane] and the chain's factor at in[2560].
// out: MFMA wave w writes D register r of lane l at out[(w * 4 + r) * 64 + l] (w its wave id),
// a chain wave w its value at out[w * 256 + l].
extern "C" __global__ void __launch_bounds__(512) mfma_cover(float* out, const float* in) {
  const int wave = __builtin_amdgcn_readfirstlane(int(threadIdx.x) / 64);
  const int lane = int(threadIdx.x) % 64;
  const int half = int(blockDim.x) / 128;
  if (wave >= half) {
    const int m = wave - half;
    const bf16x4 a = reinterpret_cast<const bf16x4*>(in)[m * 64 + lane];
    const bf16x4 b = reinterpret_cast<const bf16x4*>(in + 1024)[m * 64 + lane];
    float d0, d1, d2, d3;
    asm volatile(
        "s_setprio 1\n\t"
        "v_mfma_f32_16x16x16_bf16 v[40:43], %4, %5, 0\n\t"
        "s_setprio 0\n\t"
        "s_nop 1\n\t"
        "v_mov_b32 %0, v40\n\t"
        "v_mov_b32 %1, v41\n\t"
        "v_mov_b32 %2, v42\n\t"
        "v_mov_b32 %3, v43"
        : "=&v"(d0), "=&v"(d1), "=&v"(d2), "=&v"(d3)
        : "v"(a), "v"(b)
        : "v40", "v41", "v42", "v43");
    out[(wave * 4 + 0) * 64 + lane] = d0;
    out[(wave * 4 + 1) * 64 + lane] = d1;
    out[(wave * 4 + 2) * 64 + lane] = d2;
    out[(wave * 4 + 3) * 64 + lane] = d3;
  } else {
    float x = in[2048 + wave * 64 + lane];
    const float c = in[2560];
#pragma unroll
    for (int i = 0; i < 48; ++i) x = x * c + 0.25f;
    out[wave * 256 + lane] = x;
  }
}
