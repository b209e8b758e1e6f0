// The AMD host path shared by hip and emu: kernel choice, argument structs, job tables cached
// per (device, shape), launches through an AmdDevice.
#include "host/amd/amd_backend.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "host/amd/attn_launch.h"
#include "host/amd/code_objects.h"
#include "host/amd/quantize_launch.h"
#include "host/error.h"
#include "host/handle.h"
#include "host/job_table.h"

namespace zyfa::amd {
namespace {

class AmdBackend final : public Backend {
 public:
  AmdBackend(std::unique_ptr<AmdDevice> device, zyfa_backend_t kind)
      : device_(std::move(device)), name_(kind == ZYFA_BACKEND_HIP ? "hip" : "emu") {}

  ~AmdBackend() override {
    for (auto& entry : tables_) device_->free(entry.second.device);
    for (auto& entry : partials_)
      if (entry.second.buffer) device_->free(entry.second.buffer);
  }

  zyfa_status_t available() override { return device_->available(); }

  zyfa_status_t fwd_prepare(const FwdProblem& p) override {
    const CachedTable* table = nullptr;
    return prepare(p, &table);
  }

  zyfa_status_t fwd(const FwdProblem& p) override {
    const CachedTable* table = nullptr;
    if (zyfa_status_t s = prepare(p, &table); s != ZYFA_STATUS_SUCCESS) return s;
    const char* kernel = attn_kernel_name(p);
    const CodeObject* co = nullptr;
    if (zyfa_status_t s = kernel_code_object(kernel, sizeof(kernels::AttnFwdArgs), &co); s != ZYFA_STATUS_SUCCESS)
      return s;
    const kernels::AttnFwdArgs args = make_attn_args(p, table->device);
    LaunchConfig cfg{};
    cfg.code_object = co;
    cfg.kernel = kernel;
    cfg.grid[0] = table->table.grid();
    cfg.grid[1] = cfg.grid[2] = 1;
    cfg.block[0] = static_cast<uint32_t>(attn_kernel_shape(p).threads);
    cfg.block[1] = cfg.block[2] = 1;
    cfg.kernarg = &args;
    cfg.kernarg_size = sizeof(args);
    cfg.stream = p.stream;
    cfg.buffers = attn_buffers(p, table->device, table->table.bytes());
    return device_->launch(cfg);
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p) override {
    if (zyfa_status_t s = device_->available(); s != ZYFA_STATUS_SUCCESS) return s;
    if (p.transformed()) return fp8_quantize_rotated(p);
    // Held until the last launch is issued: on a stream shared by threads, another call's amax
    // must not land between this call's amax and convert.
    std::unique_lock<std::mutex> partials_lock;
    void* partials = nullptr;
    if (zyfa_status_t s = partials_for(p.stream, &partials, &partials_lock); s != ZYFA_STATUS_SUCCESS) return s;
    QuantizePlan plan;
    if (zyfa_status_t s = plan_quantize(p, partials, name_, &plan); s != ZYFA_STATUS_SUCCESS) return s;
    const CodeObject* amax_co = nullptr;
    const CodeObject* convert_co = nullptr;
    if (zyfa_status_t s = kernel_code_object(plan.amax_kernel, sizeof(plan.amax), &amax_co); s != ZYFA_STATUS_SUCCESS)
      return s;
    if (zyfa_status_t s = kernel_code_object(plan.convert_kernel, sizeof(kernels::Fp8ConvertArgs), &convert_co);
        s != ZYFA_STATUS_SUCCESS)
      return s;
    const size_t partial_bytes = kernels::kAmaxWorkgroups * sizeof(uint32_t);

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

  // The options' kernels (quantize_launch.h), in order on the call's stream; the scratch stays
  // locked until the last one is issued, as for the plain quantize.
  zyfa_status_t fp8_quantize_rotated(const QuantizeProblem& p) {
    std::unique_lock<std::mutex> scratch_lock;
    void* scratch = nullptr;
    if (zyfa_status_t s = partials_for(p.stream, &scratch, &scratch_lock); s != ZYFA_STATUS_SUCCESS) return s;
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
      const zyfa_status_t s = launch(plan.amax_kernel, kernels::kRotWorkgroups,
                                     {{p.src.data, plan.src_bytes, false}, {scratch, half, true}});
      if (s != ZYFA_STATUS_SUCCESS) return s;
    }
    const zyfa_status_t s = launch(plan.convert_kernel, kernels::kRotWorkgroups,
                                   {{p.src.data, plan.src_bytes, false},
                                    {p.dst.data, plan.dst_bytes, true},
                                    {scratch, half, false},
                                    {counts, half, true},
                                    {p.descale, sizeof(float), true}});
    if (s != ZYFA_STATUS_SUCCESS || !plan.count_kernel) return s;
    return launch(plan.count_kernel, 1, {{counts, half, false}, {p.saturated, sizeof(uint32_t), true}});
  }

