// The study behind docs/accuracy.md, "FP8 quantization with rotation": FP8 attention error,
// end to end through zyfa_fp8_quantize and zyfa_fwd, against fp64 attention of the unquantized
// inputs, on q and k with outlier channels, without options, with the rotation, and with the
// rotation and K smoothing. Usage: zyfa-rotation-study [cpu|emu] [seeds]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support/rotation_quantize.h"

int main(int argc, char** argv) {
  using namespace zyfa::test;
  const zyfa_backend_t qb = argc > 1 && std::strcmp(argv[1], "emu") == 0 ? ZYFA_BACKEND_EMU : ZYFA_BACKEND_CPU;
  const int seeds = argc > 2 ? std::atoi(argv[2]) : 3;
  std::printf("quantize backend %s; attention on cpu; S = 512, H = 2; rel RMS error vs fp64 on BF16 inputs\n",
              zyfa_backend_name(qb));
  std::printf("%-5s %-9s %-6s %10s %10s %8s %12s %8s\n", "d_qk", "bulk std", "seed", "plain", "rotated", "ratio",
              "rot+smooth", "ratio");
  int fails = 0;
  for (int64_t d : {128, 192})
    for (double bulk : {0.15, 0.3, 0.5})
      for (int s = 1; s <= seeds; ++s) {
        E2eCase c;
        c.seqlen = 512;
        c.d_qk = d;
        c.bulk_std = bulk;
        c.seed = uint64_t(s) * 1000 + uint64_t(d);
        const E2eErrors e = e2e_rotation_errors(qb, c);
        if (!e.error.empty()) {
          std::fprintf(stderr, "%s\n", e.error.c_str());
          return 1;
        }
        fails += e.rotated > 0.6 * e.plain;
        std::printf("%-5lld %-9.2f %-6llu %10.5f %10.5f %8.2f %12.5f %8.2f\n", (long long)d, bulk,
                    (unsigned long long)c.seed, e.plain, e.rotated, e.rotated / e.plain, e.rotated_smoothed,
                    e.rotated_smoothed / e.plain);
      }
  std::printf("cases above the 0.6x criterion: %d\n", fails);
  return fails ? 1 : 0;
}
