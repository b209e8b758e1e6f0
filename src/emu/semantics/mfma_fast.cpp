// e4m3 x e4m3 and bf16 x bf16 MFMAs without the general path's per-term bookkeeping.
//
// Why a plain double sum of a K block is exact here. Every finite OCP e4m3fn value is an
// integer multiple of 2^-9 (the subnormal step) of magnitude at most 448 = 229376 * 2^-9, so
// it is n * 2^-9 with |n| <= 229376 < 2^18. A product of two is n1*n2 * 2^-18 with
// |n1*n2| <= 229376^2 < 2^35.61. A sum of at most 64 such products (the K blocks here have 32)
// is an integer multiple of 2^-18 of magnitude below 64 * 2^35.61 < 2^41.7, in units of 2^-18:
// every partial sum, in any order and with or without fused multiply-adds, is an integer below
// 2^42 times 2^-18, which a double (53-bit significand, exponents down to 2^-1022) holds
// exactly. So the block's dot product is exact. Multiplying by the block's E8M0 scale 2^e
// (|e| <= 254) keeps it exact: the nonzero magnitudes lie in [2^-18 * 2^-254, 2^24 * 2^254],
// inside the normal double range. (e5m2 does not qualify: its values are n * 2^-16 with
// |n| < 2^32, products need 64 bits; nor do bf16 products, whose exponents span 2^-266..2^256.)
//
// What is left is one correctly rounded f32 of acc + s (acc the f32 running value, s the
// exact scaled dot product), the general path's single rounding per block. The double sum
// acc + s may itself round, and rounding twice (to double, then to f32) can differ from once.
// TwoSum gives the double sum's exact error; when it is nonzero and the double is even, the
// double is moved one ulp toward the exact value, which gives the exact sum rounded to odd in
// 53 bits. Rounding to odd at a precision of at least p + 2 bits followed by round-to-nearest-
// even at p bits equals one round-to-nearest-even (Boldo and Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008); f32 needs
// p = 24 (fewer for subnormal results, whose grid 2^-149 is far coarser than the double's
// there), and the overflow threshold to infinity is such a rounding boundary too.
//
// bf16 x bf16: each product is exact in double (8-bit significands give 16 bits), but a sum of
// 16 or 32 of them need not be (exponents span 2^-266..2^256). Per output the bit range of
// the products follows from the bit ranges of A's row and B's column: when it spans at most
// 46 bits, every partial sum of up to 32 products is an integer below 2^51 times the lowest
// bit, exact in double, and the running value is added with the same single rounding as
// above. Otherwise that output takes the general path's exact sum (exact_f32_sum).
#include "emu/semantics/mfma_fast.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "emu/core/fp_bits.h"
#include "emu/semantics/exact_sum.h"
#include "emu/semantics/mfma_layout.h"

namespace zyfa::emu {
namespace {

constexpr uint32_t kCanonicalNan = 0x7FC00000u;
constexpr int kMaxElems = 2048;  // m * k of every shape (32 x 64, 16 x 128)

struct E4m3Table {
  std::array<double, 256> value;
  E4m3Table() {
    for (uint32_t c = 0; c < 256; ++c) value[c] = mfma_layout::decode(mfma_layout::Elem::E4M3, c);
  }
};

const E4m3Table& e4m3_table() {
  static const E4m3Table t;
  return t;
}

// Where each (lane, element) of an operand goes in the decoded matrix, computed once per shape
// instead of once per element per instruction: `row_major` = mn * k + kk (A, row by row),
// `k_major` = kk * mn_count + mn (B, K row by K row).
struct OperandMap {
  int mn, k, per_lane;
  bool chunked;
  std::vector<uint16_t> row_major, k_major;  // [lane * per_lane + e]
  std::vector<uint8_t> row;                  // mn of [lane * per_lane + e]
  // The same for byte elements of register-major registers (MfmaArgs::register_major): byte
  // b of register r of a lane is element 4 * r + b, stored at byte (r * 64 + lane) * 4 + b.
  std::vector<uint16_t> row_major_rm, k_major_rm;
  // The four elements of a register are consecutive in K (operand_pos), so byte b of a
  // register-major dword lands at the dword's first index + b (row-major) or + b * mn
  // (K-major); checked when the map is built, false leaves decoding byte by byte.
  bool dwords_consecutive = true;
  // Every eight consecutive register-major dwords have consecutive K-major indices (a row of
  // B's K-major matrix: eight columns of one K): their bytes decode eight at a time.
  bool k_major_rows8 = true;
};

const OperandMap& operand_map(int mn, int k, int per_lane, bool chunked) {
  thread_local std::vector<std::unique_ptr<OperandMap>> cache;
  for (const auto& m : cache) {
    if (m->mn == mn && m->k == k && m->per_lane == per_lane && m->chunked == chunked) return *m;
  }
  auto m = std::make_unique<OperandMap>();
  m->mn = mn;
  m->k = k;
  m->per_lane = per_lane;
  m->chunked = chunked;
  m->row_major.resize(64 * per_lane);
  m->k_major.resize(64 * per_lane);
  m->row.resize(64 * per_lane);
  m->row_major_rm.resize(64 * per_lane);
  m->k_major_rm.resize(64 * per_lane);
  for (int lane = 0; lane < 64; ++lane) {
    for (int e = 0; e < per_lane; ++e) {
      const mfma_layout::Pos p = mfma_layout::operand_pos(mn, k, per_lane, chunked, lane, e);
      m->row_major[lane * per_lane + e] = static_cast<uint16_t>(p.mn * k + p.k);
      m->k_major[lane * per_lane + e] = static_cast<uint16_t>(p.k * mn + p.mn);
      m->row[lane * per_lane + e] = static_cast<uint8_t>(p.mn);
      const int rm = ((e / 4) * 64 + lane) * 4 + e % 4;
      if (rm < 64 * per_lane) {
        m->row_major_rm[rm] = m->row_major[lane * per_lane + e];
        m->k_major_rm[rm] = m->k_major[lane * per_lane + e];
      }
    }
  }
  for (int t = 0; t < 64 * per_lane; ++t) {
    const int b = t % 4;
    m->dwords_consecutive &= per_lane % 4 == 0 && m->row_major_rm[t] == m->row_major_rm[t - b] + b &&
                             m->k_major_rm[t] == m->k_major_rm[t - b] + b * mn;
  }
  for (int t = 0; t < 16 * per_lane; ++t)
    m->k_major_rows8 &= per_lane % 4 == 0 && 16 * per_lane % 8 == 0 &&
                        m->k_major_rm[4 * t] == m->k_major_rm[4 * (t - t % 8)] + t % 8;
  cache.push_back(std::move(m));
  return *cache.back();
}

// Output slot of D[i][j], row by row, per M (16 or 32): lane * d_regs + register, or
// register * 64 + lane for register-major registers.
const uint16_t* output_slots(int m, bool register_major) {
  struct Slots {
    std::array<uint16_t, 256> m16, m16_rm;
    std::array<uint16_t, 1024> m32, m32_rm;
    Slots() {
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
          const mfma_layout::OutPos p = mfma_layout::output_pos(16, i, j);
          m16[i * 16 + j] = static_cast<uint16_t>(p.lane * 4 + p.reg);
          m16_rm[i * 16 + j] = static_cast<uint16_t>(p.reg * 64 + p.lane);
        }
      for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 32; ++j) {
          const mfma_layout::OutPos p = mfma_layout::output_pos(32, i, j);
          m32[i * 32 + j] = static_cast<uint16_t>(p.lane * 16 + p.reg);
          m32_rm[i * 32 + j] = static_cast<uint16_t>(p.reg * 64 + p.lane);
        }
    }
  };
  static const Slots slots;
  if (register_major) return m == 16 ? slots.m16_rm.data() : slots.m32_rm.data();
  return m == 16 ? slots.m16.data() : slots.m32.data();
}