 private:
  struct CachedTable {
    JobTable table;       // host copy stays alive: the upload may still be in flight
    void* device = nullptr;
  };
  // device, batch, heads, heads_k, seqlen, tile rows (kernels differ in tile size)
  using TableKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int>;
  struct Partials {
    std::mutex mu;  // held by the call whose launches use the buffer
    void* buffer = nullptr;
  };
  using PartialsKey = std::tuple<int, void*, uint64_t>;  // device, stream, scratch_thread() or 0

  // Checks, then finds or builds and uploads the job table of this shape on this device.
  zyfa_status_t prepare(const FwdProblem& p, const CachedTable** out) {
    if (zyfa_status_t s = device_->available(); s != ZYFA_STATUS_SUCCESS) return s;
    if (zyfa_status_t s = check_attn_supported(p, name_); s != ZYFA_STATUS_SUCCESS) return s;
    const int dev = device_->device_id();
    const TableKey key{dev, p.batch, p.heads, p.heads_k, p.seqlen, attn_kernel_shape(p).tile_rows};
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = tables_.find(key); it != tables_.end()) {
      *out = &it->second;
      return ZYFA_STATUS_SUCCESS;
    }
    CachedTable entry;
    if (!build_job_table(attn_job_table_params(p), &entry.table) || entry.table.words.empty())
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: batch = {}, heads = {}, seqlen = {}: too many query tiles for 32-bit tile ids",
                  name_, p.batch, p.heads, p.seqlen);
    if (zyfa_status_t s = device_->alloc(entry.table.bytes(), &entry.device); s != ZYFA_STATUS_SUCCESS) return s;
    auto [it, inserted] = tables_.emplace(key, std::move(entry));
    (void)inserted;
    if (zyfa_status_t s = device_->copy_to_device(it->second.device, it->second.table.words.data(),
                                                  it->second.table.bytes(), p.stream);
        s != ZYFA_STATUS_SUCCESS) {
      device_->free(it->second.device);
      tables_.erase(it);
      return s;
    }
    *out = &it->second;
    return ZYFA_STATUS_SUCCESS;
  }

  // The partial-amax buffer of the queue `stream` names for this thread, locked into `hold`.
  // Calls on one queue are ordered, so they share it one call at a time; calls on different
  // queues (other streams, per-thread streams of other threads, other threads on emu) never
  // share it (host/handle.h).
  zyfa_status_t partials_for(void* stream, void** out, std::unique_lock<std::mutex>* hold) {
    const PartialsKey key{device_->device_id(), stream, device_->per_thread_queue(stream) ? scratch_thread() : 0};
    Partials* entry = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      entry = &partials_[key];  // node-based map: the entry never moves
    }
    std::unique_lock<std::mutex> lock(entry->mu);
    if (!entry->buffer) {
      // Room for the plain quantize's partials and for those of the options' kernels.
      constexpr size_t kWords = std::max<size_t>(kernels::kAmaxWorkgroups, kRotScratchWords);
      if (zyfa_status_t s = device_->alloc(kWords * sizeof(uint32_t), &entry->buffer);
          s != ZYFA_STATUS_SUCCESS)
        return s;
    }
    *out = entry->buffer;
    *hold = std::move(lock);
    return ZYFA_STATUS_SUCCESS;
  }

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

  std::unique_ptr<AmdDevice> device_;
  const char* name_;
  std::mutex mu_;  // guards both maps; a partials buffer is guarded by its own mutex
  std::map<TableKey, CachedTable> tables_;  // node-based: entries never move
  std::map<PartialsKey, Partials> partials_;  // node-based as well
};

}  // namespace

std::unique_ptr<Backend> make_amd_backend(std::unique_ptr<AmdDevice> device, zyfa_backend_t kind) {
  return std::make_unique<AmdBackend>(std::move(device), kind);
}

}  // namespace zyfa::amd
