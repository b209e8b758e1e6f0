// The cpu backend's result is bitwise the same for every thread count and every call.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu_test_util.h"
#include "host/validate.h"
#include "host/cpu/cpu_attention.h"

namespace zyfa::test {
namespace {

void expect_thread_count_independent(AttnConfig c) {
  c.seed = seed_for(c.name());
  AttnData a = make_attn_data(c);
  const HostRun first = run_cpu(a);
  ASSERT_EQ(first.status, ZYFA_STATUS_SUCCESS) << first.error;
  const HostRun again = run_cpu(a);
  ASSERT_EQ(again.status, ZYFA_STATUS_SUCCESS) << again.error;
  EXPECT_EQ(first.out, again.out) << "two calls differ";
  EXPECT_EQ(std::memcmp(first.lse.data(), again.lse.data(), first.lse.size() * 4), 0);

  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    std::vector<uint16_t> out(a.out_count());
    std::vector<float> lse(a.lse_count());
    poison_bf16(out.data(), out.size());
    zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
    d.backend = ZYFA_BACKEND_CPU;
    FwdProblem p;
    p.backend = ZYFA_BACKEND_CPU;
    ASSERT_EQ(validate_fwd(&d, &p), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    cpu::attention_fwd(p, threads);
    EXPECT_EQ(std::memcmp(out.data(), first.out.data(), out.size() * 2), 0)
        << threads << " threads differ from the default";
    EXPECT_EQ(std::memcmp(lse.data(), first.lse.data(), lse.size() * 4), 0)
        << threads << " threads: LSE differs";
  }
}

TEST(Determinism, Bf16_D128_Gqa2_S300) {
  expect_thread_count_independent(AttnConfig::of(ZYFA_DTYPE_BF16, 128, 4, 2, 300).with(Inputs::REALISTIC));
}

TEST(Determinism, Fp8_D192v128_Mqa3_S257_B2) {
  expect_thread_count_independent(AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 192, 3, 1, 257).with_batch(2));
}

}  // namespace
}  // namespace zyfa::test
