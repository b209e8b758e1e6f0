// Device state of GPU calls, one implementation for every GPU backend: job tables uploaded
// once per (device, table parameters), scratch buffers per (device, queue, purpose), all freed
// when the cache is destroyed.
//
// The capture rule: zyfa_fwd_prepare (Mode::kPrepare) allocates and uploads what a shape
// needs. zyfa_fwd (Mode::kRun) does the same when its stream is not capturing a graph; while
// it is, a missing table or a too small workspace is refused with INVALID_ARGUMENT and a
// message naming zyfa_fwd_prepare: nothing is allocated or copied, so no synchronous work
// lands in a capture.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "host/job_table.h"
#include "host/plan/gpu_device.h"
#include "host/problem.h"

namespace zyfa::plan {

enum class Mode { kPrepare, kRun };

// What scratch buffers are for; each purpose is a buffer of its own per queue.
enum class Scratch { kFwdWorkspace, kQuantizePartials };

// An uploaded job table: the host copy stays with it (the table's accessors read it).
struct DeviceTable {
  const JobTable* table = nullptr;
  const void* device = nullptr;
};

class PlanCache {
 public:
  PlanCache(GpuDevice* device, const char* backend_name) : device_(device), name_(backend_name) {}
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  // Whether p's stream is capturing a graph, i.e. whether the call may allocate and upload.
  zyfa_status_t may_allocate(Mode mode, const FwdProblem& p, bool* out);

  // The table of `params` on the current device, built and uploaded on first use when
  // `may_allocate`; otherwise a missing table is refused (p names the shape in the message).
  zyfa_status_t job_table(const JobTableParams& params, const FwdProblem& p, bool may_allocate, DeviceTable* out);

  // At least `bytes` of scratch of `purpose` for the queue `stream` names in this thread,
  // locked into `hold` until the caller's last launch is issued: calls on one queue share it
  // one at a time. A buffer only grows; the smaller ones stay allocated until the cache is
  // destroyed, since graphs captured before the growth still point at them. `bytes` 0: none.
  zyfa_status_t scratch(Scratch purpose, void* stream, size_t bytes, bool may_allocate, void** out,
                        std::unique_lock<std::mutex>* hold);

 private:
  struct Table {
    JobTable table;
    void* device = nullptr;
  };
  // device, batch, heads, heads_k, seqlen, tile_rows, grid, num_xcds, schedule
  using TableKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>;
  struct Buffer {
    std::mutex mu;  // held by the call whose launches use the buffer
    std::vector<void*> buffers;  // the last one is the largest
    size_t bytes = 0;
  };
  using BufferKey = std::tuple<int, int, void*, uint64_t>;  // device, purpose, stream, thread or 0

  GpuDevice* device_;
  const char* name_;
  std::mutex mu_;  // guards both maps; a scratch buffer has its own mutex
  std::map<TableKey, Table> tables_;    // node-based: entries never move
  std::map<BufferKey, Buffer> buffers_;  // node-based as well
};

}  // namespace zyfa::plan
