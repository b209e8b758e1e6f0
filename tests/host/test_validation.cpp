// Every validation rule, table-driven: one valid descriptor, one field broken per case. Each case
// checks the status, that the message names the field and value, and that the poisoned outputs
// are untouched. The unbroken descriptor must succeed, so each failure is due to its one change.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace {

constexpr int64_t B = 2, S = 5, H = 4, HK = 2, D = 128;
constexpr uint16_t kPoisonBf16 = 0xFFFF;  // a NaN: any element left unwritten by a success shows

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

struct Buffers {
  std::vector<uint16_t> q, k, v, out;
  std::vector<uint8_t> q8, k8, v8;
  std::vector<float> lse;
  float dev_descale = 0.5f;

  Buffers() : q(B * S * H * D), k(B * S * HK * D), v(B * S * HK * D), out(B * S * H * D), lse(B * H * S) {
    std::mt19937 rng(1234);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (auto* t : {&q, &k, &v})
      for (auto& x : *t) x = to_bf16(n(rng));
    for (auto* t : {&q8, &k8, &v8}) {
      t->resize(B * S * H * D);
      // e4m3 codes of moderate positive and negative values, never NaN (0x7F/0xFF).
      for (auto& x : *t) x = static_cast<uint8_t>((rng() % 0x60) | (rng() % 2 ? 0x80 : 0));
    }
    poison();
  }
  void poison() {
    std::fill(out.begin(), out.end(), kPoisonBf16);
    std::fill(lse.begin(), lse.end(), std::numeric_limits<float>::quiet_NaN());
  }
  bool outputs_untouched() const {
    for (uint16_t x : out)
      if (x != kPoisonBf16) return false;
    for (float x : lse)
      if (!std::isnan(x)) return false;
    return true;
  }
  zyfa_fwd_desc_t bf16_desc() {
    zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
    d.q = zyfa_tensor_bshd(q.data(), ZYFA_DTYPE_BF16, B, S, H, D);
    d.k = zyfa_tensor_bshd(k.data(), ZYFA_DTYPE_BF16, B, S, HK, D);
    d.v = zyfa_tensor_bshd(v.data(), ZYFA_DTYPE_BF16, B, S, HK, D);
    d.out = zyfa_tensor_bshd(out.data(), ZYFA_DTYPE_BF16, B, S, H, D);
    d.lse = lse.data();
    d.backend = ZYFA_BACKEND_CPU;
    return d;
  }
  zyfa_fwd_desc_t fp8_desc() {
    zyfa_fwd_desc_t d = bf16_desc();
    d.q = zyfa_tensor_bshd(q8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, H, D);
    d.k = zyfa_tensor_bshd(k8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, HK, D);
    d.v = zyfa_tensor_bshd(v8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, HK, D);
    d.q_descale = zyfa_descale_host(0.25f);
    d.k_descale = zyfa_descale_device(&dev_descale);
    d.v_descale = zyfa_descale_host(2.0f);
    return d;
  }
};

struct Rule {
  const char* name;
  bool fp8;
  std::function<void(zyfa_fwd_desc_t&, Buffers&)> mutate;
  zyfa_status_t status;
  const char* message;  // must appear in zyfa_last_error()
};

