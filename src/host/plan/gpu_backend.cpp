#include "host/plan/gpu_backend.h"

#include <mutex>
#include <utility>

#include "host/plan/plan_cache.h"

namespace zyfa::plan {
namespace {

class GpuBackend final : public Backend {
 public:
  GpuBackend(std::unique_ptr<GpuDevice> device, std::unique_ptr<ArchPolicy> policy, const char* name)
      : device_(std::move(device)), policy_(std::move(policy)), cache_(device_.get(), name) {}

  zyfa_status_t available() override { return device_->available(); }

  zyfa_status_t fwd_prepare(const FwdProblem& p) override {
    FwdResources r;
    std::unique_lock<std::mutex> hold;
    return plan(Mode::kPrepare, p, &r, &hold);
  }

  zyfa_status_t fwd(const FwdProblem& p) override {
    FwdResources r;
    // Held until the launches are issued: on a queue shared by threads, another call's use of
    // the workspace must not land between this call's launches.
    std::unique_lock<std::mutex> hold;
    if (zyfa_status_t s = plan(Mode::kRun, p, &r, &hold); s != ZYFA_STATUS_SUCCESS) return s;
    return policy_->launch_fwd(p, r);
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p) override {
    if (zyfa_status_t s = device_->available(); s != ZYFA_STATUS_SUCCESS) return s;
    return policy_->fp8_quantize(p, cache_);
  }

 private:
  // Everything a launch needs, found in or added to the cache under the capture rule.
  zyfa_status_t plan(Mode mode, const FwdProblem& p, FwdResources* r, std::unique_lock<std::mutex>* hold) {
    if (zyfa_status_t s = device_->available(); s != ZYFA_STATUS_SUCCESS) return s;
    if (zyfa_status_t s = policy_->can_run(p); s != ZYFA_STATUS_SUCCESS) return s;
    bool may_allocate = true;
    if (zyfa_status_t s = cache_.may_allocate(mode, p, &may_allocate); s != ZYFA_STATUS_SUCCESS) return s;
    // Varlen tables are built on the device from the prefix sums, in the workspace (the
    // policy's launch); fixed lengths use the cached host-built table.
    if (!p.varlen()) {
      if (zyfa_status_t s = cache_.job_table(policy_->job_table_params(p), p, may_allocate, &r->table);
          s != ZYFA_STATUS_SUCCESS)
        return s;
    }
    return cache_.scratch(Scratch::kFwdWorkspace, p.stream, policy_->workspace_bytes(p), may_allocate, &r->workspace,
                          hold);
  }

  // Destroyed in reverse: the cache frees through the device, the policy may point at it.
  std::unique_ptr<GpuDevice> device_;
  std::unique_ptr<ArchPolicy> policy_;
  PlanCache cache_;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(std::unique_ptr<GpuDevice> device, std::unique_ptr<ArchPolicy> policy,
                                          const char* name) {
  return std::make_unique<GpuBackend>(std::move(device), std::move(policy), name);
}

}  // namespace zyfa::plan
