// The gfx950 policy of the plan layer, shared by the hip and emu backends: kernel choice,
// argument structs and launches through an AmdDevice.
#include "host/amd/amd_backend.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/amd/quantize_launch.h"
#include "host/error.h"
#include "host/plan/gpu_backend.h"

namespace zyfa::amd {
namespace {

class Gfx950Policy final : public plan::ArchPolicy {
 public:
  Gfx950Policy(AmdDevice* device, const char* name) : device_(device), name_(name) {}

  zyfa_status_t can_run(const FwdProblem& p) override { return check_attn_supported(p, name_); }

  JobTableParams job_table_params(const FwdProblem& p) override { return attn_job_table_params(p); }

  // Varlen: the job table and its builder's scratch (built on the device by launch_fwd).
  size_t workspace_bytes(const FwdProblem& p) override { return p.varlen() ? varlen_workspace(p).bytes : 0; }

  zyfa_status_t launch_fwd(const FwdProblem& p, const plan::FwdResources& r) override {
    // The job table: the plan cache's uploaded one, or for varlen the workspace's, which the
    // builder kernel writes from the prefix sums first, on the same stream.
    const void* table = r.table.device;
    size_t table_bytes = 0;
    uint32_t grid = 0;
    if (p.varlen()) {
      if (zyfa_status_t s = launch_varlen_job_table(p, r.workspace); s != ZYFA_STATUS_SUCCESS) return s;
      table = r.workspace;
      table_bytes = varlen_workspace(p).table_bytes;
      grid = static_cast<uint32_t>(varlen_shape(p).grid);
    } else {
      table_bytes = r.table.table->bytes();
      grid = r.table.table->grid();
    }
    const char* kernel = attn_kernel_name(p);
    // The any-lengths kernels take the fixed-length arguments with their own after them.
    const bool lengths = any_lengths(p);
    const kernels::AttnLengthsArgs largs = lengths ? make_attn_lengths_args(p, table) : kernels::AttnLengthsArgs{};
    const kernels::AttnFwdArgs args = lengths ? largs.f : make_attn_args(p, table);
    const size_t args_size = lengths ? sizeof(largs) : sizeof(args);
    const CodeObject* co = nullptr;
    if (zyfa_status_t s = kernel_code_object(kernel, args_size, &co); s != ZYFA_STATUS_SUCCESS) return s;
    LaunchConfig cfg{};
    cfg.code_object = co;
    cfg.kernel = kernel;
    cfg.grid[0] = grid;
    cfg.grid[1] = cfg.grid[2] = 1;
    cfg.block[0] = static_cast<uint32_t>(attn_kernel_shape(p).threads);
    cfg.block[1] = cfg.block[2] = 1;
    cfg.kernarg = lengths ? static_cast<const void*>(&largs) : static_cast<const void*>(&args);
    cfg.kernarg_size = args_size;
    cfg.stream = p.stream;
    cfg.buffers = attn_buffers(p, table, table_bytes);
    return device_->launch(cfg);
  }

  // One workgroup builds the varlen job table from the device prefix sums into the workspace.
  zyfa_status_t launch_varlen_job_table(const FwdProblem& p, void* workspace) {
    constexpr const char* kKernel = "varlen_job_table";
    const kernels::VarlenJobTableArgs args = make_varlen_job_args(p, workspace);
    const CodeObject* co = nullptr;
    if (zyfa_status_t s = kernel_code_object(kKernel, sizeof(args), &co); s != ZYFA_STATUS_SUCCESS) return s;
    LaunchConfig cfg{};
    cfg.code_object = co;
    cfg.kernel = kKernel;
    cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 1;
    cfg.block[0] = kernels::kVarlenJobThreads;
    cfg.block[1] = cfg.block[2] = 1;
    cfg.kernarg = &args;
    cfg.kernarg_size = sizeof(args);
    cfg.stream = p.stream;
    cfg.buffers = varlen_job_buffers(p, workspace);
    return device_->launch(cfg);
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p, plan::PlanCache& cache) override {
    // Held until the last launch is issued: on a stream shared by threads, another call's amax
    // must not land between this call's amax and convert. Room for the plain quantize's
    // partials and for those of the options' kernels.
    std::unique_lock<std::mutex> partials_lock;
    void* partials = nullptr;
    constexpr size_t kWords = std::max<size_t>(kernels::kAmaxWorkgroups, kRotScratchWords);
    if (zyfa_status_t s = cache.scratch(plan::Scratch::kQuantizePartials, p.stream, kWords * sizeof(uint32_t),
                                        /*may_allocate=*/true, &partials, &partials_lock);
        s != ZYFA_STATUS_SUCCESS)
      return s;
    if (p.transformed()) return fp8_quantize_rotated(p, partials);
    const size_t partial_bytes = kernels::kAmaxWorkgroups * sizeof(uint32_t);
    QuantizePlan plan;
    if (zyfa_status_t s = plan_quantize(p, partials, name_, &plan); s != ZYFA_STATUS_SUCCESS) return s;
    const CodeObject* amax_co = nullptr;
    const CodeObject* convert_co = nullptr;
    if (zyfa_status_t s = kernel_code_object(plan.amax_kernel, sizeof(plan.amax), &amax_co); s != ZYFA_STATUS_SUCCESS)
      return s;
    if (zyfa_status_t s = kernel_code_object(plan.convert_kernel, sizeof(kernels::Fp8ConvertArgs), &convert_co);
        s != ZYFA_STATUS_SUCCESS)
      return s;

    LaunchConfig amax{};
    amax.code_object = amax_co;
    amax.kernel = plan.amax_kernel;
    amax.grid[0] = kernels::kAmaxWorkgroups;
    amax.grid[1] = amax.grid[2] = 1;
    amax.block[0] = kernels::kQuantizeThreads;
    amax.block[1] = amax.block[2] = 1;
    amax.kernarg = &plan.amax;
    amax.kernarg_size = sizeof(plan.amax);
    amax.stream = p.stream;
    amax.buffers = {{p.src.data, plan.src_bytes, false}, {partials, partial_bytes, true}};
    if (zyfa_status_t s = device_->launch(amax); s != ZYFA_STATUS_SUCCESS) return s;

    for (const ConvertLaunch& c : plan.converts) {
      LaunchConfig cfg{};
      cfg.code_object = convert_co;
      cfg.kernel = plan.convert_kernel;
      for (int i = 0; i < 3; ++i) cfg.grid[i] = c.grid[i];
      cfg.block[0] = kernels::kQuantizeThreads;
      cfg.block[1] = cfg.block[2] = 1;
      cfg.kernarg = &c.args;
      cfg.kernarg_size = sizeof(c.args);
      cfg.stream = p.stream;
      cfg.buffers = {{p.src.data, plan.src_bytes, false},
                     {p.dst.data, plan.dst_bytes, true},
                     {partials, partial_bytes, false},
                     {p.descale, sizeof(float), true}};
      if (zyfa_status_t s = device_->launch(cfg); s != ZYFA_STATUS_SUCCESS) return s;
    }
    return ZYFA_STATUS_SUCCESS;
  }

