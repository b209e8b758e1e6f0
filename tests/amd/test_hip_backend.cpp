// On a machine without an AMD GPU the hip backend answers NO_DEVICE (or NOT_SUPPORTED when
// this build has no host HIP runtime) through the public API, with a message, and writes
// nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace {

bool amd_gpu_present() {
  struct stat st;
  return stat("/dev/kfd", &st) == 0;  // the ROCm kernel driver's device node
}

zyfa_status_t expected_status() { return ZYFA_TEST_HAVE_HIP ? ZYFA_STATUS_NO_DEVICE : ZYFA_STATUS_NOT_SUPPORTED; }

class HipWithoutGpu : public testing::Test {
 protected:
  void SetUp() override {
    if (amd_gpu_present()) GTEST_SKIP() << "/dev/kfd exists: these checks are for machines without an AMD GPU";
    ASSERT_EQ(ZYFA_STATUS_SUCCESS, zyfa_create(&handle_));
  }
  void TearDown() override { zyfa_destroy(handle_); }
  zyfa_handle_t handle_ = nullptr;
};

TEST_F(HipWithoutGpu, BackendQuerySaysWhy) {
  zyfa_backend_t resolved = ZYFA_BACKEND_AUTO;
  EXPECT_EQ(expected_status(), zyfa_backend_query(handle_, ZYFA_BACKEND_HIP, &resolved));
  const std::string msg = zyfa_last_error();
  EXPECT_NE(std::string::npos, msg.find("hip")) << msg;
  EXPECT_GT(msg.size(), 20u) << msg;
}

TEST_F(HipWithoutGpu, AutoDoesNotPickHip) {
  zyfa_backend_t resolved = ZYFA_BACKEND_AUTO;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, zyfa_backend_query(handle_, ZYFA_BACKEND_AUTO, &resolved));
  EXPECT_NE(ZYFA_BACKEND_HIP, resolved);
}

TEST_F(HipWithoutGpu, FwdFailsCleanlyAndWritesNothing) {
  const int64_t b = 1, s = 64, h = 2, d = 128;
  std::vector<uint16_t> q(b * s * h * d, 0x3c00), k(q), v(q);  // BF16 1.0: any valid input
  std::vector<uint16_t> out(b * s * h * d, 0x7fc1);              // NaN pattern: must survive
  std::vector<float> lse(b * h * s, -1.0f);
  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  desc.q = zyfa_tensor_bshd(q.data(), ZYFA_DTYPE_BF16, b, s, h, d);
  desc.k = zyfa_tensor_bshd(k.data(), ZYFA_DTYPE_BF16, b, s, h, d);
  desc.v = zyfa_tensor_bshd(v.data(), ZYFA_DTYPE_BF16, b, s, h, d);
  desc.out = zyfa_tensor_bshd(out.data(), ZYFA_DTYPE_BF16, b, s, h, d);
  desc.lse = lse.data();
  desc.backend = ZYFA_BACKEND_HIP;
  EXPECT_EQ(expected_status(), zyfa_fwd(handle_, &desc));
  EXPECT_NE(std::string::npos, std::string(zyfa_last_error()).find("hip")) << zyfa_last_error();
  EXPECT_EQ(expected_status(), zyfa_fwd_prepare(handle_, &desc));
  for (uint16_t o : out) ASSERT_EQ(0x7fc1, o);
  for (float l : lse) ASSERT_EQ(-1.0f, l);
}

TEST_F(HipWithoutGpu, QuantizeFailsCleanlyAndWritesNothing) {
  std::vector<float> src(4 * 128, 0.5f);
  std::vector<uint8_t> dst(src.size(), 0xA5);
  float descale = -3.0f;
  zyfa_quantize_desc_t desc = ZYFA_QUANTIZE_DESC_INIT;
  desc.src = zyfa_tensor_bshd(src.data(), ZYFA_DTYPE_FP32, 1, 4, 1, 128);
  desc.dst = zyfa_tensor_bshd(dst.data(), ZYFA_DTYPE_FP8_E4M3, 1, 4, 1, 128);
  desc.descale = &descale;
  desc.backend = ZYFA_BACKEND_HIP;
  EXPECT_EQ(expected_status(), zyfa_fp8_quantize(handle_, &desc));
  EXPECT_STRNE("", zyfa_last_error());
  for (uint8_t x : dst) ASSERT_EQ(0xA5, x);
  EXPECT_EQ(-3.0f, descale);
}

}  // namespace
