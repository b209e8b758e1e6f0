// Running one configuration through the public API on a backend whose memory is host memory
// (cpu, emu): poisoned output and LSE, with a poisoned guard after the output so that a write
// past the last element is caught.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/varlen.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

struct HostRun {
  static constexpr size_t kGuard = 256;
  std::vector<uint16_t> out;  // out_count() elements, then kGuard poisoned ones
  std::vector<float> lse;     // lse_count() values, then one poisoned guard
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;

  bool guard_intact(size_t out_count) const;
};

HostRun run_on_host(AttnData& data, zyfa_backend_t backend);
HostRun run_on_host(VarlenData& data, zyfa_backend_t backend);
// The varlen tests of a host-memory backend (cpu, emu), "" when they pass, else what failed.
// The matrix check: configuration c (its seed set) against the fp64 reference within tol, no
// write past the output, no LSE written when none was asked for; *summary gets the check's line.
std::string host_varlen_difference(const VarlenConfig& c, zyfa_backend_t backend, const Tolerance& tol,
                                   std::string* summary);
// The unseen-NaN check (varlen_unseen_nan_difference) run on the backend.
std::string host_varlen_unseen_nan_difference(const VarlenConfig& c, zyfa_backend_t backend);

// The same for any descriptor: make_desc receives the poisoned output and LSE buffers.
HostRun run_host_desc(size_t out_count, size_t lse_count, zyfa_backend_t backend,
                      const std::function<zyfa_fwd_desc_t(void* out, float* lse)>& make_desc);

}  // namespace zyfa::test
