// The gfx950 kernels on the emulator under 8 threads sharing one handle: quantize (whose
// partial-amax scratch the calls must not share), and quantize then attention with device
// descales and cached job tables, bitwise equal to the same calls made alone
// (support/concurrent_calls.h).
#include "support/concurrent_calls.h"

namespace zyfa::test {
namespace {

Tolerance fp8_tolerance() {
  return kernel_tolerance(AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 2, 1, 130).with(Inputs::GAUSSIAN, kScaleMax));
}

ZYFA_HOST_THREAD_SAFETY_TESTS(EmuConcurrency, ZYFA_BACKEND_EMU, fp8_tolerance())

}  // namespace
}  // namespace zyfa::test
