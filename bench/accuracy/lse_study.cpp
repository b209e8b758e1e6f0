// The study behind docs/numerics.md, "LSE of the generated FP8 kernels": the worst-row LSE
// error against fp64 of the kernels' FP8 numerics (the CPU bit-model, which the kernels match
// within 10^-3 nats), with the LSE's sum as the kernels form it and with every block's rounded
// P, over many seeds of each input kind at both head dims: the most negative and the most
// positive error. "sink" is Gaussian std 1
// with four keys near the start of the sequence (keys 0-3) lifted 15-17 nats above the rest
// by 8 channels, so that rows far from those keys are dominated by a few keys outside their
// diagonal block, only one of which holds the row maximum.
//
//   zyfa-lse-study [seeds] [first_seed]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "host/numerics/e4m3.h"
#include "support/fp8_model.h"
#include "support/zyfa_test_support.h"

namespace {

using namespace zyfa;

struct Kind {
  const char* label;
  test::Inputs in;
  double std;
  bool sink;
};

// Channels 0-7 of every query hold 4 and those of keys 0-3 hold 6 - 0.25 j (in units of the
// tensors' descales, which make them exact e4m3 codes), so key j's score rises by
// 8 * 4 * (6 - 0.25 j) / sqrt(d_qk) times the descales' product over the other keys' channels.
void add_sink(test::AttnData& a) {
  const auto& c = a.cfg;
  const int64_t group = c.heads / c.heads_k;
  const int64_t* qs = a.q_stride;
  const int64_t* ks = a.k_stride;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < 8; ++i) {
      for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t h = 0; h < c.heads; ++h)
          a.q[b * qs[0] + s * qs[1] + h * qs[2] + i * qs[3]] =
              numerics::double_to_e4m3(4.0 / a.q_descale[b * c.heads_k + h / group], true).code;
      for (int64_t s = 0; s < std::min<int64_t>(4, c.seqlen); ++s)
        for (int64_t h = 0; h < c.heads_k; ++h)
          a.k[b * ks[0] + s * ks[1] + h * ks[2] + i * ks[3]] =
              numerics::double_to_e4m3((6.0 - 0.25 * s) / a.k_descale[b * c.heads_k + h], true).code;
    }
}

// The most negative and most positive LSE - fp64 over the rows of one input.
void lse_range(const test::AttnData& a, const test::ReferenceResult& ref, const model::KernelModelOptions& o,
               double* lo, double* hi) {
  const model::ModelResult r = model::run_kernel_model(a, o);
  for (size_t i = 0; i < r.lse.size(); ++i) {
    const double e = double(r.lse[i]) - ref.lse[i];
    *lo = std::min(*lo, e);
    *hi = std::max(*hi, e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 20;
  const uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 1000;
  const Kind kinds[] = {{"std0.1", test::Inputs::GAUSSIAN, 0.1, false},
                        {"std1", test::Inputs::GAUSSIAN, 1.0, false},
                        {"real", test::Inputs::REALISTIC, 0.1, false},
                        {"rising", test::Inputs::RISING, 0.1, false},
                        {"sink", test::Inputs::GAUSSIAN, 1.0, true}};
  std::printf("LSE - fp64 over all rows (nats, most negative/most positive), bit-model of the FP8 kernels,\n"
              "seeds %llu..%llu, S 160, 300 and 1000, 2 heads (1 KV head)\n",
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + seeds - 1));
  // before: every row's LSE from the rounded P; kernels: the kernels' choice (kernel_options:
  // a sequence's first 64 rows unrounded, the LSE offset)
  std::printf("%-7s %4s %17s %17s\n", "inputs", "d_qk", "before", "kernels");
  double lo_all[2] = {0, 0}, hi_all[2] = {0, 0}, lo_test[2] = {0, 0}, hi_test[2] = {0, 0};
  for (const Kind& k : kinds) {
    for (int64_t dq : {128, 192}) {
      double lo[2] = {0, 0}, hi[2] = {0, 0};
      for (int s = 0; s < seeds; ++s) {
        for (int64_t S : {160, 300, 1000}) {
          test::AttnConfig c = test::AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, dq, 2, 1, S).with(k.in, k.std);
          c.seed = first + s;
          test::AttnData a = test::make_attn_data(c);
          if (k.sink) add_sink(a);
          const test::ReferenceResult ref = test::reference_fp64(a);
          for (int i = 0; i < 2; ++i) {
            model::KernelModelOptions o = model::kernel_options(c);
            if (i == 0) o.lse_exact_rows = 0, o.lse_offset = 0;
            lse_range(a, ref, o, &lo[i], &hi[i]);
          }
        }
      }
      std::printf("%-7s %4lld", k.label, static_cast<long long>(dq));
      for (int i = 0; i < 2; ++i) {
        std::printf("  %+.4f/%+.4f", lo[i], hi[i]);
        lo_all[i] = std::min(lo_all[i], lo[i]), hi_all[i] = std::max(hi_all[i], hi[i]);
        if (!k.sink) lo_test[i] = std::min(lo_test[i], lo[i]), hi_test[i] = std::max(hi_test[i], hi[i]);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf("%-12s  %+.4f/%+.4f  %+.4f/%+.4f\n", "all but sink", lo_test[0], hi_test[0], lo_test[1], hi_test[1]);
  std::printf("%-12s  %+.4f/%+.4f  %+.4f/%+.4f\n", "all", lo_all[0], hi_all[0], lo_all[1], hi_all[1]);
  return 0;
}
