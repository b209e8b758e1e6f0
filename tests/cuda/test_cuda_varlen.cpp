// Varlen and seqlen_k > seqlen_q on the cuda backend: the device job-table builder gives the
// host builder's table word for word, also when a captured graph replays it with new lengths;
// the attention kernels against the fp64 reference (the shared varlen matrix plus longer
// sequences), NaN after each sequence's visible keys and around the sequences never seen,
// bad device prefix sums kept inside the tensors, and a captured call replayed with new lengths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
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
  std::vector<uint32_t> buckets(varlen::cost_buckets(s));
  const uint32_t jobs = varlen::build_serial(l.cu_q.data(), l.cu_k.data(), s, starts.data(), buckets.data(), words.data());
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
  // The last shape's cost buckets do not fit in the builder's shared memory.
  const struct { int32_t batch, max_k; } shapes[] = {{1, 16384}, {16, 16384}, {3000, 16384}, {5, 1 << 21}};
  for (const auto [batch, max_k] : shapes) {
    const varlen::Shape s{batch, 8, 128, 128, 8192, max_k, int64_t(batch) * 8192 + 2, int64_t(batch) * max_k + 2, 132};
    if (max_k > 16384) ASSERT_GT(varlen::cost_buckets(s), cuda::kSharedCostBuckets);
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

// Device copies of a varlen configuration (inputs with their NaN gaps and trails, prefix
// sums, descales) and poisoned outputs: out with a guard after it, LSE with one guard float.
class DeviceVarlen {
 public:
  static constexpr size_t kGuard = 256;
  explicit DeviceVarlen(const VarlenData& a) : a_(a) {
    q_ = alloc(a.q.size());
    k_ = alloc(a.k.size());
    v_ = alloc(a.v.size());
    out_ = alloc((a.out_count() + kGuard) * 2);
    lse_ = static_cast<float*>(alloc((a.lse_count() + 1) * 4));
    cu_q_ = static_cast<int32_t*>(alloc(a.cu_q.size() * 4));
    cu_k_ = static_cast<int32_t*>(alloc(a.cu_k.size() * 4));
    if (!a.descales.empty()) descales_ = static_cast<float*>(alloc(a.descales.size() * 4));
    upload(a);
    poison();
  }
  ~DeviceVarlen() {
    for (void* p : allocations_) cudaFree(p);
  }
  DeviceVarlen(const DeviceVarlen&) = delete;
  DeviceVarlen& operator=(const DeviceVarlen&) = delete;

  // Inputs and prefix sums of a configuration of the same sizes into the same buffers.
  void upload(const VarlenData& a) {
    ok_ &= copy_in(q_, a.q.data(), a.q.size()) && copy_in(k_, a.k.data(), a.k.size()) &&
           copy_in(v_, a.v.data(), a.v.size()) && copy_in(cu_q_, a.cu_q.data(), a.cu_q.size() * 4) &&
           copy_in(cu_k_, a.cu_k.data(), a.cu_k.size() * 4) &&
           (descales_ == nullptr || copy_in(descales_, a.descales.data(), a.descales.size() * 4)) && copies_landed();
  }
  void set_prefix_sums(const std::vector<int32_t>& cu_q, const std::vector<int32_t>& cu_k) {
    ok_ &= copy_in(cu_q_, cu_q.data(), cu_q.size() * 4) && copy_in(cu_k_, cu_k.data(), cu_k.size() * 4) &&
           copies_landed();
  }
  void poison() { ok_ &= poison_device_outputs(out_, a_.out_count() + kGuard, lse_, a_.lse_count() + 1); }
  zyfa_fwd_desc_t desc(cudaStream_t stream = nullptr) const {
    zyfa_fwd_desc_t d = a_.desc(q_, k_, v_, out_, lse_, cu_q_, cu_k_, descales_);
    d.backend = ZYFA_BACKEND_CUDA;
    d.stream = stream;
    return d;
  }
  void download(std::vector<uint16_t>* out, std::vector<float>* lse) {
    ok_ &= download_outputs(out_, a_.out_count() + kGuard, lse_, a_.lse_count() + 1, out, lse);
  }
  bool guard_intact(const std::vector<uint16_t>& out, const std::vector<float>& lse) const {
    for (size_t i = a_.out_count(); i < out.size(); ++i)
      if (!is_poison_bf16(out[i])) return false;
    return is_poison_f32(lse.back());
  }
  bool ok() const { return ok_; }

 private:
  static bool copy_in(void* dst, const void* src, size_t bytes) {
    return bytes == 0 || cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    ok_ &= cudaMalloc(&p, bytes == 0 ? 1 : bytes) == cudaSuccess;
    allocations_.push_back(p);
    return p;
  }
  const VarlenData& a_;
  bool ok_ = true;
  std::vector<void*> allocations_;
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *out_ = nullptr;
  float* lse_ = nullptr;
  int32_t *cu_q_ = nullptr, *cu_k_ = nullptr;
  float* descales_ = nullptr;
};

struct DeviceRun {
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  bool guard_ok = false;
};

DeviceRun run_varlen_on_device(const VarlenData& a) {
  DeviceRun r;
  DeviceVarlen dev(a);
  zyfa_handle_t h = nullptr;
  if (!dev.ok() || zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return r;
  const zyfa_fwd_desc_t d = dev.desc();
  r.status = zyfa_fwd(h, &d);
  if (r.status != ZYFA_STATUS_SUCCESS) r.error = zyfa_last_error();
  if (cudaDeviceSynchronize() != cudaSuccess) r.status = ZYFA_STATUS_RUNTIME_ERROR;
  zyfa_destroy(h);
  dev.download(&r.out, &r.lse);
  r.guard_ok = dev.ok() && dev.guard_intact(r.out, r.lse);
  return r;
}

Tolerance varlen_tolerance(const VarlenConfig& c) {
  AttnConfig k = AttnConfig::of(c.dtype, c.d_qk, c.heads, c.heads_k, 128);
  k.inputs = c.inputs;
  k.std = c.std;
  return kernel_tolerance(k);
}

// The shared matrix plus lengths that reach the kernels' steady state (several key blocks
// per tile, the stale maximum of the FP8 d128 kernel) and a chunk far from the start.
std::vector<VarlenConfig> cuda_varlen_matrix() {
  std::vector<VarlenConfig> m = varlen_matrix();
  const std::vector<int32_t> long_q = {700, 1, 300, 0, 1025}, long_k = {1500, 1, 300, 20, 1025};
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    for (int64_t d : {128, 192}) {
      m.push_back(VarlenConfig::of(dt, d, 4, 2, "Long", long_q, long_k));
      m.push_back(VarlenConfig::of(dt, d, 4, 1, "Long", long_q, long_k).with(Inputs::RISING));
    }
    m.push_back(VarlenConfig::of(dt, 128, 4, 4, "Q300K1700", {300, 300}, {1700, 1700}).with(Inputs::GAUSSIAN, 1.0).as_fixed());
  }
  return m;
}

class Varlen : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(Varlen, Cuda) {
  ZYFA_SKIP_WITHOUT_CUDA();
  VarlenConfig c = GetParam();
  c.seed = seed_for("Varlen/" + c.name());
  const VarlenData a = make_varlen_data(c);
  const ReferenceResult ref = reference_varlen_fp64(a);
  const DeviceRun run = run_varlen_on_device(a);
  ASSERT_EQ(run.status, ZYFA_STATUS_SUCCESS) << run.error;
  const CheckResult r = check_varlen(a, ref, run.out.data(), c.lse ? run.lse.data() : nullptr, varlen_tolerance(c));
  EXPECT_TRUE(r.ok()) << c.name() << " seed " << c.seed << ": " << r.summary();
  EXPECT_TRUE(run.guard_ok) << "write past the output or the LSE";
  if (!c.lse) EXPECT_TRUE(is_poison_f32(run.lse[0])) << "LSE written although not asked for";
  std::printf("%s seed %llu: %s\n", c.name().c_str(), (unsigned long long)c.seed, r.summary().c_str());
}

INSTANTIATE_TEST_SUITE_P(Varlen, Varlen, ::testing::ValuesIn(cuda_varlen_matrix()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// NaN keys and values from a seeded cut of each sequence on: rows whose visible keys all lie
// before the cut are bitwise unchanged, rows that see one are not finite.
class VarlenUnseenNan : public ::testing::TestWithParam<VarlenConfig> {};

TEST_P(VarlenUnseenNan, Cuda) {
  ZYFA_SKIP_WITHOUT_CUDA();
  VarlenConfig c = GetParam();
  c.seed = seed_for("VarlenUnseenNan/" + c.name());
  const std::string diff = varlen_unseen_nan_difference(c, [](VarlenData& d) {
    DeviceRun r = run_varlen_on_device(d);
    return VarlenOutputs{r.status, r.error, std::move(r.out), std::move(r.lse)};
  });
  EXPECT_TRUE(diff.empty()) << c.name() << " seed " << c.seed << ": " << diff;
}

std::vector<VarlenConfig> unseen_configs() {
  std::vector<VarlenConfig> m;
  for (const VarlenConfig& c : cuda_varlen_matrix())
    if (c.inputs == Inputs::GAUSSIAN && c.std <= 0.1) m.push_back(c);
  return m;
}

INSTANTIATE_TEST_SUITE_P(VarlenUnseenNan, VarlenUnseenNan, ::testing::ValuesIn(unseen_configs()),
                         [](const ::testing::TestParamInfo<VarlenConfig>& i) { return i.param.name(); });

// Bad device prefix sums (decreasing, past the tensors, lengths above the maxima) are never
// read on the host: the call succeeds, and the kernels, clamping them into the tensors, write
// nothing outside out and the LSE (the guards).
TEST(VarlenApi, BadDevicePrefixSumsStayInBounds) {
  ZYFA_SKIP_WITHOUT_CUDA();
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    const VarlenConfig c = VarlenConfig::of(dt, 128, 2, 1, "Mixed", {40, 300, 7}, {40, 300, 7});
    const VarlenData a = make_varlen_data(c);
    const std::vector<std::vector<int32_t>> bad = {
        {int32_t(a.total_q), 0, -5, int32_t(a.total_q) + 1000},  // decreasing, negative, past the end
        {0, int32_t(a.total_q) * 4, int32_t(a.total_q) * 4, int32_t(a.total_q) * 8},  // past the tensor
        {0, 100000, 5, 1},                                        // lengths above the maxima
    };
    for (const std::vector<int32_t>& cu : bad) {
      DeviceVarlen dev(a);
      ASSERT_TRUE(dev.ok());
      dev.set_prefix_sums(cu, cu);
      zyfa_handle_t h = nullptr;
      ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
      const zyfa_fwd_desc_t d = dev.desc();
      EXPECT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
      ZYFA_CUDA_OK(cudaDeviceSynchronize());
      zyfa_destroy(h);
      std::vector<uint16_t> out;
      std::vector<float> lse;
      dev.download(&out, &lse);
      ASSERT_TRUE(dev.ok());
      EXPECT_TRUE(dev.guard_intact(out, lse)) << "write past the output or the LSE, prefix sums " << cu[0] << ","
                                              << cu[1] << "," << cu[2] << "," << cu[3];
    }
  }
}

// A captured zyfa_fwd replays with other lengths under the same maxima: the job table is built
// on the device from the prefix sums each replay.
TEST(VarlenApi, GraphReplaysWithNewLengths) {
  ZYFA_SKIP_WITHOUT_CUDA();
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    // Same totals and maxima, other splits.
    const VarlenConfig first = VarlenConfig::of(dt, 128, 4, 2, "A", {300, 100, 257}, {300, 400, 257});
    const VarlenConfig second = VarlenConfig::of(dt, 128, 4, 2, "B", {257, 300, 100}, {257, 300, 400});
    VarlenConfig c1 = first, c2 = second;
    c1.seed = seed_for("VarlenApi/GraphA");
    c2.seed = seed_for("VarlenApi/GraphB");
    const VarlenData a = make_varlen_data(c1), b = make_varlen_data(c2);
    ASSERT_EQ(a.total_q, b.total_q);
    ASSERT_EQ(a.total_k, b.total_k);
    DeviceVarlen dev(a);
    ASSERT_TRUE(dev.ok());
    cudaStream_t stream;
    ZYFA_CUDA_OK(cudaStreamCreate(&stream));
    zyfa_handle_t h = nullptr;
    ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
    zyfa_fwd_desc_t d = dev.desc(stream);
    // Maxima of both configurations (the descriptor's are the first's plus 5).
    d.max_seqlen_q = std::max(d.max_seqlen_q, b.max_len_q() + 5);
    d.max_seqlen_k = std::max(d.max_seqlen_k, b.max_len_k() + 5);
    ASSERT_EQ(zyfa_fwd_prepare(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ZYFA_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    ZYFA_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    ZYFA_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (const VarlenData* data : {&a, &b, &a}) {
      dev.upload(*data);
      dev.poison();
      ZYFA_CUDA_OK(cudaGraphLaunch(exec, stream));
      ZYFA_CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<uint16_t> out;
      std::vector<float> lse;
      dev.download(&out, &lse);
      ASSERT_TRUE(dev.ok());
      const CheckResult r = check_varlen(*data, reference_varlen_fp64(*data), out.data(), lse.data(),
                                         varlen_tolerance(data->cfg));
      EXPECT_TRUE(r.ok()) << data->cfg.name() << ": " << r.summary();
    }
    zyfa_destroy(h);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

}  // namespace
}  // namespace zyfa::test
