// The cpu backend under 8 threads sharing one handle: quantize, and quantize then attention
// with device descales, bitwise equal to the same calls made alone (support/concurrent_calls.h).
#include "support/concurrent_calls.h"

namespace zyfa::test {
namespace {

TEST(CpuConcurrency, QuantizeOnOneHandleFromEightThreads) {
  HostCallMemory mem;
  expect_thread_safe(ZYFA_BACKEND_CPU, mem, /*fwd=*/false, cpu_tolerance(), "CpuConcurrency.Quantize");
}

TEST(CpuConcurrency, QuantizeThenFwdOnOneHandleFromEightThreads) {
  HostCallMemory mem;
  expect_thread_safe(ZYFA_BACKEND_CPU, mem, /*fwd=*/true, cpu_tolerance(), "CpuConcurrency.QuantizeThenFwd");
}

}  // namespace
}  // namespace zyfa::test