// gtest prints parameters of failing cases; a rule prints as its name.
void PrintTo(const Rule& rule, std::ostream* os) { *os << rule.name; }

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"StructSizeZero", false, [](auto& d, auto&) { d.struct_size = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "struct_size = 0"},
      {"StructSizeLarger", false, [](auto& d, auto&) { d.struct_size += 8; }, ZYFA_STATUS_INVALID_ARGUMENT, "struct_size"},
      {"BackendUnknown", false, [](auto& d, auto&) { d.backend = static_cast<zyfa_backend_t>(9); }, ZYFA_STATUS_INVALID_ARGUMENT, "backend = 9"},
      {"NonCausal", false, [](auto& d, auto&) { d.causal = 0; }, ZYFA_STATUS_NOT_SUPPORTED, "causal = 0"},
      {"CausalTwo", false, [](auto& d, auto&) { d.causal = 2; }, ZYFA_STATUS_INVALID_ARGUMENT, "causal = 2"},
      {"QNull", false, [](auto& d, auto&) { d.q.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "q.data is NULL"},
      {"KNull", false, [](auto& d, auto&) { d.k.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.data is NULL"},
      {"VNull", false, [](auto& d, auto&) { d.v.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "v.data is NULL"},
      {"OutNull", false, [](auto& d, auto&) { d.out.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "out.data is NULL"},
      {"QDtypeUnknown", false, [](auto& d, auto&) { d.q.dtype = static_cast<zyfa_dtype_t>(7); }, ZYFA_STATUS_INVALID_ARGUMENT, "q.dtype = 7"},
      {"InputsFp32", false, [](auto& d, auto&) { d.q.dtype = d.k.dtype = d.v.dtype = ZYFA_DTYPE_FP32; }, ZYFA_STATUS_NOT_SUPPORTED, "q.dtype = FP32"},
      {"MixedDtypeK", false, [](auto& d, auto& b) { d.k = zyfa_tensor_bshd(b.k8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, HK, D); }, ZYFA_STATUS_INVALID_ARGUMENT, "k.dtype = FP8_E4M3"},
      {"MixedDtypeV", true, [](auto& d, auto& b) { d.v = zyfa_tensor_bshd(b.v.data(), ZYFA_DTYPE_BF16, B, S, HK, D); }, ZYFA_STATUS_INVALID_ARGUMENT, "v.dtype = BF16"},
      {"OutFp8", false, [](auto& d, auto&) { d.out.dtype = ZYFA_DTYPE_FP8_E4M3; }, ZYFA_STATUS_NOT_SUPPORTED, "out.dtype = FP8_E4M3"},
      {"BatchMismatch", false, [](auto& d, auto&) { d.k.shape[0] = 1; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.shape[0] = 1"},
      {"SeqlenKShorter", false, [](auto& d, auto&) { d.k.shape[1] = 4; d.v.shape[1] = 4; }, ZYFA_STATUS_NOT_SUPPORTED, "k.shape[1] = 4: seqlen_k is below seqlen_q = 5"},
      {"VSeqlenMismatch", false, [](auto& d, auto&) { d.v.shape[1] = 4; }, ZYFA_STATUS_INVALID_ARGUMENT, "v.shape[1] = 4"},
      {"HeadsKZero", false, [](auto& d, auto&) { d.k.shape[2] = 0; d.v.shape[2] = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.shape[2] = 0"},
      {"ZeroHeadDim", false, [](auto& d, auto&) { d.q.shape[3] = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "q.shape[3] = 0"},
      {"QNullEvenWithNoHeadsK", false, [](auto& d, auto&) { d.k.shape[2] = d.v.shape[2] = 0; d.q.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "q.data is NULL"},
      {"OutSeqlenMismatch", false, [](auto& d, auto&) { d.out.shape[1] = 4; }, ZYFA_STATUS_INVALID_ARGUMENT, "out.shape[1] = 4"},
      {"VHeadsMismatch", false, [](auto& d, auto&) { d.v.shape[2] = 1; }, ZYFA_STATUS_INVALID_ARGUMENT, "v.shape[2] = 1"},
      {"OutHeadsMismatch", false, [](auto& d, auto&) { d.out.shape[2] = 2; }, ZYFA_STATUS_INVALID_ARGUMENT, "out.shape[2] = 2"},
      {"HeadsNotMultiple", false, [](auto& d, auto&) { d.k.shape[2] = 3; d.v.shape[2] = 3; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.shape[2] = 3"},
      {"HeadDim64", false, [](auto& d, auto&) { d.q.shape[3] = d.k.shape[3] = 64; }, ZYFA_STATUS_NOT_SUPPORTED, "q.shape[3] = 64"},
      {"HeadDim192x192", false, [](auto& d, auto&) { d.q.shape[3] = d.k.shape[3] = 192; d.v.shape[3] = d.out.shape[3] = 192; }, ZYFA_STATUS_NOT_SUPPORTED, "v.shape[3] = 192"},
      {"KHeadDimMismatch", false, [](auto& d, auto&) { d.k.shape[3] = 64; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.shape[3] = 64"},
      {"ZeroSeqlen", false, [](auto& d, auto&) { d.q.shape[1] = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "q.shape[1] = 0"},
      {"NegativeBatch", false, [](auto& d, auto&) { d.v.shape[0] = -2; }, ZYFA_STATUS_INVALID_ARGUMENT, "v.shape[0] = -2"},
      {"NegativeStride", false, [](auto& d, auto&) { d.q.stride[0] = -1; }, ZYFA_STATUS_INVALID_ARGUMENT, "q.stride[0] = -1"},
      {"LastStrideNotOne", false, [](auto& d, auto&) { d.k.stride[3] = 2; }, ZYFA_STATUS_INVALID_ARGUMENT, "k.stride[3] = 2"},
      {"OutSelfOverlap", false, [](auto& d, auto&) { d.out.stride[2] = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "out.stride[2] = 0"},
      {"OutOverlapsQ", false, [](auto& d, auto& b) { d.out.data = b.q.data(); }, ZYFA_STATUS_INVALID_ARGUMENT, "overlaps q"},
      {"OutOverlapsV", false, [](auto& d, auto& b) { d.out.data = b.v.data() + 7 * D; }, ZYFA_STATUS_INVALID_ARGUMENT, "overlaps v"},
      {"LseOverlapsOut", false, [](auto& d, auto& b) { d.lse = reinterpret_cast<float*>(b.out.data() + 64); }, ZYFA_STATUS_INVALID_ARGUMENT, "overlaps out"},
      {"MisalignedQ", false, [](auto& d, auto& b) { d.q.data = reinterpret_cast<char*>(b.q.data()) + 1; }, ZYFA_STATUS_INVALID_ARGUMENT, "not aligned"},
      {"ScaleNaN", false, [](auto& d, auto&) { d.softmax_scale = std::nanf(""); }, ZYFA_STATUS_INVALID_ARGUMENT, "softmax_scale = nan"},
      {"ScaleInf", false, [](auto& d, auto&) { d.softmax_scale = INFINITY; }, ZYFA_STATUS_INVALID_ARGUMENT, "softmax_scale = inf"},
      {"DescaleOnBf16", false, [](auto& d, auto&) { d.q_descale = zyfa_descale_host(1.0f); }, ZYFA_STATUS_INVALID_ARGUMENT, "q_descale.kind = HOST"},
      {"DescaleZero", true, [](auto& d, auto&) { d.q_descale.value = 0.0f; }, ZYFA_STATUS_INVALID_ARGUMENT, "q_descale.value = 0"},
      {"DescaleNegative", true, [](auto& d, auto&) { d.v_descale.value = -2.0f; }, ZYFA_STATUS_INVALID_ARGUMENT, "v_descale.value = -2"},
      {"DescaleSubnormal", true, [](auto& d, auto&) { d.q_descale.value = 1e-40f; }, ZYFA_STATUS_INVALID_ARGUMENT, "q_descale.value = 1e-40"},
      {"DescaleInf", true, [](auto& d, auto&) { d.q_descale.value = INFINITY; }, ZYFA_STATUS_INVALID_ARGUMENT, "q_descale.value = inf"},
      {"DescaleNaN", true, [](auto& d, auto&) { d.v_descale.value = std::nanf(""); }, ZYFA_STATUS_INVALID_ARGUMENT, "v_descale.value = nan"},
      {"DeviceDescaleNull", true, [](auto& d, auto&) { d.k_descale.ptr = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "k_descale.ptr is NULL"},
      {"DeviceDescaleNegativeStride", true, [](auto& d, auto&) { d.k_descale.stride_head_k = -1; }, ZYFA_STATUS_INVALID_ARGUMENT, "k_descale.stride_head_k = -1"},
      {"DescaleKindUnknown", true, [](auto& d, auto&) { d.v_descale.kind = static_cast<zyfa_descale_kind_t>(5); }, ZYFA_STATUS_INVALID_ARGUMENT, "v_descale.kind = 5"},
  };
  return r;
}

class Validation : public ::testing::TestWithParam<Rule> {
 protected:
  void SetUp() override { ASSERT_EQ(zyfa_create(&handle_), ZYFA_STATUS_SUCCESS); }
  void TearDown() override { zyfa_destroy(handle_); }
  zyfa_handle_t handle_ = nullptr;
};

TEST_P(Validation, RefusedWithMessageAndNothingWritten) {
  const Rule& rule = GetParam();
  Buffers buf;
  zyfa_fwd_desc_t desc = rule.fp8 ? buf.fp8_desc() : buf.bf16_desc();
  rule.mutate(desc, buf);
  for (auto* call : {&zyfa_fwd_prepare, &zyfa_fwd}) {
    const zyfa_status_t st = (*call)(handle_, &desc);
    EXPECT_EQ(st, rule.status) << zyfa_status_string(st) << ": " << zyfa_last_error();
    EXPECT_NE(std::string(zyfa_last_error()).find(rule.message), std::string::npos)
        << "message: \"" << zyfa_last_error() << "\" lacks \"" << rule.message << "\"";
    EXPECT_TRUE(buf.outputs_untouched());
  }
}

INSTANTIATE_TEST_SUITE_P(Fwd, Validation, ::testing::ValuesIn(rules()),
                         [](const auto& info) { return std::string(info.param.name); });

// The unbroken descriptors are valid: each rule above fails only because of its one change.
TEST(ValidationBase, UnbrokenDescriptorsSucceedOnCpu) {
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  for (bool fp8 : {false, true}) {
    Buffers buf;
    zyfa_fwd_desc_t d = fp8 ? buf.fp8_desc() : buf.bf16_desc();
    ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    EXPECT_STREQ(zyfa_last_error(), "");
    for (uint16_t x : buf.out) ASSERT_NE(x, kPoisonBf16);
    for (float x : buf.lse) ASSERT_TRUE(std::isfinite(x));
  }
  zyfa_destroy(h);
}

TEST(ValidationBase, NullHandleAndDescriptor) {
  Buffers buf;
  zyfa_fwd_desc_t d = buf.bf16_desc();
  EXPECT_EQ(zyfa_fwd(nullptr, &d), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("handle is NULL"), std::string::npos);
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(zyfa_fwd(h, nullptr), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("desc is NULL"), std::string::npos);
  EXPECT_EQ(zyfa_create(nullptr), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(buf.outputs_untouched());
  zyfa_destroy(h);
}

// zyfa_fp8_quantize's rules.
struct QuantBuffers {
  std::vector<float> src = std::vector<float>(3 * 4 * 2 * 128, 0.5f);
  std::vector<uint8_t> dst = std::vector<uint8_t>(3 * 4 * 2 * 128, 0x7F);  // NaN code as poison
  float descale = std::nanf("");
  zyfa_quantize_desc_t desc() {
    zyfa_quantize_desc_t d = ZYFA_QUANTIZE_DESC_INIT;
    d.src = zyfa_tensor_bshd(src.data(), ZYFA_DTYPE_FP32, 3, 4, 2, 128);
    d.dst = zyfa_tensor_bshd(dst.data(), ZYFA_DTYPE_FP8_E4M3, 3, 4, 2, 128);
    d.descale = &descale;
    d.backend = ZYFA_BACKEND_CPU;
    return d;
  }
  bool untouched() const {
    for (uint8_t x : dst)
      if (x != 0x7F) return false;
    return std::isnan(descale);
  }
};

struct QuantRule {
  const char* name;
  std::function<void(zyfa_quantize_desc_t&, QuantBuffers&)> mutate;
  zyfa_status_t status;
  const char* message;
};

void PrintTo(const QuantRule& rule, std::ostream* os) { *os << rule.name; }

class QuantizeValidation : public ::testing::TestWithParam<QuantRule> {};

TEST_P(QuantizeValidation, RefusedWithMessageAndNothingWritten) {
  const QuantRule& rule = GetParam();
  QuantBuffers buf;
  zyfa_quantize_desc_t d = buf.desc();
  rule.mutate(d, buf);
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  const zyfa_status_t st = zyfa_fp8_quantize(h, &d);
  EXPECT_EQ(st, rule.status) << zyfa_last_error();
  EXPECT_NE(std::string(zyfa_last_error()).find(rule.message), std::string::npos) << zyfa_last_error();
  EXPECT_TRUE(buf.untouched());
  zyfa_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(
    Quantize, QuantizeValidation,
    ::testing::Values(
        QuantRule{"StructSize", [](auto& d, auto&) { d.struct_size = 3; }, ZYFA_STATUS_INVALID_ARGUMENT, "struct_size = 3"},
        QuantRule{"DescaleNull", [](auto& d, auto&) { d.descale = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "descale is NULL"},
        QuantRule{"DstBf16", [](auto& d, auto&) { d.dst.dtype = ZYFA_DTYPE_BF16; }, ZYFA_STATUS_INVALID_ARGUMENT, "dst.dtype = BF16"},
        QuantRule{"SrcFp8", [](auto& d, auto&) { d.src.dtype = ZYFA_DTYPE_FP8_E4M3; }, ZYFA_STATUS_NOT_SUPPORTED, "src.dtype = FP8_E4M3"},
        QuantRule{"ShapeMismatch", [](auto& d, auto&) { d.dst.shape[1] = 3; }, ZYFA_STATUS_INVALID_ARGUMENT, "dst.shape[1] = 3"},
        QuantRule{"DstOverlapsSrc", [](auto& d, auto& b) { d.dst.data = b.src.data(); }, ZYFA_STATUS_INVALID_ARGUMENT, "overlaps src"},
        QuantRule{"DstSelfOverlap", [](auto& d, auto&) { d.dst.stride[0] = 0; }, ZYFA_STATUS_INVALID_ARGUMENT, "dst.stride[0] = 0"},
        QuantRule{"SrcNull", [](auto& d, auto&) { d.src.data = nullptr; }, ZYFA_STATUS_INVALID_ARGUMENT, "src.data is NULL"},
        QuantRule{"BackendUnknown", [](auto& d, auto&) { d.backend = static_cast<zyfa_backend_t>(-1); }, ZYFA_STATUS_INVALID_ARGUMENT, "backend = -1"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
