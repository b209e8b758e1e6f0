// The cpu backend under 8 threads sharing one handle: quantize, and quantize then attention
// with device descales, bitwise equal to the same calls made alone (support/concurrent_calls.h).
#include "support/concurrent_calls.h"

namespace zyfa::test {
namespace {

ZYFA_HOST_THREAD_SAFETY_TESTS(CpuConcurrency, ZYFA_BACKEND_CPU, cpu_tolerance())

}  // namespace
}  // namespace zyfa::test