// True when any byte of the operand is an e4m3 NaN code (0x7F, 0xFF), a word at a time: a
// byte of w & 0x7F7F7F7F equals 0x7F exactly when the same byte of its xor with 0x7F7F7F7F is
// zero (the usual zero-byte test).
bool has_nan_code(const uint32_t* regs, int words) {
  uint32_t any = 0;
  for (int t = 0; t < words; ++t) {
    const uint32_t v = (regs[t] & 0x7F7F7F7Fu) ^ 0x7F7F7F7Fu;
    any |= (v - 0x01010101u) & ~v & 0x80808080u;
  }
  return any != 0;
}

// Decodes one operand (no NaN codes) through `index` (a row_major or k_major map, the _rm
// one for register-major registers), byte by byte in storage order.
void decode_operand(const std::vector<uint16_t>& index, const uint32_t* regs, double* out) {
  const double* table = e4m3_table().value.data();
  const int n = static_cast<int>(index.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(regs);
  for (int t = 0; t < n; ++t) out[index[t]] = table[bytes[t]];
}

// The same for register-major registers whose four bytes land `stride` apart from the
// dword's first index (OperandMap::dwords_consecutive): one index per dword.
void decode_dwords(const std::vector<uint16_t>& index, int stride, const uint32_t* regs, double* out) {
  const double* table = e4m3_table().value.data();
  const int words = static_cast<int>(index.size()) / 4;
  for (int t = 0; t < words; ++t) {
    const uint32_t v = regs[t];
    double* o = out + index[4 * t];
    o[0] = table[v & 0xFF];
    o[stride] = table[(v >> 8) & 0xFF];
    o[2 * stride] = table[(v >> 16) & 0xFF];
    o[3 * stride] = table[v >> 24];
  }
}

#if defined(__x86_64__)
// GCC 12's AVX-512 headers pass _mm512_undefined_*() through, which its own
// -Wmaybe-uninitialized reports at every use of these intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Eight e4m3 codes (one per 64-bit lane, no NaN codes) to the doubles of e4m3_table, bit for
// bit: normal codes from their fields (double exponent e + 1016, the three mantissa bits at
// the top of the double's), subnormal ones (exponent field 0, value m * 2^-9) from a table of
// eight, then the sign.
__attribute__((target("avx512f"))) inline __m512d e4m3_decode8(__m512i c) {
  const __m512i e = _mm512_and_si512(_mm512_srli_epi64(c, 3), _mm512_set1_epi64(15));
  const __m512i m = _mm512_and_si512(c, _mm512_set1_epi64(7));
  const __m512i normal =
      _mm512_or_si512(_mm512_slli_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1016)), 52), _mm512_slli_epi64(m, 49));
  const __m512d subnormals = _mm512_setr_pd(0.0, 0x1p-9, 0x2p-9, 0x3p-9, 0x4p-9, 0x5p-9, 0x6p-9, 0x7p-9);
  const __m512i sub = _mm512_castpd_si512(_mm512_permutexvar_pd(m, subnormals));
  const __mmask8 is_sub = _mm512_testn_epi64_mask(c, _mm512_set1_epi64(0x78));
  const __m512i sign = _mm512_slli_epi64(_mm512_and_si512(c, _mm512_set1_epi64(0x80)), 56);
  return _mm512_castsi512_pd(_mm512_or_si512(_mm512_mask_blend_epi64(is_sub, normal, sub), sign));
}

