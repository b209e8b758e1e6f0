// The shared AMD host path against a recording AmdDevice: what it allocates, uploads and
// launches for attention and quantize calls, and that job tables are built once per shape
// and device, and the capture rule of the plan cache.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attn_fwd_args.h"
#include "attn_fwd_bf16_d128_gfx950_args.h"
#include "fp8_quantize_args.h"
#include "host/amd/amd_backend.h"
#include "host/amd/code_objects.h"
#include "host/job_table.h"
#include "zyfa/zyfa.h"

namespace zyfa::amd {
namespace {

struct Recorded {
  std::vector<std::vector<uint8_t>> allocations;
  std::vector<size_t> copies;  // bytes of each upload
  struct Launch {
    std::string kernel;
    std::string code_object;
    uint32_t grid[3], block[3];
    std::vector<uint8_t> kernarg;
    std::vector<MemRange> buffers;
    void* stream;
  };
  std::vector<Launch> launches;
  int frees = 0;
  int device = 0;
  bool capturing = false;  // what the device reports for every stream
};

class RecordingDevice final : public AmdDevice {
 public:
  explicit RecordingDevice(Recorded* r) : r_(r) {}
  zyfa_status_t available() override { return ZYFA_STATUS_SUCCESS; }
  int device_id() override { return r_->device; }
  zyfa_status_t alloc(size_t bytes, void** ptr) override {
    r_->allocations.emplace_back(bytes);
    *ptr = r_->allocations.back().data();
    return ZYFA_STATUS_SUCCESS;
  }
  void free(void*) override { ++r_->frees; }
  zyfa_status_t upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    r_->copies.push_back(bytes);
    return ZYFA_STATUS_SUCCESS;
  }
  zyfa_status_t capturing(void*, bool* out) override {
    *out = r_->capturing;
    return ZYFA_STATUS_SUCCESS;
  }
  zyfa_status_t launch(const LaunchConfig& c) override {
    Recorded::Launch l{c.kernel, c.code_object->name, {c.grid[0], c.grid[1], c.grid[2]},
                       {c.block[0], c.block[1], c.block[2]},
                       std::vector<uint8_t>(static_cast<const uint8_t*>(c.kernarg),
                                            static_cast<const uint8_t*>(c.kernarg) + c.kernarg_size),
                       c.buffers, c.stream};
    r_->launches.push_back(std::move(l));
    return ZYFA_STATUS_SUCCESS;
  }

 private:
  Recorded* r_;
};

FwdProblem problem(zyfa_dtype_t dtype, int64_t s, int64_t h, int64_t hk, int64_t dqk, std::vector<uint8_t>* storage) {
  FwdProblem p;
  p.backend = ZYFA_BACKEND_EMU;
  p.in_dtype = dtype;
  p.batch = 1, p.seqlen = s, p.seqlen_k = s, p.heads = h, p.heads_k = hk, p.d_qk = dqk, p.d_v = 128;
  const size_t eb = dtype == ZYFA_DTYPE_FP8_E4M3 ? 1 : 2;
  storage->assign((s * h * dqk + s * hk * dqk + s * hk * 128) * eb + s * h * 128 * 2 + 256, 0);
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage->data()) + 63) & ~uintptr_t{63});
  auto view = [&](uint8_t* data, int64_t heads, int64_t d) {
    View v;
    v.data = data;
    v.stride[3] = 1, v.stride[2] = d, v.stride[1] = heads * d, v.stride[0] = s * heads * d;
    return v;
  };
  p.q = view(base, h, dqk);
  p.k = view(base + s * h * dqk * eb, hk, dqk);
  p.v = view(base + (s * h * dqk + s * hk * dqk) * eb, hk, 128);
  p.out = view(base + (s * h * dqk + s * hk * dqk + s * hk * 128) * eb, h, 128);
  p.softmax_scale = 0.1f;
  return p;
}

TEST(AmdBackend, FwdUploadsTheJobTableOncePerShapeAndDevice) {
  Recorded rec;
  auto backend = make_amd_backend(std::make_unique<RecordingDevice>(&rec), ZYFA_BACKEND_EMU);
  std::vector<uint8_t> storage;
  const FwdProblem p = problem(ZYFA_DTYPE_BF16, 1000, 4, 2, 128, &storage);
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd_prepare(p));
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd(p));
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd(p));
  EXPECT_EQ(1u, rec.allocations.size());
  EXPECT_EQ(1u, rec.copies.size());
  ASSERT_EQ(2u, rec.launches.size());

  const auto& l = rec.launches[0];
  EXPECT_EQ("attn_fwd_bf16_d128_gfx950", l.kernel);
  EXPECT_EQ("attn_fwd_bf16_d128_gfx950", l.code_object);
  EXPECT_EQ(static_cast<uint32_t>(kernels::bf16_d128_gfx950::kThreads), l.block[0]);
  ASSERT_EQ(sizeof(kernels::AttnFwdArgs), l.kernarg.size());
  kernels::AttnFwdArgs a;
  std::memcpy(&a, l.kernarg.data(), sizeof a);
  // The launch covers the job table's grid, and the table has the kernel's tile size.
  const auto* words = reinterpret_cast<const uint32_t*>(rec.allocations[0].data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(words), a.job_table);
  EXPECT_EQ(words[0], l.grid[0]);
  EXPECT_EQ(4u, words[1]);  // ceil(1000 / 256) tiles per head
  EXPECT_EQ(1000, a.seqlen);
  // The division constants divide by 4 tiles, 4 heads and a group of 2 query heads.
  auto divide = [](uint32_t n, kernels::FastDiv d) { return static_cast<uint32_t>((uint64_t{n} * d.magic) >> d.shift); };
  EXPECT_EQ(25u, divide(103, a.div_n_tiles));
  EXPECT_EQ(25u, divide(103, a.div_heads));
  EXPECT_EQ(51u, divide(103, a.div_group));
  // Every buffer the kernel touches is listed, out and nothing else writable.
  int writable = 0;
  for (const MemRange& b : l.buffers) writable += b.writable;
  EXPECT_EQ(1, writable);
  EXPECT_EQ(5u, l.buffers.size());

  // Another device gets its own table; a new shape too.
  rec.device = 1;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd(p));
  rec.device = 0;
  const FwdProblem p2 = problem(ZYFA_DTYPE_FP8_E4M3, 300, 2, 1, 192, &storage);
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd(p2));
  EXPECT_EQ(3u, rec.allocations.size());
  EXPECT_EQ("attn_fwd_fp8_d192", rec.launches.back().kernel);
  backend.reset();
  EXPECT_EQ(3, rec.frees);
}

