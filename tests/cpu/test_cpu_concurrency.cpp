// The cpu backend under 8 threads sharing one handle: quantize, and quantize then attention
// with device descales, bitwise equal to the same calls made alone (support/concurrent_calls.h).
#include "support/concurrent_calls.h"

namespace zyfa::test {
namespace {

TEST(CpuConcurrency, QuantizeOnOneHandleFromEightThreads) {
  expect_thread_safe_on_host(ZYFA_BACKEND_CPU, /*fwd=*/false, cpu_tolerance(), "CpuConcurrency.Quantize");
}

TEST(CpuConcurrency, QuantizeThenFwdOnOneHandleFromEightThreads) {
  expect_thread_safe_on_host(ZYFA_BACKEND_CPU, /*fwd=*/true, cpu_tolerance(), "CpuConcurrency.QuantizeThenFwd");
}

}  // namespace
}  // namespace zyfa::test