// decode_dwords with AVX-512: A (stride 1) two dwords at a time, each dword's four values
// consecutive; B (stride > 1, rows8) byte b of eight dwords at once, eight consecutive values
// of K row b. False when the layout allows neither (nothing written).
__attribute__((target("avx512f"))) bool decode_dwords_avx512(const std::vector<uint16_t>& index, int stride,
                                                            bool rows8, const uint32_t* regs, double* out) {
  const int words = static_cast<int>(index.size()) / 4;
  if (stride == 1 && words % 2 == 0) {
    for (int t = 0; t < words; t += 2) {
      const __m512i c = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(regs + t)));
      const __m512d v = e4m3_decode8(c);
      _mm256_storeu_pd(out + index[4 * t], _mm512_castpd512_pd256(v));
      _mm256_storeu_pd(out + index[4 * (t + 1)], _mm512_extractf64x4_pd(v, 1));
    }
    return true;
  }
  if (stride > 1 && rows8 && words % 8 == 0) {
    const __m256i byte = _mm256_set1_epi32(0xFF);
    for (int t = 0; t < words; t += 8) {
      const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(regs + t));
      double* o = out + index[4 * t];
      _mm512_storeu_pd(o, e4m3_decode8(_mm512_cvtepu32_epi64(_mm256_and_si256(d, byte))));
      _mm512_storeu_pd(o + stride, e4m3_decode8(_mm512_cvtepu32_epi64(_mm256_and_si256(_mm256_srli_epi32(d, 8), byte))));
      _mm512_storeu_pd(o + 2 * stride,
                       e4m3_decode8(_mm512_cvtepu32_epi64(_mm256_and_si256(_mm256_srli_epi32(d, 16), byte))));
      _mm512_storeu_pd(o + 3 * stride, e4m3_decode8(_mm512_cvtepu32_epi64(_mm256_srli_epi32(d, 24))));
    }
    return true;
  }
  return false;
}
#pragma GCC diagnostic pop
#endif

// A cheap summary of an operand's register bytes (eight dwords spread over it): operands that
// differ almost always differ here.
uint64_t fingerprint(const uint32_t* regs, int words) {
  uint64_t h = 0;
  for (int i = 0; i < 8; ++i) h = (h ^ regs[(i * words) / 8]) * 0x9E3779B97F4A7C15ull;
  return h;
}

// Decoded operands of recent MFMAs by their register bytes. An attention kernel multiplies
// the same operand several times in a row (Q against every K tile, P against several V
// tiles), and comparing 2 KiB of register bytes costs far less than decoding them again.
struct DecodedOperand {
  uint64_t key = 0;  // fingerprint(raw): most entries are passed over without a comparison
  const std::vector<uint16_t>* index = nullptr;
  int stride = 0;
  uint8_t format = 0;  // 0 e4m3; bf16 1 lane-major, 2 register-major registers
  std::array<int, 32> msb, lsb;  // bf16: bit range per row (A) or column (B), decode_bf16
  // e4m3, row-major A: every row of `row_len` values equals the first (row_len 0: not looked at).
  int row_len = 0;
  bool rows_same = false;
  std::array<uint32_t, kMaxElems / 4> raw;
  alignas(64) std::array<double, kMaxElems> value;
};

struct DecodeCache {
  static constexpr int kEntries = 32;
  std::array<DecodedOperand, kEntries> entry;
  int used = 0, next = 0;
};

// The operand decoded through `index` (register-major dwords whose bytes land `stride`
// apart when stride > 0, byte by byte through the map otherwise), from the cache or decoded
// into it. The pointer stays valid until kEntries more operands were decoded.
// Only operands without NaN codes are decoded and kept: nullptr for one with a NaN code
// (nothing kept), which the general path takes.
// With `row_len` > 0 (a row-major operand), *rows_same tells whether all its rows of row_len
// values are the same (the ones operand of a row-sum MFMA), found once per cached operand.
const double* decoded(DecodeCache& c, const std::vector<uint16_t>& index, int stride, bool rows8,
                      const uint32_t* regs, int row_len = 0, bool* rows_same = nullptr) {
  const size_t bytes = index.size();
  const uint64_t key = fingerprint(regs, int(bytes / 4));
  DecodedOperand* found = nullptr;
  for (int i = 0; i < c.used && !found; ++i) {
    DecodedOperand& d = c.entry[i];
    if (d.key == key && d.index == &index && d.stride == stride && d.format == 0 &&
        std::memcmp(d.raw.data(), regs, bytes) == 0)
      found = &d;
  }
  if (!found) {
    if (has_nan_code(regs, int(bytes / 4))) return nullptr;
    DecodedOperand& d = c.entry[c.next];
    d.key = key;
    d.format = 0;
    d.row_len = 0;
    c.next = (c.next + 1) % DecodeCache::kEntries;
    c.used = std::max(c.used, c.next == 0 ? DecodeCache::kEntries : c.next);
    d.index = &index;
    d.stride = stride;
    std::memcpy(d.raw.data(), regs, bytes);
#if defined(__x86_64__)
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if (!(stride > 0 && avx512 && decode_dwords_avx512(index, stride, rows8, regs, d.value.data())))
#endif
    {
      if (stride > 0) decode_dwords(index, stride, regs, d.value.data());
      else decode_operand(index, regs, d.value.data());
    }
    found = &d;
  }
  if (row_len > 0 && found->row_len != row_len) {
    const double* v = found->value.data();
    const size_t rows = bytes / size_t(row_len);
    bool same = true;
    for (size_t i = 1; i < rows && same; ++i) same = std::memcmp(v + i * row_len, v, sizeof(double) * row_len) == 0;
    found->rows_same = same;
    found->row_len = row_len;
  }
  if (rows_same) *rows_same = row_len > 0 && found->rows_same;
  return found->value.data();
}