// The plan cache's capture rule: while the stream captures a graph, zyfa_fwd neither allocates
// nor uploads; a shape that zyfa_fwd_prepare did not prepare is refused with a message.
TEST(AmdBackend, FwdDuringCaptureUsesOnlyWhatPrepareUploaded) {
  Recorded rec;
  auto backend = make_amd_backend(std::make_unique<RecordingDevice>(&rec), ZYFA_BACKEND_EMU);
  std::vector<uint8_t> storage;
  const FwdProblem p = problem(ZYFA_DTYPE_FP8_E4M3, 300, 4, 2, 128, &storage);
  rec.capturing = true;
  EXPECT_EQ(ZYFA_STATUS_INVALID_ARGUMENT, backend->fwd(p));
  EXPECT_NE(std::string(zyfa_last_error()).find("zyfa_fwd_prepare"), std::string::npos) << zyfa_last_error();
  EXPECT_TRUE(rec.allocations.empty());
  EXPECT_TRUE(rec.copies.empty());
  EXPECT_TRUE(rec.launches.empty());
  // Preparing is allowed during a capture (it is not recorded on the stream); then the call runs.
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd_prepare(p));
  ASSERT_EQ(1u, rec.allocations.size());
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fwd(p)) << zyfa_last_error();
  EXPECT_EQ(1u, rec.allocations.size());
  EXPECT_EQ(1u, rec.copies.size());
  EXPECT_EQ(1u, rec.launches.size());
}

TEST(AmdBackend, FwdRefusesMisalignedInputsBeforeAnyDeviceWork) {
  Recorded rec;
  auto backend = make_amd_backend(std::make_unique<RecordingDevice>(&rec), ZYFA_BACKEND_EMU);
  std::vector<uint8_t> storage;
  FwdProblem p = problem(ZYFA_DTYPE_BF16, 100, 2, 2, 128, &storage);
  p.q.data = static_cast<uint8_t*>(p.q.data) + 2;
  EXPECT_EQ(ZYFA_STATUS_NOT_SUPPORTED, backend->fwd(p));
  EXPECT_TRUE(rec.allocations.empty());
  EXPECT_TRUE(rec.launches.empty());
}

TEST(AmdBackend, QuantizeRunsAmaxThenConvertWithOnePartialsBufferPerStream) {
  Recorded rec;
  auto backend = make_amd_backend(std::make_unique<RecordingDevice>(&rec), ZYFA_BACKEND_EMU);
  std::vector<float> src(2 * 50 * 4 * 128, 1.0f);
  std::vector<uint8_t> dst(src.size());
  float descale = 0;
  QuantizeProblem q;
  q.backend = ZYFA_BACKEND_EMU;
  q.src_dtype = ZYFA_DTYPE_FP32;
  const int64_t shape[4] = {2, 50, 4, 128};
  const int64_t st[4] = {50 * 4 * 128, 4 * 128, 128, 1};
  for (int i = 0; i < 4; ++i) q.shape[i] = shape[i], q.src.stride[i] = st[i], q.dst.stride[i] = st[i];
  q.src.data = src.data();
  q.dst.data = dst.data();
  q.descale = &descale;
  int stream_a = 0, stream_b = 0;
  q.stream = &stream_a;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fp8_quantize(q));
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fp8_quantize(q));
  q.stream = &stream_b;
  ASSERT_EQ(ZYFA_STATUS_SUCCESS, backend->fp8_quantize(q));
  EXPECT_EQ(2u, rec.allocations.size()) << "one partials buffer per stream";
  ASSERT_EQ(6u, rec.launches.size());
  EXPECT_EQ("fp8_amax_f32", rec.launches[0].kernel);
  EXPECT_EQ(static_cast<uint32_t>(kernels::kAmaxWorkgroups), rec.launches[0].grid[0]);
  EXPECT_EQ("fp8_convert_f32", rec.launches[1].kernel);
  EXPECT_EQ(2u * 50 * 4 * 128 / 256, rec.launches[1].grid[0]);
  EXPECT_EQ(&stream_a, rec.launches[1].stream);
  EXPECT_EQ(&stream_b, rec.launches[5].stream);
  kernels::Fp8ConvertArgs c;
  std::memcpy(&c, rec.launches[1].kernarg.data(), sizeof c);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&descale), c.descale);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(rec.allocations[0].data()), c.partials);
}

}  // namespace
}  // namespace zyfa::amd