  // The options' kernels (quantize_launch.h), in order on the call's stream; the caller holds
  // the scratch locked until the last one is issued, as for the plain quantize.
  zyfa_status_t fp8_quantize_rotated(const QuantizeProblem& p, void* scratch) {
    RotatePlan plan;
    if (zyfa_status_t s = plan_rotate_quantize(p, scratch, name_, &plan); s != ZYFA_STATUS_SUCCESS) return s;
    const size_t scratch_bytes = kRotScratchWords * sizeof(uint32_t);
    const size_t half = scratch_bytes / 2;
    auto launch = [&](const char* kernel, uint32_t grid, std::vector<MemRange> buffers) -> zyfa_status_t {
      const CodeObject* co = nullptr;
      if (zyfa_status_t s = kernel_code_object(kernel, sizeof(plan.args), &co); s != ZYFA_STATUS_SUCCESS) return s;
      LaunchConfig cfg{};
      cfg.code_object = co;
      cfg.kernel = kernel;
      cfg.grid[0] = grid;
      cfg.grid[1] = cfg.grid[2] = 1;
      cfg.block[0] = kernels::kRotThreads;
      cfg.block[1] = cfg.block[2] = 1;
      cfg.kernarg = &plan.args;
      cfg.kernarg_size = sizeof(plan.args);
      cfg.stream = p.stream;
      cfg.buffers = std::move(buffers);
      if (plan.mean_bytes) cfg.buffers.push_back({p.smooth_mean, plan.mean_bytes, false});
      return device_->launch(cfg);
    };
    char* counts = static_cast<char*>(scratch) + half;
    if (plan.amax_kernel) {
      const zyfa_status_t s = launch(plan.amax_kernel, plan.args.workgroups,
                                     {{p.src.data, plan.src_bytes, false}, {scratch, half, true}});
      if (s != ZYFA_STATUS_SUCCESS) return s;
    }
    const zyfa_status_t s = launch(plan.convert_kernel, plan.args.workgroups,
                                   {{p.src.data, plan.src_bytes, false},
                                    {p.dst.data, plan.dst_bytes, true},
                                    {scratch, half, false},
                                    {counts, half, true},
                                    {p.descale, sizeof(float), true}});
    if (s != ZYFA_STATUS_SUCCESS || !plan.count_kernel) return s;
    return launch(plan.count_kernel, 1, {{counts, half, false}, {p.saturated, sizeof(uint32_t), true}});
  }

 private:
  // The code object holding `kernel`, after checking that its kernarg segment is exactly the
  // argument struct this library fills (host and device built from the same header).
  zyfa_status_t kernel_code_object(const char* kernel, size_t args_size, const CodeObject** out) {
    const KernelInfo* info = find_kernel(kernel);
    const CodeObject* co = info ? find_code_object(info->code_object) : nullptr;
    if (!co)
      return fail(ZYFA_STATUS_INTERNAL_ERROR, "backend = {}: kernel {} is not embedded in this libzyfa", name_, kernel);
    if (info->kernarg_size != args_size)
      return fail(ZYFA_STATUS_INTERNAL_ERROR, "backend = {}: kernel {} takes {} bytes of arguments, the host fills {}",
                  name_, kernel, info->kernarg_size, args_size);
    *out = co;
    return ZYFA_STATUS_SUCCESS;
  }

  AmdDevice* device_;
  const char* name_;
};

}  // namespace

std::unique_ptr<Backend> make_amd_backend(std::unique_ptr<AmdDevice> device, zyfa_backend_t kind) {
  const char* name = kind == ZYFA_BACKEND_HIP ? "hip" : "emu";
  AmdDevice* raw = device.get();
  return plan::make_gpu_backend(std::move(device), std::make_unique<Gfx950Policy>(raw, name), name);
}

}  // namespace zyfa::amd