// dots[i * N + j] = sum over the block of a[i][k] * bt[k][j], starting from +0 (an exact zero
// sum is +0, as in the general path). Exact in any order (see the top of the file), so the
// compiler may vectorize over j freely.
// With `fused`, a*b + acc is one fused multiply-add: the same value, since both the product
// and the sum are exact.
template <int N, bool fused>
inline __attribute__((always_inline)) void block_dots_impl(const double* a, int k_total,
                                                          const double* bt, int m, int k0,
                                                          int len, double* dots) {
  for (int i = 0; i < m; ++i) {
    double acc[N] = {};
    const double* arow = a + i * k_total;
    for (int kk = k0; kk < k0 + len; ++kk) {
      const double x = arow[kk];
      const double* brow = bt + kk * N;
      for (int j = 0; j < N; ++j) acc[j] = fused ? __builtin_fma(x, brow[j], acc[j]) : acc[j] + x * brow[j];
    }
    for (int j = 0; j < N; ++j) dots[i * N + j] = acc[j];
  }
}

template <int N>
void block_dots_generic(const double* a, int k_total, const double* bt, int m, int k0, int len,
                        double* dots) {
  block_dots_impl<N, false>(a, k_total, bt, m, k0, len, dots);
}

#if defined(__x86_64__)
// Register-blocked kernels: two rows (AVX2) or four (AVX-512) against 16 or 32 columns kept in
// accumulator registers for the whole block, B's row read once per K step for all of them.
// m is 16 or 32, N 16 or 32.
template <int N>
__attribute__((target("avx2,fma"))) void block_dots_avx2(const double* a, int k_total, const double* bt, int m,
                                                         int k0, int len, double* dots) {
  for (int jh = 0; jh < N; jh += 16) {
    for (int i = 0; i < m; i += 2) {
      __m256d acc0[4], acc1[4];
      for (int c = 0; c < 4; ++c) acc0[c] = acc1[c] = _mm256_setzero_pd();
      const double* a0 = a + i * k_total;
      const double* a1 = a0 + k_total;
      for (int kk = k0; kk < k0 + len; ++kk) {
        const __m256d x0 = _mm256_broadcast_sd(a0 + kk), x1 = _mm256_broadcast_sd(a1 + kk);
        const double* b = bt + kk * N + jh;
        for (int c = 0; c < 4; ++c) {
          const __m256d bv = _mm256_loadu_pd(b + 4 * c);
          acc0[c] = _mm256_fmadd_pd(x0, bv, acc0[c]);
          acc1[c] = _mm256_fmadd_pd(x1, bv, acc1[c]);
        }
      }
      for (int c = 0; c < 4; ++c) {
        _mm256_storeu_pd(dots + i * N + jh + 4 * c, acc0[c]);
        _mm256_storeu_pd(dots + (i + 1) * N + jh + 4 * c, acc1[c]);
      }
    }
  }
}

template <int N>
__attribute__((target("avx512f"))) void block_dots_avx512(const double* a, int k_total, const double* bt, int m,
                                                          int k0, int len, double* dots) {
  constexpr int kVecs = N / 8;
  for (int i = 0; i < m; i += 4) {
    __m512d acc[4][kVecs];
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < kVecs; ++c) acc[r][c] = _mm512_setzero_pd();
    const double* ar = a + i * k_total;
    for (int kk = k0; kk < k0 + len; ++kk) {
      const double* b = bt + kk * N;
      __m512d bv[kVecs];
      for (int c = 0; c < kVecs; ++c) bv[c] = _mm512_loadu_pd(b + 8 * c);
      for (int r = 0; r < 4; ++r) {
        const __m512d x = _mm512_set1_pd(ar[r * k_total + kk]);
        for (int c = 0; c < kVecs; ++c) acc[r][c] = _mm512_fmadd_pd(x, bv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < kVecs; ++c) _mm512_storeu_pd(dots + (i + r) * N + 8 * c, acc[r][c]);
  }
}
#endif

void block_dots(int n, const double* a, int k_total, const double* bt, int m, int k0, int len,
                double* dots) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512 && m % 4 == 0) {
    (n == 32 ? block_dots_avx512<32> : block_dots_avx512<16>)(a, k_total, bt, m, k0, len, dots);
    return;
  }
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && m % 2 == 0) {
    (n == 32 ? block_dots_avx2<32> : block_dots_avx2<16>)(a, k_total, bt, m, k0, len, dots);
    return;
  }
#endif
  (n == 32 ? block_dots_generic<32> : block_dots_generic<16>)(a, k_total, bt, m, k0, len, dots);
}

// The bit casts of emu/core/fp_bits.h, inline in the vectorized loops below.
uint64_t double_bits(double d) { return as_u64(d); }
double double_from(uint64_t b) { return as_f64(b); }
float f32_of(uint32_t bits) { return as_f32(bits); }
uint32_t bits_of(float f) { return as_u32(f); }

// f32 bits of acc + s rounded once to nearest even, for a finite acc and an exact finite s.
// Written without branches so that the loop over a row of outputs vectorizes.
inline uint32_t add_rounded_once(uint32_t acc_bits, double s) {
  const double x = static_cast<double>(f32_of(acc_bits));
  const double sum = x + s;
  const double bv = sum - x;  // TwoSum (Knuth): err is exactly (x + s) - sum
  const double err = (x - (sum - bv)) + (s - bv);
  // When the double sum was rounded (err != 0) and is even, step one ulp toward the exact
  // value: the exact sum rounded to odd. sum is nonzero then (a zero double sum is exact), and
  // a step of the bit pattern moves the magnitude by one ulp, also across a power of two.
  const uint64_t bits = double_bits(sum);
  const uint64_t even_inexact = static_cast<uint64_t>((err != 0.0) & ((bits & 1u) == 0));
  const uint64_t away = static_cast<uint64_t>((err > 0.0) == (sum > 0.0));
  const uint64_t odd = bits + even_inexact * (2 * away - 1);
  return bits_of(static_cast<float>(double_from(odd)));
}

