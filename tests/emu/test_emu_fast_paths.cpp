// The emulator's shortcuts for common cases against the general code they stand in for, bit
// for bit: the NaN-free v_min/v_max path (exec_valu.cpp) against the pseudocode's rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu/core/valu_ops.h"
#include "support/zyfa_test_support.h"

namespace zyfa::emu {
namespace {

bool is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

// Random non-NaN f32 bit patterns, with the values where min/max rules differ (signed zeros,
// infinities, subnormals, the largest finite values, equal magnitudes of both signs) often.
std::vector<uint32_t> non_nan_patterns(std::mt19937_64& rng, size_t n) {
  const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x80000001u,
                               0x007FFFFFu, 0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u};
  std::vector<uint32_t> v;
  while (v.size() < n) {
    const uint64_t r = rng();
    uint32_t u = uint32_t(r);
    if ((r >> 32) % 4 == 0) u = specials[(r >> 40) % std::size(specials)];
    if ((r >> 32) % 8 == 1 && !v.empty()) u = v.back() ^ 0x80000000u;  // the same magnitude negated
    if (!is_nan(u)) v.push_back(u);
  }
  return v;
}

TEST(EmuFastPaths, MinMaxOrderedMatchesPseudocode) {
  const uint64_t seed = zyfa::test::seed_for("EmuFastPaths/MinMaxOrdered");
  std::mt19937_64 rng(seed);
  const std::vector<uint32_t> a = non_nan_patterns(rng, 200000), b = non_nan_patterns(rng, 200000);
  int failures = 0;
  for (size_t i = 0; i < a.size() && failures < 10; ++i) {
    for (bool ieee : {false, true}) {
      const uint32_t mx = fmax32(a[i], b[i], ieee), mn = fmin32(a[i], b[i], ieee);
      if (max_ordered(a[i], b[i]) != mx || min_ordered(a[i], b[i]) != mn) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << ": a 0x" << std::hex << a[i] << " b 0x" << b[i] << " ieee " << ieee
                      << ": max 0x" << max_ordered(a[i], b[i]) << " (pseudocode 0x" << mx << "), min 0x"
                      << min_ordered(a[i], b[i]) << " (pseudocode 0x" << mn << ")";
      }
    }
  }
}

}  // namespace
}  // namespace zyfa::emu
