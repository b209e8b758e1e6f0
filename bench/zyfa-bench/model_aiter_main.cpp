// zyfa-model-aiter: the timing model's prediction for AITER's kernel at one configuration
// (calibration, docs/timing-model.md). Usage: zyfa-model-aiter S [H] [D] [CUS] [GQA]
// (GQA: query heads per K/V head, 1 = MHA)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model.h"
#include "../../tests/aiter/aiter_fmha_v3.h"

int main(int argc, char** argv) {
  zyfa::bench::ModelProblem m;
  if (argc < 2) {
    std::fprintf(stderr, "usage: zyfa-model-aiter S [H] [D] [CUS] [GQA]\n");
    return 2;
  }
  m.seqlen = std::atoll(argv[1]);
  m.heads = m.heads_k = argc > 2 ? std::atoll(argv[2]) : std::max<long long>(32, 262144 / m.seqlen);
  m.d_qk = argc > 3 ? std::atoll(argv[3]) : 128;
  m.cus = argc > 4 ? std::atoi(argv[4]) : 1;
  const long long gqa = argc > 5 ? std::atoll(argv[5]) : 1;
  if (gqa < 1 || m.heads % gqa != 0) {
    std::fprintf(stderr, "zyfa-model-aiter: GQA %lld does not divide H %lld\n", gqa, static_cast<long long>(m.heads));
    return 2;
  }
  m.heads_k = m.heads / gqa;
  const auto p = zyfa::bench::predict_aiter(zyfa::aiter::cache_dir(), m);
  std::printf("%s\n", p.json().c_str());
  return p.ok ? 0 : 1;
}