// What the general path gives for a non-finite running value plus a finite block sum:
// infinity stays, a NaN becomes the canonical quiet NaN.
inline uint32_t nonfinite_plus_finite(uint32_t acc_bits) {
  return (acc_bits & 0x7FFFFFu) ? kCanonicalNan : acc_bits;
}

inline bool is_nonfinite(uint32_t bits) { return (bits & 0x7F800000u) == 0x7F800000u; }

// Whether any of n f32 bit patterns is an infinity or NaN, in a form that vectorizes: the
// exponent field plus one exponent step reaches bit 31 exactly when the field is all ones.
bool any_nonfinite(const uint32_t* bits, int n) {
  uint32_t any = 0;
  for (int t = 0; t < n; ++t) any |= (bits[t] & 0x7F800000u) + 0x00800000u;
  return (any & 0x80000000u) != 0;
}

// One row of running values plus the row's scaled dot products, all finite. The AVX2 build of
// the same loop handles four outputs per instruction.
inline __attribute__((always_inline)) void combine_row_impl(uint32_t* row, const double* dots,
                                                           double as, const double* bs, int n) {
  // Two exact power-of-two factors (each within 2^+-127, the dot within 2^-18..2^24): the
  // product is exact and the same as scaling by 2^(ea + eb) at once.
  for (int j = 0; j < n; ++j) row[j] = add_rounded_once(row[j], dots[j] * as * bs[j]);
}

void combine_row_generic(uint32_t* row, const double* dots, double as, const double* bs, int n) {
  combine_row_impl(row, dots, as, bs, n);
}

#if defined(__x86_64__)
// The same steps as add_rounded_once, four outputs at a time (the compiler does not vectorize
// the scalar form: its bit-pattern step mixes integer and double lanes).
__attribute__((target("avx2"))) void combine_row_avx2(uint32_t* row, const double* dots, double as,
                                                      const double* bs, int n) {
  const __m256d vas = _mm256_set1_pd(as), zero = _mm256_setzero_pd();
  const __m256i one = _mm256_set1_epi64x(1), minus_one = _mm256_set1_epi64x(-1);
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const __m256d x = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j))));
    const __m256d sv = _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(dots + j), vas), _mm256_loadu_pd(bs + j));
    const __m256d sum = _mm256_add_pd(x, sv);
    const __m256d bv = _mm256_sub_pd(sum, x);
    const __m256d err = _mm256_add_pd(_mm256_sub_pd(x, _mm256_sub_pd(sum, bv)), _mm256_sub_pd(sv, bv));
    const __m256i bits = _mm256_castpd_si256(sum);
    const __m256i inexact = _mm256_castpd_si256(_mm256_cmp_pd(err, zero, _CMP_NEQ_OQ));
    const __m256i even = _mm256_cmpeq_epi64(_mm256_and_si256(bits, one), _mm256_setzero_si256());
    const __m256i err_pos = _mm256_castpd_si256(_mm256_cmp_pd(err, zero, _CMP_GT_OQ));
    const __m256i sum_pos = _mm256_castpd_si256(_mm256_cmp_pd(sum, zero, _CMP_GT_OQ));
    const __m256i away = _mm256_cmpeq_epi64(err_pos, sum_pos);
    const __m256i step = _mm256_blendv_epi8(minus_one, one, away);
    const __m256i odd = _mm256_add_epi64(bits, _mm256_and_si256(_mm256_and_si256(inexact, even), step));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row + j),
                     _mm_castps_si128(_mm256_cvtpd_ps(_mm256_castsi256_pd(odd))));
  }
  for (; j < n; ++j) row[j] = add_rounded_once(row[j], dots[j] * as * bs[j]);
}

// Bits of 2^-126 (the least normal f32) and of the largest finite f32 as doubles: |sum| lies
// in between when its bits minus the first are at most the difference (unsigned).
constexpr long long kF32MinNormalBits = 0x3810000000000000ll;
constexpr long long kF32NormalSpanBits = 0x47EFFFFFE0000000ll - kF32MinNormalBits + 1;

