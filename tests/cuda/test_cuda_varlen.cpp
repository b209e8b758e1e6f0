// Varlen on the cuda backend: the device job-table builder gives the host builder's table word
// for word, also when a captured graph replays it with new lengths under the same maxima; and
// the backend, whose attention kernels do not take varlen batches yet, refuses them cleanly.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cuda/varlen_jobs.h"
#include "support/varlen.h"

namespace zyfa::test {
namespace {

struct Lengths {
  std::vector<int32_t> cu_q, cu_k;
};

// Random lengths under the maxima (some 0, some with fewer keys than queries), packed from row 2.
Lengths random_lengths(std::mt19937_64& rng, int32_t batch, int32_t max_q, int32_t max_k) {
  Lengths l{{2}, {2}};
  for (int32_t b = 0; b < batch; ++b) {
    const int32_t lq = rng() % 6 == 0 ? 0 : int32_t(rng() % (max_q + 1));
    const int32_t lk = rng() % 5 == 0 ? int32_t(rng() % (lq + 1)) : std::min(max_k, lq + int32_t(rng() % (max_k + 1)));
    l.cu_q.push_back(l.cu_q.back() + lq);
    l.cu_k.push_back(l.cu_k.back() + lk);
  }
  return l;
}

std::vector<uint32_t> host_table(const Lengths& l, const varlen::Shape& s) {
  std::vector<uint32_t> starts(s.batch + 1), words(varlen::table_words(s));
  std::vector<uint64_t> prefix(varlen::job_capacity(s) + 1);
  const uint32_t jobs = varlen::build_serial(l.cu_q.data(), l.cu_k.data(), s, starts.data(), prefix.data(), words.data());
  words.resize(3 + s.grid + 2 * size_t(jobs));
  return words;
}

class DeviceBuilder {
 public:
  explicit DeviceBuilder(const varlen::Shape& s) : s_(s) {
    ok_ = cudaMalloc(reinterpret_cast<void**>(&cu_q_), (s.batch + 1) * sizeof(int32_t)) == cudaSuccess &&
          cudaMalloc(reinterpret_cast<void**>(&cu_k_), (s.batch + 1) * sizeof(int32_t)) == cudaSuccess &&
          cudaMalloc(&ws_, cuda::varlen_job_workspace_bytes(s)) == cudaSuccess &&
          cudaMalloc(reinterpret_cast<void**>(&table_), varlen::table_words(s) * sizeof(uint32_t)) == cudaSuccess;
  }
  ~DeviceBuilder() {
    cudaFree(cu_q_);
    cudaFree(cu_k_);
    cudaFree(ws_);
    cudaFree(table_);
  }
  bool ok() const { return ok_; }
  cuda::VarlenJobArgs args() const { return {cu_q_, cu_k_, ws_, table_, s_}; }
  // New lengths into the same buffers, and the table poisoned.
  bool upload(const Lengths& l) {
    return cudaMemcpy(cu_q_, l.cu_q.data(), l.cu_q.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
           cudaMemcpy(cu_k_, l.cu_k.data(), l.cu_k.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
           cudaMemset(table_, 0xA5, varlen::table_words(s_) * 4) == cudaSuccess;
  }
  std::vector<uint32_t> download(size_t words) const {
    std::vector<uint32_t> w(words);
    if (cudaMemcpy(w.data(), table_, words * 4, cudaMemcpyDeviceToHost) != cudaSuccess) w.clear();
    return w;
  }

 private:
  varlen::Shape s_;
  int32_t *cu_q_ = nullptr, *cu_k_ = nullptr;
  void* ws_ = nullptr;
  uint32_t* table_ = nullptr;
  bool ok_ = false;
};

TEST(VarlenJobs, DeviceTableIsTheHostTable) {
  ZYFA_SKIP_WITHOUT_CUDA();
  const uint64_t seed = seed_for("VarlenJobs/Device");
  std::printf("seed %llu\n", (unsigned long long)seed);
  std::mt19937_64 rng(seed);
  for (int32_t batch : {1, 16, 3000}) {
    const varlen::Shape s{batch, 8, 128, 128, 8192, 16384, int64_t(batch) * 8192 + 2, int64_t(batch) * 16384 + 2, 132};
    DeviceBuilder dev(s);
    ASSERT_TRUE(dev.ok());
    const Lengths l = random_lengths(rng, batch, s.max_q, s.max_k);
    ASSERT_TRUE(dev.upload(l));
    ZYFA_CUDA_OK(cuda::launch_varlen_job_table(dev.args(), nullptr));
    ZYFA_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<uint32_t> want = host_table(l, s);
    EXPECT_EQ(dev.download(want.size()), want) << "batch " << batch;
  }
}

TEST(VarlenJobs, GraphReplaysWithNewLengths) {
  ZYFA_SKIP_WITHOUT_CUDA();
  std::mt19937_64 rng(seed_for("VarlenJobs/Graph"));
  const varlen::Shape s{16, 32, 128, 128, 8192, 8192, 65536, 65536, 132};
  DeviceBuilder dev(s);
  ASSERT_TRUE(dev.ok());
  cudaStream_t stream;
  ZYFA_CUDA_OK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ZYFA_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  ZYFA_CUDA_OK(cuda::launch_varlen_job_table(dev.args(), stream));
  ZYFA_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ZYFA_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 4; ++replay) {
    Lengths l = random_lengths(rng, s.batch, 4096, 4096);
    ASSERT_TRUE(dev.upload(l));
    ZYFA_CUDA_OK(cudaGraphLaunch(exec, stream));
    ZYFA_CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<uint32_t> want = host_table(l, s);
    EXPECT_EQ(dev.download(want.size()), want) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The attention kernels do not take varlen batches or seqlen_k > seqlen_q yet: refused with
// the field named, nothing written.
TEST(VarlenApi, CudaRefusesNamingTheField) {
  ZYFA_SKIP_WITHOUT_CUDA();
  for (bool fixed : {false, true}) {
    VarlenConfig c = VarlenConfig::of(ZYFA_DTYPE_BF16, 128, 2, 2, "Q5K9", {5, 5}, {9, 9});
    if (fixed) c = c.as_fixed();
    VarlenData a = make_varlen_data(c);
    void *q, *k, *v, *out;
    int32_t *cq, *ck;
    ZYFA_CUDA_OK(cudaMalloc(&q, a.q.size()));
    ZYFA_CUDA_OK(cudaMalloc(&k, a.k.size()));
    ZYFA_CUDA_OK(cudaMalloc(&v, a.v.size()));
    ZYFA_CUDA_OK(cudaMalloc(&out, a.out_count() * 2));
    ZYFA_CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&cq), a.cu_q.size() * 4));
    ZYFA_CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&ck), a.cu_k.size() * 4));
    ZYFA_CUDA_OK(cudaMemset(out, 0xFF, a.out_count() * 2));
    zyfa_handle_t h;
    ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
    zyfa_fwd_desc_t d = a.desc(q, k, v, out, nullptr, cq, ck, nullptr);
    d.backend = ZYFA_BACKEND_CUDA;
    EXPECT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_NOT_SUPPORTED);
    EXPECT_NE(std::string(zyfa_last_error()).find(fixed ? "k.shape[1] = 9" : "cu_seqlens_q"), std::string::npos)
        << zyfa_last_error();
    std::vector<uint16_t> o(a.out_count());
    ZYFA_CUDA_OK(cudaMemcpy(o.data(), out, o.size() * 2, cudaMemcpyDeviceToHost));
    for (uint16_t x : o) ASSERT_EQ(x, 0xFFFF) << "written although refused";
    zyfa_destroy(h);
    for (void* p : {q, k, v, out, static_cast<void*>(cq), static_cast<void*>(ck)}) cudaFree(p);
  }
}

}  // namespace
}  // namespace zyfa::test
