// The emulator's shortcuts for common cases against the general code they stand in for, bit
// for bit: the NaN-free v_min/v_max path, the uniform-selector v_perm_b32 path and the
// word-wide v_bitop3_b32 (exec_valu.cpp, valu_ops.h) against the pseudocode's rules.
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

// Uniform selectors of byte selects and constant bytes take the shortcut and give the
// pseudocode's bytes; per-lane selectors and sign-replicating selects are refused untouched.
TEST(EmuFastPaths, PermUniformMatchesPseudocode) {
  const uint64_t seed = zyfa::test::seed_for("EmuFastPaths/PermUniform");
  std::mt19937_64 rng(seed);
  const uint8_t byte_sels[] = {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 0x80, 0xFF};
  int failures = 0, taken = 0;
  for (int rep = 0; rep < 2000 && failures < 10; ++rep) {
    uint32_t a[64], b[64], c[64], out[64];
    for (int l = 0; l < 64; ++l) {
      a[l] = uint32_t(rng());
      b[l] = uint32_t(rng());
    }
    uint32_t sel = 0;
    for (int i = 0; i < 4; ++i) sel |= uint32_t(byte_sels[rng() % std::size(byte_sels)]) << (8 * i);
    const int kind = int(rng() % 4);  // 0, 1: shortcut; 2: a sign select; 3: one lane differs
    if (kind == 2) sel = (sel & ~0xFFu) | (8 + uint32_t(rng() % 4));
    for (int l = 0; l < 64; ++l) c[l] = sel;
    if (kind == 3) c[rng() % 64] ^= 1u << (rng() % 32);
    for (int l = 0; l < 64; ++l) out[l] = 0xDEADBEEFu;
    const bool took = perm_uniform(a, b, c, out);
    if (took != (kind < 2)) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << " rep " << rep << ": shortcut " << (took ? "taken" : "refused")
                    << " for selector kind " << kind;
      continue;
    }
    for (int l = 0; l < 64 && failures < 10; ++l) {
      const uint32_t want = took ? perm_b32(a[l], b[l], c[l]) : 0xDEADBEEFu;
      if (out[l] != want) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << " rep " << rep << " lane " << l << ": 0x" << std::hex << out[l]
                      << ", pseudocode 0x" << want << " (selector 0x" << c[l] << ")";
      }
    }
    taken += took;
  }
  EXPECT_GT(taken, 500);
}

// v_bitop3_b32 by minterms against its definition bit by bit, for every truth table.
TEST(EmuFastPaths, Bitop3MatchesBitByBitDefinition) {
  const uint64_t seed = zyfa::test::seed_for("EmuFastPaths/Bitop3");
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (uint32_t ttbl = 0; ttbl < 256 && failures < 10; ++ttbl) {
    for (int rep = 0; rep < 64; ++rep) {
      const uint32_t a = uint32_t(rng()), b = uint32_t(rng()), c = uint32_t(rng());
      uint32_t want = 0;
      for (int i = 0; i < 32; ++i) {
        const uint32_t idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        want |= ((ttbl >> idx) & 1) << i;
      }
      if (bitop3_b32(a, b, c, ttbl) != want && failures++ < 10)
        ADD_FAILURE() << "seed " << seed << ": table 0x" << std::hex << ttbl << " a 0x" << a << " b 0x" << b
                      << " c 0x" << c << ": 0x" << bitop3_b32(a, b, c, ttbl) << ", bit by bit 0x" << want;
    }
  }
}

}  // namespace
}  // namespace zyfa::emu