// The same eight outputs at a time, the round-to-odd step through lane masks, and running
// values that are infinities or NaNs handled as the general path does (outside the range, so
// in the exact step).
__attribute__((target("avx512f"))) void combine_row_avx512(uint32_t* row, const double* dots, double as,
                                                          const double* bs, int n) {
  const __m512d vas = _mm512_set1_pd(as), zero = _mm512_setzero_pd();
  const __m512i one = _mm512_set1_epi64(1);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    // The maskz forms: the plain ones trip GCC's maybe-uninitialized warning on their
    // undefined pass-through operand.
    const __m512d x =
        _mm512_maskz_cvtps_pd(0xFF, _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j))));
    const __m512d sv = _mm512_mul_pd(_mm512_mul_pd(_mm512_loadu_pd(dots + j), vas), _mm512_loadu_pd(bs + j));
    const __m512d sum = _mm512_add_pd(x, sv);
    // The double sum rounded to f32 is the exact sum rounded once unless the double sum is an
    // f32 rounding midpoint (low 29 bits 1 followed by zeros) that the exact sum need not be,
    // or lies outside the normal f32 range (a subnormal result rounds at 2^-149, whose
    // midpoints are not the low 29 bits; beyond the largest finite f32 it may overflow): only
    // then is the round-to-odd step below needed (rare; test_mfma_fast_path.cpp builds both
    // kinds of midpoints).
    const __m512i sum_bits = _mm512_castpd_si512(sum);
    const __m512i magnitude = _mm512_and_si512(sum_bits, _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll));
    const __mmask8 midpoint = _mm512_cmpeq_epi64_mask(_mm512_and_si512(sum_bits, _mm512_set1_epi64(0x1FFFFFFF)),
                                                      _mm512_set1_epi64(0x10000000));
    // |sum| in [2^-126, largest finite f32] as one unsigned compare; zero is exact.
    const __mmask8 outside =
        _mm512_cmpge_epu64_mask(_mm512_sub_epi64(magnitude, _mm512_set1_epi64(kF32MinNormalBits)),
                                _mm512_set1_epi64(kF32NormalSpanBits)) &
        _mm512_test_epi64_mask(magnitude, magnitude);
    if ((midpoint | outside) == 0) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + j), _mm256_castps_si256(_mm512_maskz_cvtpd_ps(0xFF, sum)));
      continue;
    }
    const __m512d bv = _mm512_sub_pd(sum, x);
    const __m512d err = _mm512_add_pd(_mm512_sub_pd(x, _mm512_sub_pd(sum, bv)), _mm512_sub_pd(sv, bv));
    const __m512i bits = _mm512_castpd_si512(sum);
    // Inexact and even: one step away from zero when the error has the sum's sign, else toward.
    const __mmask8 fix = _mm512_cmp_pd_mask(err, zero, _CMP_NEQ_OQ) & _mm512_testn_epi64_mask(bits, one);
    const __mmask8 away =
        static_cast<__mmask8>(~(_mm512_cmp_pd_mask(err, zero, _CMP_GT_OQ) ^ _mm512_cmp_pd_mask(sum, zero, _CMP_GT_OQ)));
    __m512i odd = _mm512_mask_add_epi64(bits, fix & away, bits, one);
    odd = _mm512_mask_sub_epi64(odd, fix & static_cast<__mmask8>(~away), odd, one);
    // A running value that is an infinity stays one (the error is NaN: no step); a NaN one
    // becomes the canonical quiet NaN, as in the general path (the double quiet NaN without
    // payload converts to it).
    odd = _mm512_mask_mov_epi64(odd, _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q), _mm512_set1_epi64(0x7FF8000000000000ll));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + j),
                        _mm256_castps_si256(_mm512_maskz_cvtpd_ps(0xFF, _mm512_castsi512_pd(odd))));
  }
  for (; j < n; ++j)
    row[j] = is_nonfinite(row[j]) ? nonfinite_plus_finite(row[j]) : add_rounded_once(row[j], dots[j] * as * bs[j]);
}
#endif

void combine_row(uint32_t* row, const double* dots, double as, const double* bs, int n) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return combine_row_avx512(row, dots, as, bs, n);
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return combine_row_avx2(row, dots, as, bs, n);
#endif
  combine_row_generic(row, dots, as, bs, n);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void combine_rows_avx512(uint32_t* const* rows, const double* dots,
                                                           const double* as, const double* bs, int m, int n) {
  for (int i = 0; i < m; ++i) combine_row_avx512(rows[i], dots + i * n, as[i], bs, n);
}
#endif

// Whether combine_rows takes infinities and NaNs among the running values itself.
bool combine_handles_nonfinite() {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
#else
  return false;
#endif
}

// Every row of a block at once (m rows of n; row i scaled by as[i]): one call, not one per row.
void combine_rows(uint32_t* const* rows, const double* dots, const double* as, const double* bs, int m, int n) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return combine_rows_avx512(rows, dots, as, bs, m, n);
#endif
  for (int i = 0; i < m; ++i) combine_row(rows[i], dots + i * n, as[i], bs, n);
}

// Rows of n (16 or 32, as in block_dots) values, at slots (or consecutive where a slot table
// is null); the width a constant, so each row is an inline copy rather than a library call.
template <int N>
void copy_rows(int m, const uint32_t* from, const uint16_t* from_slots, uint32_t* to, const uint16_t* to_slots) {
  for (int i = 0; i < m; ++i)
    std::memcpy(to + (to_slots ? to_slots[i * N] : i * N), from + (from_slots ? from_slots[i * N] : i * N),
                sizeof(uint32_t) * N);
}

void copy_rows(int m, int n, const uint32_t* from, const uint16_t* from_slots, uint32_t* to, const uint16_t* to_slots) {
  (n == 32 ? copy_rows<32> : copy_rows<16>)(m, from, from_slots, to, to_slots);
}

// C into the running values row by row, and the results back. Register-major, a row of D is
// n consecutive lanes of one register (mfma_layout::output_pos): copied whole.
void gather_c(const FastShape& sh, const MfmaArgs& args, const uint16_t* slots, uint32_t* acc) {
  if (args.register_major) return copy_rows(sh.m, sh.n, args.c, slots, acc, nullptr);
  for (int t = 0; t < sh.m * sh.n; ++t) acc[t] = args.c[slots[t]];
}

void scatter_d(const FastShape& sh, const MfmaArgs& args, const uint16_t* slots, const uint32_t* acc) {
  if (args.register_major) return copy_rows(sh.m, sh.n, acc, nullptr, args.d, slots);
  for (int t = 0; t < sh.m * sh.n; ++t) args.d[slots[t]] = acc[t];
}

double pow2(int e) { return double_from(static_cast<uint64_t>(e + 1023) << 52); }

}  // namespace

