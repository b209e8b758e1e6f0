#include "support/host_run.h"

#include <functional>

namespace zyfa::test {

bool HostRun::guard_intact(size_t out_count) const {
  for (size_t i = out_count; i < out.size(); ++i)
    if (!is_poison_bf16(out[i])) return false;
  return is_poison_f32(lse.back());
}

HostRun run_host_desc(size_t out_count, size_t lse_count, zyfa_backend_t backend,
                      const std::function<zyfa_fwd_desc_t(void* out, float* lse)>& make_desc) {
  HostRun r;
  r.out.resize(out_count + HostRun::kGuard);
  r.lse.resize(lse_count + 1);
  poison_bf16(r.out.data(), r.out.size());
  poison_f32(r.lse.data(), r.lse.size());
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) {
    r.error = zyfa_last_error();
    return r;
  }
  zyfa_fwd_desc_t d = make_desc(r.out.data(), r.lse.data());
  d.backend = backend;
  r.status = zyfa_fwd(h, &d);
  r.error = zyfa_last_error();
  zyfa_destroy(h);
  return r;
}

HostRun run_on_host(AttnData& data, zyfa_backend_t backend) {
  return run_host_desc(data.out_count(), data.lse_count(), backend,
                       [&](void* out, float* lse) { return data.host_desc(out, lse); });
}

HostRun run_on_host(VarlenData& data, zyfa_backend_t backend) {
  return run_host_desc(data.out_count(), data.lse_count(), backend,
                       [&](void* out, float* lse) { return data.host_desc(out, lse); });
}

std::string host_varlen_difference(const VarlenConfig& c, zyfa_backend_t backend, const Tolerance& tol,
                                   std::string* summary) {
  VarlenData a = make_varlen_data(c);
  const ReferenceResult ref = reference_varlen_fp64(a);
  HostRun run = run_on_host(a, backend);
  if (run.status != ZYFA_STATUS_SUCCESS) return "the call failed: " + run.error;
  const CheckResult r = check_varlen(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr, tol);
  *summary = r.summary();
  if (!r.ok()) return r.summary();
  if (!run.guard_intact(a.out_count())) return "write past the output";
  if (!c.lse && !is_poison_f32(run.lse[0])) return "LSE written although not asked for";
  return "";
}

std::string host_varlen_unseen_nan_difference(const VarlenConfig& c, zyfa_backend_t backend) {
  return varlen_unseen_nan_difference(c, [backend](VarlenData& d) {
    HostRun r = run_on_host(d, backend);
    return VarlenOutputs{r.status, r.error, std::move(r.out), std::move(r.lse)};
  });
}

}  // namespace zyfa::test
