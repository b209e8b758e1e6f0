// Running one attention configuration through the public API on the emu backend, with a
// chosen interleaving seed, poisoned outputs and a poisoned guard past the output.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {

struct EmuRun {
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

// The emu backend reads its interleaving seed from $ZYFA_EMU_SEED at every launch.
inline EmuRun run_emu(AttnData& a, uint64_t interleave_seed) {
  setenv("ZYFA_EMU_SEED", std::to_string(interleave_seed).c_str(), 1);
  EmuRun r;
  r.out.resize(a.out_count() + EmuRun::kGuard);
  r.lse.resize(a.lse_count() + 1);
  poison_bf16(r.out.data(), r.out.size());
  poison_f32(r.lse.data(), r.lse.size());
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) {
    r.error = zyfa_last_error();
    return r;
  }
  zyfa_fwd_desc_t d = a.host_desc(r.out.data(), r.lse.data());
  d.backend = ZYFA_BACKEND_EMU;
  r.status = zyfa_fwd(h, &d);
  r.error = zyfa_last_error();
  zyfa_destroy(h);
  return r;
}

}  // namespace zyfa::test