bool mfma_e4m3_execute(const FastShape& sh, const MfmaArgs& args) {
  alignas(64) thread_local double dots[kMaxElems];
  const int nblocks = sh.k / sh.block;

  // Scales per row / column and block, checked for NaN before anything is written.
  std::array<double, 32 * 4> a_scale, b_scale;  // [p * rows + row]
  // 2^(byte - 127) of E8M0 byte `sel` of scales[index] (1 when unscaled); false for its NaN code.
  const auto block_scale = [&](const uint32_t* scales, int index, uint32_t sel, double* out) {
    int e = 0;
    if (sh.scaled) {
      const uint32_t byte = (scales[index] >> (8 * sel)) & 0xFFu;
      if (byte == 0xFFu) return false;
      e = static_cast<int>(byte) - 127;
    }
    *out = pow2(e);
    return true;
  };
  for (int p = 0; p < nblocks; ++p) {
    for (int i = 0; i < sh.m; ++i)
      if (!block_scale(args.scale_a, i + sh.m * p, args.scale_a_sel, &a_scale[p * sh.m + i])) return false;
    for (int j = 0; j < sh.n; ++j)
      if (!block_scale(args.scale_b, j + sh.n * p, args.scale_b_sel, &b_scale[p * sh.n + j])) return false;
  }

  // A row-major (row i, then K); B K-major (K, then column j) for the vectorized dot kernel.
  const OperandMap& amap = operand_map(sh.m, sh.k, sh.per_lane, sh.chunked);
  const OperandMap& bmap = operand_map(sh.n, sh.k, sh.per_lane, sh.chunked);
  thread_local DecodeCache a_cache, b_cache;
  const double* a;
  const double* bt;
  bool a_rows_same = false;
  if (args.register_major && amap.dwords_consecutive && bmap.dwords_consecutive) {
    a = decoded(a_cache, amap.row_major_rm, 1, false, args.a, sh.k, &a_rows_same);
    bt = decoded(b_cache, bmap.k_major_rm, sh.n, bmap.k_major_rows8, args.b);
  } else {
    a = decoded(a_cache, args.register_major ? amap.row_major_rm : amap.row_major, 0, false, args.a, sh.k,
                &a_rows_same);
    bt = decoded(b_cache, args.register_major ? bmap.k_major_rm : bmap.k_major, 0, false, args.b);
  }
  if (!a || !bt) return false;  // a NaN code: the general path
  const int mn = sh.m * sh.n;  // dots of block p at dots[p * mn + i * n + j]
  // All rows of A the same (the ones operand of a row sum): so are the dots' rows; the widest
  // dot kernel takes rows in fours, the rest are copies of the first.
  const int dot_rows = a_rows_same && sh.m % 4 == 0 ? 4 : sh.m;
  for (int p = 0; p < nblocks; ++p) {
    double* dp = dots + p * mn;
    block_dots(sh.n, a, sh.k, bt, dot_rows, p * sh.block, sh.block, dp);
    for (int i = dot_rows; i < sh.m; ++i) std::memcpy(dp + i * sh.n, dp, sizeof(double) * sh.n);
  }

  // Running values row by row (logical order). An accumulating MFMA (C the same registers as
  // D, register-major: a row of D is n consecutive lanes of one register) works on D in place;
  // otherwise C is gathered first (it may overlap D at an offset) and D written at the end.
  const uint16_t* slots = output_slots(sh.m, args.register_major);
  std::array<uint32_t, 1024> acc;
  std::array<uint32_t*, 32> rows;
  const bool in_place = args.register_major && args.c == args.d;
  for (int i = 0; i < sh.m; ++i) rows[i] = in_place ? args.d + slots[i * sh.n] : acc.data() + i * sh.n;
  if (!in_place) gather_c(sh, args, slots, acc.data());
  const auto any_nonfinite_row = [&] {
    bool any = false;
    for (int i = 0; i < sh.m; ++i) any |= any_nonfinite(rows[i], sh.n);
    return any;
  };
  // The AVX-512 rounding step handles non-finite running values itself (combine_row_avx512):
  // no scan of C then. Otherwise a C or a block sum that is not finite takes the loop below.
  const bool checks_nonfinite = combine_handles_nonfinite();
  bool nonfinite = !checks_nonfinite && any_nonfinite_row();
  for (int p = 0; p < nblocks; ++p) {
    const double* dp = dots + p * mn;
    const double* bs = b_scale.data() + p * sh.n;
    if (!nonfinite) {
      combine_rows(rows.data(), dp, a_scale.data() + p * sh.m, bs, sh.m, sh.n);
    } else {
      for (int i = 0; i < sh.m; ++i) {
        const double as = a_scale[p * sh.m + i];
        uint32_t* row = rows[i];
        const double* drow = dp + i * sh.n;
        for (int j = 0; j < sh.n; ++j) {
          row[j] = is_nonfinite(row[j]) ? nonfinite_plus_finite(row[j])
                                        : add_rounded_once(row[j], drow[j] * as * bs[j]);
        }
      }
    }
    // A block may overflow to infinity; the next block must see it as the general path does.
    if (p + 1 < nblocks && !nonfinite && !checks_nonfinite) nonfinite = any_nonfinite_row();
  }
  // C may alias D otherwise: all of C was read before any of D is written.
  if (!in_place) scatter_d(sh, args, slots, acc.data());
  return true;
}

