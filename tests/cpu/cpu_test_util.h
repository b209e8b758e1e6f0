// Running one configuration through the public API on the cpu backend.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

// Output and LSE buffers, poisoned, with a poisoned guard after the output so that a write
// past the last element is caught.
struct CpuRun {
  static constexpr size_t kGuard = 256;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;

  bool guard_intact(size_t out_count) const {
    for (size_t i = out_count; i < out.size(); ++i)
      if (!is_poison_bf16(out[i])) return false;
    return true;
  }
};

inline CpuRun run_cpu(AttnData& a) {
  CpuRun r;
  r.out.resize(a.out_count() + CpuRun::kGuard);
  r.lse.resize(a.lse_count() + 1);
  poison_bf16(r.out.data(), r.out.size());
  poison_f32(r.lse.data(), r.lse.size());
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) {
    r.error = zyfa_last_error();
    return r;
  }
  zyfa_fwd_desc_t d = a.host_desc(r.out.data(), r.lse.data());
  d.backend = ZYFA_BACKEND_CPU;
  r.status = zyfa_fwd(h, &d);
  r.error = zyfa_last_error();
  zyfa_destroy(h);
  return r;
}

}  // namespace zyfa::test
