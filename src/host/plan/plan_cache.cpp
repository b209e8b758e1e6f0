#include "host/plan/plan_cache.h"

#include <utility>

#include "host/error.h"
#include "host/handle.h"

namespace zyfa::plan {

PlanCache::~PlanCache() {
  // At process exit a runtime may already be shut down; a failed free is irrelevant then.
  for (auto& entry : tables_) device_->free(entry.second.device);
  for (auto& entry : buffers_)
    for (void* b : entry.second.buffers) device_->free(b);
}

zyfa_status_t PlanCache::may_allocate(Mode mode, const FwdProblem& p, bool* out) {
  *out = true;
  if (mode == Mode::kPrepare) return ZYFA_STATUS_SUCCESS;
  bool capturing = false;
  if (zyfa_status_t s = device_->capturing(p.stream, &capturing); s != ZYFA_STATUS_SUCCESS) return s;
  *out = !capturing;
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t PlanCache::job_table(const JobTableParams& params, const FwdProblem& p, bool may_allocate,
                                   DeviceTable* out) {
  const TableKey key{device_->device_id(), params.batch,  params.heads,    params.heads_k,
                     params.seqlen,        params.tile_rows, params.grid, params.num_xcds,
                     static_cast<int>(params.schedule)};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    if (!may_allocate)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                  "desc->stream = {}: the stream is capturing a graph, but this shape (batch {}, seqlen {}, heads {}, "
                  "heads_k {}) was not prepared; call zyfa_fwd_prepare with the same descriptor before the capture",
                  p.stream, p.batch, p.seqlen, p.heads, p.heads_k);
    Table entry;
    if (!build_job_table(params, &entry.table))
      return fail(ZYFA_STATUS_NOT_SUPPORTED,
                  "backend = {}: batch = {}, heads = {}, seqlen = {}: too many query tiles for 32-bit tile ids", name_,
                  p.batch, p.heads, p.seqlen);
    if (zyfa_status_t s = device_->alloc(entry.table.bytes(), &entry.device); s != ZYFA_STATUS_SUCCESS) return s;
    if (zyfa_status_t s = device_->upload(entry.device, entry.table.words.data(), entry.table.bytes());
        s != ZYFA_STATUS_SUCCESS) {
      device_->free(entry.device);
      return s;
    }
    it = tables_.emplace(key, std::move(entry)).first;
  }
  out->table = &it->second.table;
  out->device = it->second.device;
  return ZYFA_STATUS_SUCCESS;
}

zyfa_status_t PlanCache::scratch(Scratch purpose, void* stream, size_t bytes, bool may_allocate, void** out,
                                 std::unique_lock<std::mutex>* hold) {
  *out = nullptr;
  if (bytes == 0) return ZYFA_STATUS_SUCCESS;
  const BufferKey key{device_->device_id(), static_cast<int>(purpose), stream,
                      device_->per_thread_queue(stream) ? scratch_thread() : 0};
  Buffer* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry = &buffers_[key];  // node-based map: the entry never moves
  }
  std::unique_lock<std::mutex> lock(entry->mu);
  if (entry->bytes < bytes) {
    if (!may_allocate)
      return fail(ZYFA_STATUS_INVALID_ARGUMENT,
                  "desc->stream = {}: the stream is capturing a graph, but the {} bytes of workspace this shape needs "
                  "were not prepared for it; call zyfa_fwd_prepare with the same descriptor before the capture",
                  stream, bytes);
    void* buffer = nullptr;
    if (zyfa_status_t s = device_->alloc(bytes, &buffer); s != ZYFA_STATUS_SUCCESS) return s;
    entry->buffers.push_back(buffer);
    entry->bytes = bytes;
  }
  *out = entry->buffers.back();
  *hold = std::move(lock);
  return ZYFA_STATUS_SUCCESS;
}

}  // namespace zyfa::plan
