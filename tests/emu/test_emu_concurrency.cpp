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

TEST(EmuConcurrency, QuantizeOnOneHandleFromEightThreads) {
  expect_thread_safe_on_host(ZYFA_BACKEND_EMU, /*fwd=*/false, fp8_tolerance(), "EmuConcurrency.Quantize");
}

TEST(EmuConcurrency, QuantizeThenFwdOnOneHandleFromEightThreads) {
  expect_thread_safe_on_host(ZYFA_BACKEND_EMU, /*fwd=*/true, fp8_tolerance(), "EmuConcurrency.QuantizeThenFwd");
}

}  // namespace
}  // namespace zyfa::test
