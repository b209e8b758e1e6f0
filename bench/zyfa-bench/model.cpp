#include "model.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "../../tests/aiter/aiter_fmha_v3.h"
#include "emu/loader/code_object.h"

namespace zyfa::bench {
namespace {

std::vector<uint16_t> gaussian_bf16(size_t n, float std, uint64_t seed) {
  std::vector<uint16_t> v(n);
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d(0.0f, std);
  for (auto& x : v) {
    const float f = d(g);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    x = uint16_t((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
  }
  return v;
}

}  // namespace

emu::timing::Prediction predict_dispatch(const emu::Dispatch& d, const emu::DispatchOptions& opt, int cus) {
  emu::timing::Geometry g;
  g.object = d.object;
  g.kernel = d.kernel;
  for (int i = 0; i < 3; ++i) {
    g.grid[i] = d.grid[i];
    g.block[i] = d.block[i];
  }
  g.dynamic_lds_bytes = d.dynamic_lds_bytes;
  emu::timing::ModelOptions mo;
  mo.cus = cus;
  return emu::timing::predict(g, [&](const emu::DispatchOptions& o) { return emu::run_dispatch(d, o); }, opt, mo);
}

ModelRecorder::ModelRecorder(int cus) : cus_(cus) {
  emu::set_dispatch_hook([this](const emu::Dispatch& d, const emu::DispatchOptions& opt) {
    emu::timing::Prediction p = predict_dispatch(d, opt, cus_);
    emu::DispatchResult r;
    r.ok = p.ok;
    r.error = p.error;
    std::lock_guard<std::mutex> lock(mu_);
    launches_.push_back(std::move(p));
    return r;
  });
}

ModelRecorder::~ModelRecorder() { emu::set_dispatch_hook({}); }

std::vector<emu::timing::Prediction> ModelRecorder::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(launches_);
}

bool have_aiter_kernel(const std::string& dir, int64_t d_qk) {
  const aiter::KernelChoice kc{int(d_qk), true};
  return std::ifstream(dir + "/fmha_v3_fwd/" + kc.file()).good();
}

emu::timing::Prediction predict_aiter(const std::string& dir, const ModelProblem& m) {
  emu::timing::Prediction fail;
  const aiter::KernelChoice kc{int(m.d_qk), true};
  const std::vector<uint8_t> image = aiter::read_code_object(dir, kc, &fail.error);
  if (image.empty()) return fail;
  const emu::LoadedCodeObject object(image.data(), image.size());

  // Inputs with one K/V tile of readable slack (AITER's prefetch reads the next tile).
  const size_t S = size_t(m.seqlen), dq = size_t(m.d_qk), dv = 128;
  const size_t slack_rows = size_t(kc.ts_kv());
  std::vector<uint16_t> q = gaussian_bf16(size_t(m.batch) * S * m.heads * dq, m.input_std, m.seed * 3 + 0);
  std::vector<uint16_t> k = gaussian_bf16(size_t(m.batch) * (S + slack_rows) * m.heads_k * dq, m.input_std, m.seed * 3 + 1);
  std::vector<uint16_t> v = gaussian_bf16(size_t(m.batch) * (S + slack_rows) * m.heads_k * dv, m.input_std, m.seed * 3 + 2);
  std::vector<uint16_t> out(size_t(m.batch) * S * m.heads * dv);
  std::vector<float> lse(size_t(m.batch) * m.heads * S);
  aiter::Problem p;
  p.batch = int(m.batch);
  p.seqlen = int(m.seqlen);
  p.heads = int(m.heads);
  p.heads_k = int(m.heads_k);
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  p.q_bytes = q.size() * 2;
  p.k_bytes = k.size() * 2;
  p.v_bytes = v.size() * 2;
  p.out = out.data();
  p.lse = lse.data();

  emu::timing::Geometry g;
  g.object = &object;
  g.kernel = kc.symbol();
  aiter::launch_geometry(kc, p, g.grid, g.block);
  emu::DispatchOptions opt;
  opt.seed = m.seed;
  opt.rules = emu::RuleSet::kHardware;  // AMD's code relies on the hardware's wait states
  opt.order_checks = false;             // and breaks the LDS ordering checks past S = 256
  emu::timing::ModelOptions mo;
  mo.cus = m.cus;
  mo.flops = double(m.batch) * double(m.heads) * double(m.seqlen) * double(m.seqlen) * double(m.d_qk + 128);
  return emu::timing::predict(g, [&](const emu::DispatchOptions& o) { return aiter::run(dir, kc, p, o); }, opt, mo);
}

}  // namespace zyfa::bench
