// API surface: statuses, backend resolution, the C++ layer, and thread-local errors.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "zyfa/zyfa.h"
#include "zyfa/zyfa.hpp"

TEST(Api, StatusValuesArePinned) {
  EXPECT_EQ(ZYFA_STATUS_SUCCESS, 0);
  EXPECT_EQ(ZYFA_STATUS_INVALID_ARGUMENT, 1);
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED, 2);
  EXPECT_EQ(ZYFA_STATUS_NO_DEVICE, 3);
  EXPECT_EQ(ZYFA_STATUS_OUT_OF_MEMORY, 4);
  EXPECT_EQ(ZYFA_STATUS_RUNTIME_ERROR, 5);
  EXPECT_EQ(ZYFA_STATUS_KERNEL_FAULT, 6);
  EXPECT_EQ(ZYFA_STATUS_INTERNAL_ERROR, 7);
  EXPECT_STREQ(zyfa_status_string(ZYFA_STATUS_NO_DEVICE), "no device");
  EXPECT_STREQ(zyfa_status_string(static_cast<zyfa_status_t>(42)), "unknown status");
}

TEST(Api, VersionMatchesHeader) { EXPECT_STREQ(zyfa_version_string(), ZYFA_VERSION_STRING); }

TEST(Api, EveryBackendAnswersQuery) {
  zyfa::Handle h;
  for (auto b : {ZYFA_BACKEND_CPU, ZYFA_BACKEND_HIP, ZYFA_BACKEND_EMU, ZYFA_BACKEND_CUDA}) {
    zyfa_backend_t resolved = ZYFA_BACKEND_AUTO;
    const zyfa_status_t st = zyfa_backend_query(h.get(), b, &resolved);
    if (st == ZYFA_STATUS_SUCCESS) {
      EXPECT_EQ(resolved, b);
      EXPECT_STREQ(zyfa_last_error(), "");
    } else {
      EXPECT_TRUE(st == ZYFA_STATUS_NOT_SUPPORTED || st == ZYFA_STATUS_NO_DEVICE) << zyfa_status_string(st);
      // The reason names the backend.
      EXPECT_NE(std::string(zyfa_last_error()).find(zyfa_backend_name(b)), std::string::npos)
          << zyfa_last_error();
    }
  }
  EXPECT_EQ(zyfa_backend_query(h.get(), ZYFA_BACKEND_CPU, nullptr), ZYFA_STATUS_SUCCESS);
}

TEST(Api, AutoAlwaysResolvesToAUsableBackend) {
  zyfa::Handle h;
  const zyfa_backend_t b = h.resolve(ZYFA_BACKEND_AUTO);
  EXPECT_NE(b, ZYFA_BACKEND_AUTO);
  EXPECT_NE(b, ZYFA_BACKEND_EMU);  // the emulator is never picked implicitly
  EXPECT_EQ(zyfa_backend_query(h.get(), b, nullptr), ZYFA_STATUS_SUCCESS);
}

TEST(Api, CppLayerThrowsWithStatusAndMessage) {
  zyfa::Handle h;
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  try {
    h.fwd(d);
    FAIL() << "expected zyfa::Error";
  } catch (const zyfa::Error& e) {
    EXPECT_EQ(e.status(), ZYFA_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("q.data is NULL"), std::string::npos) << e.what();
  }
  const zyfa::Status s = h.try_fwd(d);
  EXPECT_FALSE(s);
  EXPECT_EQ(s.code, ZYFA_STATUS_INVALID_ARGUMENT);
  zyfa::Handle moved(std::move(h));
  EXPECT_NE(moved.get(), nullptr);
  EXPECT_EQ(h.get(), nullptr);
}

TEST(Api, LastErrorIsThreadLocal) {
  zyfa::Handle h;
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  ASSERT_EQ(zyfa_fwd(h.get(), &d), ZYFA_STATUS_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = zyfa_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(zyfa_last_error()), "");
}

TEST(Api, DestroyNullIsFine) { EXPECT_EQ(zyfa_destroy(nullptr), ZYFA_STATUS_SUCCESS); }