namespace {

constexpr int kEmptyMsb = -100000, kEmptyLsb = 100000;

// Decodes one bf16 operand through `index` and records, per row (A) or column (B), the
// exponents of the highest and lowest significant bits of its nonzero elements. All elements
// of a lane belong to one row or column (mfma_layout::operand_pos), so the range is gathered
// per lane in registers and merged once.
void decode_bf16(const OperandMap& map, const std::vector<uint16_t>& index, const uint32_t* regs,
                 bool register_major, double* out, int* msb, int* lsb) {
  // Element e of a lane is half e of its registers: lane-major at lane * per_lane + e,
  // register-major at (register * 64 + lane) * 2 + e % 2.
  const auto* half = reinterpret_cast<const uint16_t*>(regs);
  const int per_lane = map.per_lane;
  for (int lane = 0; lane < 64; ++lane) {
    int hi = kEmptyMsb, lo = kEmptyLsb;
    for (int e = 0; e < per_lane; ++e) {
      const int t = lane * per_lane + e;
      const uint32_t h = half[register_major ? ((e / 2) * 64 + lane) * 2 + e % 2 : t];
      out[index[t]] = static_cast<double>(f32_of(h << 16));
      if ((h & 0x7FFFu) == 0) continue;
      const uint32_t expf = (h >> 7) & 0xFFu;
      // value = mant * 2^lsb_exp: normal with the hidden bit, subnormal at 2^(1 - 127 - 7).
      const uint32_t mant = (h & 0x7Fu) | (expf ? 0x80u : 0u);
      const int lsb_exp = expf ? static_cast<int>(expf) - 134 : -133;
      hi = std::max(hi, lsb_exp + 31 - __builtin_clz(mant));
      lo = std::min(lo, lsb_exp + __builtin_ctz(mant));
    }
    const int r = map.row[lane * per_lane];
    msb[r] = std::max(msb[r], hi);
    lsb[r] = std::min(lsb[r], lo);
  }
}

// The exponent field plus one step reaches bit 15 exactly when it is all ones (vectorizes).
bool has_nonfinite_bf16(const uint32_t* regs, int halves) {
  const auto* half = reinterpret_cast<const uint16_t*>(regs);
  uint32_t any = 0;
  for (int t = 0; t < halves; ++t) any |= (half[t] & 0x7F80u) + 0x0080u;
  return (any & 0x8000u) != 0;
}

// A bf16 operand decoded through `index` with its bit ranges, from the cache or decoded into
// it (the operands recur as e4m3 ones do: decoded()); nullptr for an operand holding an
// infinity or NaN (nothing kept), which the general path takes.
const DecodedOperand* decoded_bf16(DecodeCache& c, const OperandMap& map, const std::vector<uint16_t>& index,
                                   const uint32_t* regs, bool register_major) {
  const int halves = 64 * map.per_lane;
  const size_t bytes = size_t(halves) * 2;
  const uint8_t format = register_major ? 2 : 1;
  const uint64_t key = fingerprint(regs, int(bytes / 4));
  for (int i = 0; i < c.used; ++i) {
    const DecodedOperand& d = c.entry[i];
    if (d.key == key && d.index == &index && d.format == format && std::memcmp(d.raw.data(), regs, bytes) == 0)
      return &d;
  }
  if (has_nonfinite_bf16(regs, halves)) return nullptr;
  DecodedOperand& d = c.entry[c.next];
  c.next = (c.next + 1) % DecodeCache::kEntries;
  c.used = std::max(c.used, c.next == 0 ? DecodeCache::kEntries : c.next);
  d.key = key;
  d.index = &index;
  d.stride = 0;
  d.format = format;
  std::memcpy(d.raw.data(), regs, bytes);
  d.msb.fill(kEmptyMsb);
  d.lsb.fill(kEmptyLsb);
  decode_bf16(map, index, regs, register_major, d.value.data(), d.msb.data(), d.lsb.data());
  return &d;
}

}  // namespace

bool mfma_bf16_execute(const FastShape& sh, const MfmaArgs& args) {
  alignas(64) thread_local double dots[kMaxElems];
  if (sh.k > 32 || sh.scaled) return false;
  const OperandMap& amap = operand_map(sh.m, sh.k, sh.per_lane, false);
  const OperandMap& bmap = operand_map(sh.n, sh.k, sh.per_lane, false);
  thread_local DecodeCache a_cache, b_cache;
  const DecodedOperand* da = decoded_bf16(a_cache, amap, amap.row_major, args.a, args.register_major);
  const DecodedOperand* db = da ? decoded_bf16(b_cache, bmap, bmap.k_major, args.b, args.register_major) : nullptr;
  if (!da || !db) return false;
  const double* a = da->value.data();
  const double* bt = db->value.data();
  const int* amsb = da->msb.data();
  const int* alsb = da->lsb.data();
  const int* bmsb = db->msb.data();
  const int* blsb = db->lsb.data();
  block_dots(sh.n, a, sh.k, bt, sh.m, 0, sh.k, dots);

  const uint16_t* slots = output_slots(sh.m, args.register_major);
  std::array<uint32_t, 1024> acc;
  gather_c(sh, args, slots, acc.data());
  static const std::array<double, 32> kOnes = [] {
    std::array<double, 32> o;
    o.fill(1.0);
    return o;
  }();
  // The widest bit span of B's nonzero columns: a row is short against every column when its
  // own span plus this one fits (or either side has no nonzero element), the same answer as
  // short_sum(j) for each j below.
  int b_span = -1;
  for (int j = 0; j < sh.n; ++j)
    if (bmsb[j] != kEmptyMsb) b_span = std::max(b_span, bmsb[j] - blsb[j]);
  for (int i = 0; i < sh.m; ++i) {
    uint32_t* row = acc.data() + i * sh.n;
    const double* drow = dots + i * sh.n;
    // An output is short when its products' bits span at most 46 (or it has no nonzero
    // product: an all-zero row or column gives an exact +0 dot).
    const auto short_sum = [&](int j) {
      return amsb[i] == kEmptyMsb || bmsb[j] == kEmptyMsb ||
             (amsb[i] + bmsb[j] + 1) - (alsb[i] + blsb[j]) <= 45;
    };
    const bool row_short = amsb[i] == kEmptyMsb || b_span < 0 || (amsb[i] - alsb[i]) + b_span + 1 <= 45;
    if (row_short && !any_nonfinite(row, sh.n)) {
      combine_row(row, drow, 1.0, kOnes.data(), sh.n);
      continue;
    }
    for (int j = 0; j < sh.n; ++j) {
      if (!short_sum(j)) {
        std::array<double, 32> terms;
        for (int kk = 0; kk < sh.k; ++kk) terms[kk] = a[i * sh.k + kk] * bt[kk * sh.n + j];
        row[j] = exact_f32_sum(f32_of(row[j]), terms.data(), sh.k);
      } else {
        row[j] = is_nonfinite(row[j]) ? nonfinite_plus_finite(row[j]) : add_rounded_once(row[j], drow[j]);
      }
    }
  }
  // C may alias D: all of C was read before any of D is written.
  scatter_d(sh, args, slots, acc.data());
  return true;
}

}  // namespace zyfa::emu
