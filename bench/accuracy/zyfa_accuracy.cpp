// zyfa-accuracy: relative RMS error against fp64 attention of each numerics choice of the
// kernels, from the CPU bit-model, on Gaussian and realistic inputs. The FP8 kernels are
// held to these figures (docs/accuracy.md).
//
//   zyfa-accuracy [--seqlens 1024,4096,8192] [--heads 2] [--heads-k 1] [--seed N]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/fp8_model.h"
#include "support/zyfa_test_support.h"

namespace {

using namespace zyfa;
using model::Denominator;
using model::KernelModelOptions;
using model::PMode;

struct Variant {
  const char* name;
  zyfa_dtype_t dtype;
  KernelModelOptions opt;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  KernelModelOptions o;
  o.denominator = Denominator::ROUNDED_P;
  v.push_back({"bf16", ZYFA_DTYPE_BF16, o});
  o.denominator = Denominator::UNROUNDED_P;
  v.push_back({"bf16/u", ZYFA_DTYPE_BF16, o});
  // Labels are string literals so that Variant can keep a plain pointer.
  static const char* labels[2][2][2] = {{{"exact+s", "exact+s/u"}, {"exact", "exact/u"}},
                                        {{"lean+s", "lean+s/u"}, {"lean", "lean/u"}}};
  for (int p = 0; p < 2; ++p) {
    for (int unscaled = 0; unscaled < 2; ++unscaled) {
      for (int unrounded = 0; unrounded < 2; ++unrounded) {
        KernelModelOptions f;
        f.p_mode = p ? PMode::LEAN : PMode::EXACT;
        f.block_scaling = !unscaled;
        f.denominator = unrounded ? Denominator::UNROUNDED_P : Denominator::ROUNDED_P;
        v.push_back({labels[p][unscaled][unrounded], ZYFA_DTYPE_FP8_E4M3, f});
      }
    }
  }
  return v;
}

// Fraction of (row, 64-key block) pairs whose largest probability lies more than 8 binades
// below the row's maximum, over every 8th row (from the fp64 scores).
double far_block_fraction(const test::AttnData& a) {
  const auto& c = a.cfg;
  const int64_t S = c.seqlen, dq = c.d_qk;
  const double scale = a.softmax_scale() * a.q_descale[0] * a.k_descale[0] / std::log(2.0);
  int64_t far = 0, total = 0;
  std::vector<double> t(S);
  for (int64_t s = 0; s < S; s += 8) {
    double mx = -INFINITY;
    for (int64_t j = 0; j <= s; ++j) {
      double d = 0;
      for (int64_t i = 0; i < dq; ++i) d += a.q_at(0, s, 0, i) * a.k_at(0, j, 0, i);
      t[j] = d * scale;
      mx = std::max(mx, t[j]);
    }
    for (int64_t j0 = 0; j0 <= s; j0 += 64) {
      double bm = -INFINITY;
      for (int64_t j = j0; j <= std::min(s, j0 + 63); ++j) bm = std::max(bm, t[j]);
      far += (mx - bm > 8.0);
      ++total;
    }
  }
  return total ? static_cast<double>(far) / total : 0.0;
}

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> v;
  for (const char* p = s; *p;) {
    v.push_back(std::strtoll(p, const_cast<char**>(&p), 10));
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> seqlens = {1024, 4096, 8192};
  int64_t heads = 2, heads_k = 1;
  uint64_t seed = 0;
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--seqlens") { seqlens = parse_list(next); ++i; }
    else if (a == "--heads") { heads = std::atoll(next); ++i; }
    else if (a == "--heads-k") { heads_k = std::atoll(next); ++i; }
    else if (a == "--seed") { seed = std::strtoull(next, nullptr, 0); have_seed = true; ++i; }
    else {
      std::fprintf(stderr, "usage: %s [--seqlens 1024,4096,8192] [--heads 2] [--heads-k 1] [--seed N]\n", argv[0]);
      return 2;
    }
  }
  if (!have_seed) seed = test::test_seed();
  if (heads < 1 || heads_k < 1 || heads % heads_k || seqlens.empty()) {
    std::fprintf(stderr, "bad --heads/--heads-k/--seqlens\n");
    return 2;
  }
  const std::vector<Variant> vs = variants();
  std::printf("zyfa-accuracy: rel RMS error vs fp64 attention on the same (quantized) inputs\n");
  std::printf("seed %llu, batch 1, heads %lld, heads_k %lld, causal\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(heads),
              static_cast<long long>(heads_k));
  std::printf("columns: bf16 = BF16 P; exact/lean = FP8 P; +s = per-64-key-block scaling; "
              "/u = denominator from unrounded P (default: sum of the rounded P)\n");
  std::printf("far = fraction of (row, 64-key block) pairs more than 8 binades below the row max\n");
  std::printf("lse = max |LSE error| (nats) of the kernels' FP8 choice (lean+s at d=128, exact+s at d=192)\n\n");
  std::printf("%-22s %5s", "inputs", "far");
  for (const auto& v : vs) std::printf(" %9s", v.name);
  std::printf(" %9s\n", "lse");

  struct InputKind { const char* label; test::Inputs in; double std; };
  const InputKind kinds[] = {{"gauss0.1", test::Inputs::GAUSSIAN, 0.1},
                             {"gauss1", test::Inputs::GAUSSIAN, 1.0},
                             {"real", test::Inputs::REALISTIC, 0.1}};
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t dq : {128, 192}) {
    for (const auto& k : kinds) {
      for (int64_t S : seqlens) {
        test::AttnConfig c;
        c.d_qk = dq;
        c.d_v = 128;
        c.seqlen = S;
        c.heads = heads;
        c.heads_k = heads_k;
        c.inputs = k.in;
        c.std = k.std;
        c.seed = seed ^ (static_cast<uint64_t>(dq) << 40) ^ (static_cast<uint64_t>(S) << 8) ^
                 static_cast<uint64_t>(k.in == test::Inputs::REALISTIC ? 1 : 0) ^
                 static_cast<uint64_t>(k.std * 16) << 4;
        // The same underlying values (same seed) as BF16 and as FP8.
        c.dtype = ZYFA_DTYPE_BF16;
        const test::AttnData bf = test::make_attn_data(c);
        const test::ReferenceResult bref = test::reference_fp64(bf);
        c.dtype = ZYFA_DTYPE_FP8_E4M3;
        const test::AttnData f8 = test::make_attn_data(c);
        const test::ReferenceResult fref = test::reference_fp64(f8);
        std::printf("%-22s %5.2f", fmt::format("{} d{} S{}", k.label, dq, S).c_str(),
                    far_block_fraction(f8));
        double lse_err = 0;
        for (const auto& v : vs) {
          const bool fp8 = v.dtype == ZYFA_DTYPE_FP8_E4M3;
          const test::AttnData& a = fp8 ? f8 : bf;
          const model::ModelResult r = model::run_kernel_model(a, v.opt);
          const test::CheckResult chk = test::check_output(
              a, fp8 ? fref : bref, r.out.data(), r.lse.data(), test::kernel_tolerance(a.cfg));
          std::printf(" %9.2e", chk.rel_rms);
          const bool kernel_choice = fp8 && v.opt.block_scaling &&
                                     v.opt.denominator == Denominator::ROUNDED_P &&
                                     v.opt.p_mode == (dq == 128 ? PMode::LEAN : PMode::EXACT);
          if (kernel_choice) lse_err = chk.lse_max_abs;
          std::fflush(stdout);
        }
        std::printf(" %9.2e\n", lse_err);
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\n(%.0f s)\n", secs);
  return 0;
}
