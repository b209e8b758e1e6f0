// The varlen fields of zyfa_fwd_desc_t: every rule refuses with the field named and nothing
// written; a caller compiled before the fields were appended (the older struct_size) keeps
// working; empty varlen calls; backends without varlen kernels refuse cleanly.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>

#include "cpu_test_util.h"
#include "zyfa/zyfa.hpp"
#include "support/varlen.h"

namespace zyfa::test {
namespace {

// Three sequences (q 5, 0, 9 rows; k 7, 2, 9 rows) of BF16 MHA 2, d 128.
VarlenConfig small_config() {
  VarlenConfig c = VarlenConfig::of(ZYFA_DTYPE_BF16, 128, 2, 2, "Small", {5, 0, 9}, {7, 2, 9});
  c.seed = seed_for("VarlenApi");
  return c;
}

struct Rule {
  const char* name;
  std::function<void(zyfa_fwd_desc_t&, VarlenData&)> mutate;
  zyfa_status_t status;
  const char* message;
};
void PrintTo(const Rule& r, std::ostream* os) { *os << r.name; }

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"CuKNull", [](auto& d, auto&) { d.cu_seqlens_k = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "desc->cu_seqlens_k is NULL"},
      {"CuQNull", [](auto& d, auto&) { d.cu_seqlens_q = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "desc->cu_seqlens_q is NULL"},
      {"BatchNegative", [](auto& d, auto&) { d.varlen_batch = -1; }, ZYFA_STATUS_INVALID_ARGUMENT, "desc->varlen_batch = -1"},
      {"MaxQNegative", [](auto& d, auto&) { d.max_seqlen_q = -2; }, ZYFA_STATUS_INVALID_ARGUMENT, "desc->max_seqlen_q = -2"},
      {"CuMisaligned", [](auto& d, auto& a) { d.cu_seqlens_k = reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(a.cu_k.data()) + 2); }, ZYFA_STATUS_INVALID_ARGUMENT, "cu_seqlens_k"},
      {"PackedBatchTwo", [](auto& d, auto&) { d.k.shape[0] = 2; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.shape[0] = 2: must be 1 with cu_seqlens"},
      {"CuOverlapsOut", [](auto& d, auto&) { d.cu_seqlens_q = static_cast<const int32_t*>(d.out.data); }, ZYFA_STATUS_INVALID_ARGUMENT, "cu_seqlens_q"},
      {"FixedWithBatch", [](auto& d, auto&) { d.cu_seqlens_q = d.cu_seqlens_k = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "desc->varlen_batch = 3: must be 0 without cu_seqlens_q"},
      {"StartNegative", [](auto&, auto& a) { a.cu_q[0] = -1; }, ZYFA_STATUS_INVALID_ARGUMENT, "cu_seqlens_q[0] = -1"},
      {"Decreasing", [](auto&, auto& a) { a.cu_k[2] = a.cu_k[1] - 1; }, ZYFA_STATUS_INVALID_ARGUMENT, "cu_seqlens_k[2] = "},
      {"PastTensor", [](auto&, auto& a) { a.cu_q[3] = static_cast<int32_t>(a.total_q + 1); }, ZYFA_STATUS_INVALID_ARGUMENT, "past the"},
      {"LongerThanMax", [](auto& d, auto&) { d.max_seqlen_k = 8; }, ZYFA_STATUS_INVALID_ARGUMENT, "longer than max_seqlen_k = 8"},
  };
  return r;
}

class VarlenValidation : public ::testing::TestWithParam<Rule> {};

TEST_P(VarlenValidation, RefusedWithMessageAndNothingWritten) {
  const Rule& rule = GetParam();
  VarlenData a = make_varlen_data(small_config());
  HostRun run = run_host_desc(a.out_count(), a.lse_count(), ZYFA_BACKEND_CPU, [&](void* out, float* lse) {
    zyfa_fwd_desc_t d = a.host_desc(out, lse);
    rule.mutate(d, a);
    return d;
  });
  EXPECT_EQ(run.status, rule.status) << run.error;
  EXPECT_NE(run.error.find(rule.message), std::string::npos) << "\"" << run.error << "\" lacks \"" << rule.message << "\"";
  for (uint16_t x : run.out) ASSERT_TRUE(is_poison_bf16(x)) << "output written on error";
  for (float x : run.lse) ASSERT_TRUE(is_poison_f32(x)) << "LSE written on error";
}

INSTANTIATE_TEST_SUITE_P(Fwd, VarlenValidation, ::testing::ValuesIn(rules()),
                         [](const auto& info) { return std::string(info.param.name); });

// The unbroken descriptor is valid: each rule fails only because of its one change.
TEST(VarlenApi, UnbrokenDescriptorSucceeds) {
  VarlenData a = make_varlen_data(small_config());
  HostRun run = run_on_host(a, ZYFA_BACKEND_CPU);
  ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
  const CheckResult r = check_varlen(a, reference_varlen_fp64(a), run.out.data(), run.lse.data(), cpu_tolerance());
  EXPECT_TRUE(r.ok()) << r.summary();
}

// A caller built against the header before the varlen fields passes the older struct_size;
// whatever its memory holds after that size is never read.
TEST(VarlenApi, OlderDescriptorSizeStillWorks) {
  AttnConfig c = AttnConfig::of(ZYFA_DTYPE_BF16, 128, 4, 2, 70);
  c.seed = seed_for("VarlenApi/OlderDescriptor");
  AttnData a = make_attn_data(c);
  const HostRun now = run_on_host(a, ZYFA_BACKEND_CPU);
  ASSERT_EQ(now.status, ZYFA_STATUS_SUCCESS) << now.error;
  const HostRun old = run_host_desc(a.out_count(), a.lse_count(), ZYFA_BACKEND_CPU, [&](void* out, float* lse) {
    zyfa_fwd_desc_t d = a.host_desc(out, lse);
    d.struct_size = static_cast<uint32_t>(offsetof(zyfa_fwd_desc_t, cu_seqlens_q));
    std::memset(reinterpret_cast<char*>(&d) + d.struct_size, 0xA5, sizeof d - d.struct_size);  // not the caller's
    return d;
  });
  ASSERT_EQ(old.status, ZYFA_STATUS_SUCCESS) << old.error;
  EXPECT_EQ(old.out, now.out);
  EXPECT_EQ(0, std::memcmp(old.lse.data(), now.lse.data(), now.lse.size() * sizeof(float)));
  const CheckResult r = check_output(a, reference_fp64(a), old.out.data(), old.lse.data(), cpu_tolerance());
  EXPECT_TRUE(r.ok()) << r.summary();
}

// No sequence (varlen_batch 0), or sequences of no rows in tensors of no rows: success,
// nothing written.
TEST(VarlenApi, EmptyCallsWriteNothing) {
  VarlenData a = make_varlen_data(small_config());
  const std::vector<int32_t> zeros(4, 0);
  for (int empty_kind = 0; empty_kind < 2; ++empty_kind) {
    HostRun run = run_host_desc(a.out_count(), a.lse_count(), ZYFA_BACKEND_CPU, [&](void* out, float* lse) {
      zyfa_fwd_desc_t d = a.host_desc(out, lse);
      if (empty_kind == 0) {
        d.varlen_batch = 0;
      } else {
        d.q.shape[1] = d.k.shape[1] = d.v.shape[1] = d.out.shape[1] = 0;
        d.q.data = d.k.data = d.v.data = nullptr;
        d.cu_seqlens_q = d.cu_seqlens_k = zeros.data();
      }
      return d;
    });
    ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
    for (uint16_t x : run.out) ASSERT_TRUE(is_poison_bf16(x));
    for (float x : run.lse) ASSERT_TRUE(is_poison_f32(x));
  }
}

// The gfx950 backends run varlen batches and seqlen_k > seqlen_q on their ping-pong kernels
// only: a v view those cannot read (rows not 16-byte aligned) is refused, naming the field,
// before anything is written.
TEST(VarlenApi, EmuRefusesUnalignedVRowsNamingTheField) {
  zyfa_handle_t h = nullptr;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  const bool emu = zyfa_backend_query(h, ZYFA_BACKEND_EMU, nullptr) == ZYFA_STATUS_SUCCESS;
  zyfa_destroy(h);
  if (!emu) GTEST_SKIP() << "emu backend not built";
  for (bool varlen : {true, false}) {
    VarlenConfig c = small_config();
    if (!varlen) c = VarlenConfig::of(ZYFA_DTYPE_BF16, 128, 2, 2, "Q5K9", {5}, {9}).as_fixed();
    VarlenData a = make_varlen_data(c);
    // v one element on: element-aligned, not 16-byte aligned (the trail keeps it in the buffer).
    HostRun run = run_host_desc(a.out_count(), a.lse_count(), ZYFA_BACKEND_EMU, [&](void* out, float* lse) {
      zyfa_fwd_desc_t d = a.host_desc(out, lse);
      d.v.data = static_cast<uint16_t*>(d.v.data) + 1;
      return d;
    });
    EXPECT_EQ(run.status, ZYFA_STATUS_NOT_SUPPORTED) << run.error;
    EXPECT_NE(run.error.find("v.data"), std::string::npos) << run.error;
    for (uint16_t x : run.out) ASSERT_TRUE(is_poison_bf16(x));
  }
}

// The C++ layer forwards varlen descriptors like any other: success, and a refusal that
// carries the status and the field.
TEST(VarlenApi, CxxLayer) {
  VarlenData a = make_varlen_data(small_config());
  std::vector<uint16_t> out(a.out_count());
  std::vector<float> lse(a.lse_count());
  zyfa::Handle handle;
  zyfa_fwd_desc_t d = a.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_CPU;
  EXPECT_NO_THROW(handle.fwd(d));
  d.max_seqlen_q = 4;  // below the longest query length, 9
  const zyfa::Status st = handle.try_fwd(d);
  EXPECT_EQ(st.code, ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(st.message.find("max_seqlen_q = 4"), std::string::npos) << st.message;
  try {
    handle.fwd(d);
    ADD_FAILURE() << "no exception";
  } catch (const zyfa::Error& e) {
    EXPECT_EQ(e.status(), ZYFA_STATUS_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace zyfa::test
