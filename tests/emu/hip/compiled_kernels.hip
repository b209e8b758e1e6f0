// Kernels as an outside author compiles them (clang, -O3, gfx950), for the emulator to run
// (test_emu_compiled.cpp): a private array the compiler keeps in scratch, register spills to
// scratch, a private pointer passed to a call, and loads through a swizzled buffer resource.
// Arguments follow the test harness: out, in, then values.
#include <hip/hip_runtime.h>

// Dynamically indexed private array: the compiler places it in scratch (scratch_load with a
// per-lane address).
extern "C" __global__ void private_array(float* out, const float* in, int k) {
  float arr[48];
  const int t = threadIdx.x;
  for (int i = 0; i < 48; ++i) arr[i] = in[t * 48 + i];
  float s = 0;
  for (int i = 0; i < 48; ++i) s += arr[(i * k + t) % 48] * float(i + 1);
  out[t] = s;
}

// 96 values live at once in at most 64 VGPRs (8 waves per SIMD): the register allocator
// spills to scratch.
extern "C" __global__ void __attribute__((amdgpu_waves_per_eu(8, 8))) spill(float* out, const float* in) {
  const int t = threadIdx.x;
  float v[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = in[t * 96 + i];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 96; ++i) s = s * 0.5f + v[i] * v[95 - i];
#pragma unroll
  for (int i = 0; i < 96; ++i) s += v[(i * 7) % 96] * float(i);
  out[t] = s;
}

// A swizzled resource over `in` (stride 16, index stride 16), read raw at offset 4 t + 4 with
// soffset 8; the swizzled-buffer bit of the load keeps the compiler from merging accesses.
extern "C" __global__ void swizzled_load(float* out, const float* in) {
  const __amdgpu_buffer_rsrc_t r =
      __builtin_amdgcn_make_buffer_rsrc(const_cast<float*>(in), short(0x8000 | 16), 4096, 0x00020000 | (1 << 21));
  const int t = threadIdx.x;
  reinterpret_cast<unsigned*>(out)[t] = __builtin_amdgcn_raw_buffer_load_b32(r, t * 4 + 4, 8, 8);  // the bits
}

// A private array whose address a called function takes: the callee reads it with flat
// loads through the private aperture (src_private_base), on a stack in scratch.
__attribute__((noinline)) __device__ float weighted_sum(const float* arr, int n, int k) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += arr[(i * k) & 63] * float(i + 1);
  return s;
}
extern "C" __global__ void private_pointer_call(float* out, const float* in, int k) {
  float arr[64];
  const int t = threadIdx.x;
  for (int i = 0; i < 64; ++i) arr[i] = in[t * 64 + i];
  out[t] = weighted_sum(arr, 64, k);
}
