// Transposing LDS reads of gfx950 (ds_read_b64_tr_b4/b8/b16, ds_read_b96_tr_b6) on fresh
// random bytes, and LDS reads whose destination registers leave the allocation.
//
// The expected value of every lane is built here from the documented picture rather than
// from the emulator's formula: the data the 16 lanes of a group read, taken lane after lane
// and element after element, fills an N x 16 tile row by row (N elements per lane); the
// instruction hands column l of that tile to lane l of the group, row k in element k (CDNA4
// ISA "MFMA Transpose Load from LDS"; Triton chooseLLDsReadB64TrLayout; docs/emulator.md).
#include <cstdio>
#include <random>

#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

// Element i (of `bits` bits) of the little-endian bit string `bytes`.
uint32_t elem(const uint8_t* bytes, unsigned i, unsigned bits) {
  uint32_t v = 0;
  for (unsigned b = 0; b < bits; ++b) {
    const unsigned bit = i * bits + b;
    v |= uint32_t((bytes[bit / 8] >> (bit % 8)) & 1) << b;
  }
  return v;
}

// What lane `lane` should hold: `dwords` dwords of `bits`-bit elements; lane j of the wave
// read `dwords * 4` bytes of `lds` at addr[j].
std::vector<uint32_t> expected(const std::vector<uint8_t>& lds, const uint32_t* addr, unsigned lane,
                               unsigned dwords, unsigned bits) {
  const unsigned n = dwords * 32 / bits, group = lane / 16 * 16;
  // The group's tile, filled row by row from the lanes' data in lane order.
  std::vector<std::vector<uint32_t>> tile(n, std::vector<uint32_t>(16));
  unsigned row = 0, col = 0;
  for (unsigned j = 0; j < 16; ++j) {
    for (unsigned e = 0; e < n; ++e) {
      tile[row][col] = elem(&lds[addr[group + j]], e, bits);
      if (++col == 16) {
        col = 0;
        ++row;
      }
    }
  }
  std::vector<uint32_t> out(dwords, 0);
  for (unsigned k = 0; k < n; ++k) {
    const uint32_t v = tile[k][lane % 16];
    for (unsigned b = 0; b < bits; ++b) {
      const unsigned bit = k * bits + b;
      out[bit / 32] |= ((v >> b) & 1) << (bit % 32);
    }
  }
  return out;
}

TEST(EmuDsTranspose, AllFormsOnRandomBytes) {
  TestKernels k("ds_transpose");
  const uint64_t seed = std::random_device{}();
  std::printf("EmuDsTranspose seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (uint32_t lane_xor : {0u, 5u, 0x2Bu}) {
    SCOPED_TRACE("lane xor " + std::to_string(lane_xor) + ", seed " + std::to_string(seed));
    std::vector<uint32_t> in(256);
    for (auto& w : in) w = uint32_t(rng());
    std::vector<uint8_t> lds(1024);
    std::memcpy(lds.data(), in.data(), 1024);
    const auto r = k.run("k_ds_tr", 64 * 16, in, {lane_xor}, 64, 1, rng() | 1);
    ASSERT_TRUE(r.result.ok) << r.result.error;
    uint32_t a0[64], a8[64];
    for (unsigned l = 0; l < 64; ++l) {
      a0[l] = 16 * (l ^ lane_xor);
      a8[l] = a0[l] + 8;
    }
    struct Form {
      const char* name;
      unsigned first, dwords, bits;
      const uint32_t* addr;
    };
    const Form forms[] = {{"tr_b16", 0, 2, 16, a0}, {"tr_b8", 2, 2, 8, a8}, {"tr_b4", 4, 2, 4, a0},
                          {"tr_b6", 6, 3, 6, a0},   {"tr_b16 into AGPRs", 9, 2, 16, a8}};
    for (const Form& f : forms) {
      for (unsigned l = 0; l < 64; ++l) {
        const std::vector<uint32_t> want = expected(lds, f.addr, l, f.dwords, f.bits);
        for (unsigned d = 0; d < f.dwords; ++d)
          ASSERT_EQ(r.out[l * 16 + f.first + d], want[d]) << f.name << " lane " << l << " dword " << d;
      }
    }
  }
}

// The rule on a pattern small enough to check by eye: LDS word i (16-bit) = i, no xor.
// Lane j reads 16 bytes apart, its 4 elements are the 16-bit words 8j..8j+3; tr_b16 lane 5
// of group 0 receives column 5: row k from lane 4k + 1, element 1, i.e. word 8(4k + 1) + 1.
TEST(EmuDsTranspose, B16KnownPattern) {
  TestKernels k("ds_transpose");
  std::vector<uint32_t> in(256);
  for (uint32_t i = 0; i < 256; ++i) in[i] = (2 * i) | ((2 * i + 1) << 16);  // 16-bit word w = w
  const auto r = k.run("k_ds_tr", 64 * 16, in, {0});
  ASSERT_TRUE(r.result.ok) << r.result.error;
  // Lane l reads 16 bytes apart (8 words), so lane j's 4 words are 8j..8j+3.
  for (unsigned l = 0; l < 64; ++l) {
    const unsigned g = l / 16 * 16, c = l % 16;
    uint32_t w[4];
    for (unsigned kk = 0; kk < 4; ++kk) w[kk] = 8 * (g + 4 * kk + c / 4) + c % 4;
    EXPECT_EQ(r.out[l * 16 + 0], w[0] | (w[1] << 16)) << "lane " << l;
    EXPECT_EQ(r.out[l * 16 + 1], w[2] | (w[3] << 16)) << "lane " << l;
  }
}

TEST(EmuDsTranspose, PartlyActiveGroupFaults) {
  TestKernels k("ds_transpose");
  expect_fault(k.run("k_ds_tr_exec", 16, {}, {0, 0x0000FFF0u}), {"partly inactive", "lanes 0..15"});
  // Whole groups off is fine.
  const auto good = k.run("k_ds_tr_exec", 16, {}, {0, 0xFFFF0000u});
  EXPECT_TRUE(good.result.ok) << good.result.error;
}

TEST(EmuDsTranspose, UnalignedAddressFaults) {
  TestKernels k("ds_transpose");
  expect_fault(k.run("k_ds_tr_unaligned", 16), {"not aligned to 8 bytes"});
}

TEST(EmuDsDestination, PastTheAllocationFaultsAtIssue) {
  TestKernels k("ds_transpose");
  struct Case {
    const char* kernel;
    const char* what;
  };
  for (const Case& c : {Case{"k_ds_dst_past_vgprs", "v62..v65 beyond the 64 VGPRs"},
                        Case{"k_ds_tr_dst_past_vgprs", "v62..v64 beyond the 64 VGPRs"},
                        Case{"k_ds_dst_past_agprs", "a2..a5 beyond the 4 AGPRs"}}) {
    const auto r = k.run(c.kernel, 16);
    ASSERT_FALSE(r.result.ok) << c.kernel;
    EXPECT_NE(r.result.error.find(c.what), std::string::npos) << r.result.error;
  }
}

}  // namespace
}  // namespace zyfa::emu::test
