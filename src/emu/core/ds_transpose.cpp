// Transposing LDS reads of gfx950.
//
// CDNA4 ISA, "MFMA Transpose Load from LDS": each lane reads 64 bits (96 for tr_b6) at its
// address, as ds_read_b64 would; the hardware then treats the data of each group of 16 lanes
// as a matrix of `elem_bits`-bit elements and transposes it ("Each lane (one VGPR) holds 4
// consecutive M or N values"; two tr_b16 instructions load a 16x16x32 MFMA operand, "the
// first loads K=0..3 and K=8..11"). With N = elements per lane, the 16 lanes of a group hold
// an N x 16 tile, row k stored by 16/N consecutive lanes with N consecutive columns each:
//
//   dst[16g + l].elem[k] = raw[16g + (16/N) * k + l / N].elem[l % N]   l = 0..15, k = 0..N-1
//
// i.e. lane l receives column l. Element i of a lane is bits [i*bits, (i+1)*bits) of its
// little-endian 64/96-bit value. The rule is the lane/register basis rotation of Triton's
// AMD backend (chooseLLDsReadB64TrLayout: "ds_read_b64_tr works on 64 bits per lane and in
// groups of 16 lanes"; its 16-bit diagram: T0 loads M0-3 of K0, T4 M0-3 of K1, and after the
// exchange T0 holds M0 of K0-3), and it is the one of the plausible mappings under which
// AMD's shipped gfx950 attention kernels (V^T through tr_b16) match an fp64 reference. For
// tr_b8 (N = 8) it makes each lane pair one row: two interleaved 8x8 byte transposes. For
// tr_b4 and tr_b6 (N = 16) the same rule is a plain 16x16 transpose; no primary source
// spells these two out, see docs/emulator.md.
#include "emu/core/ds_transpose.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "emu/isa/isa_ops.h"

namespace zyfa::emu {
namespace {

uint32_t get_elem(const uint32_t* lane_raw, unsigned i, unsigned bits) {
  const unsigned bit = i * bits, word = bit / 32, shift = bit % 32;
  // raw/out rows have 4 dwords per lane, so word + 1 <= 3 always exists.
  const uint64_t window = uint64_t(lane_raw[word]) | (uint64_t(lane_raw[word + 1]) << 32);
  return uint32_t(window >> shift) & ((1u << bits) - 1);
}

void set_elem(uint32_t* lane_out, unsigned i, unsigned bits, uint32_t v) {
  const unsigned bit = i * bits, word = bit / 32, shift = bit % 32;
  const uint64_t mask = ((uint64_t(1) << bits) - 1) << shift;
  uint64_t window = uint64_t(lane_out[word]) | (uint64_t(lane_out[word + 1]) << 32);
  window = (window & ~mask) | ((uint64_t(v) << shift) & mask);
  lane_out[word] = uint32_t(window);
  lane_out[word + 1] = uint32_t(window >> 32);
}

// Lane l of a group receives column l: element k comes from element l % N of the lane that
// holds row k, (16 / N) * k + l / N. With whole-byte elements that is, per group, 16 / N
// separate N x N transposes (lane l / N of each row's lanes feeds lanes N * (l / N) ..): for
// tr_b8 two 8 x 8 byte transposes (even and odd lanes), for tr_b16 four 4 x 4 ones of 16-bit
// elements. cols[l] gets lane l's 64 bits.
#if defined(__SSE2__)
void group_columns_b8(const uint8_t* lds, const uint64_t* addr, uint64_t* cols) {
  for (int h = 0; h < 2; ++h) {
    __m128i r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(lds + addr[(2 * k + h) * 4]));
    // Bytes of rows (0,1), (2,3), ... interleaved, then pairs of them, then quads: column c
    // ends up as the 8 bytes at c * 8.
    const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i t2 = _mm_unpacklo_epi8(r[4], r[5]), t3 = _mm_unpacklo_epi8(r[6], r[7]);
    const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
    const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
    __m128i* out = reinterpret_cast<__m128i*>(cols + 8 * h);
    _mm_storeu_si128(out + 0, _mm_unpacklo_epi32(u0, u2));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi32(u0, u2));
    _mm_storeu_si128(out + 2, _mm_unpacklo_epi32(u1, u3));
    _mm_storeu_si128(out + 3, _mm_unpackhi_epi32(u1, u3));
  }
}

void group_columns_b16(const uint8_t* lds, const uint64_t* addr, uint64_t* cols) {
  for (int h = 0; h < 4; ++h) {
    __m128i r[4];
    for (int k = 0; k < 4; ++k) r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(lds + addr[(4 * k + h) * 4]));
    const __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpacklo_epi16(r[2], r[3]);
    __m128i* out = reinterpret_cast<__m128i*>(cols + 4 * h);
    _mm_storeu_si128(out + 0, _mm_unpacklo_epi32(t0, t1));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi32(t0, t1));
  }
}
#endif

}  // namespace

bool ds_transpose_from_lds(const DsTransposeShape& s, const uint8_t* lds, const uint64_t* addr, uint64_t exec,
                           uint32_t* row0, uint32_t* row1) {
#if defined(__SSE2__)
  if (s.dwords != 2 || (s.elem_bits != 8 && s.elem_bits != 16)) return false;
  for (unsigned g = 0; g < 4; ++g) {
    if (!((exec >> (16 * g)) & 1)) continue;  // whole groups only (checked at issue)
    uint64_t cols[16];
    (s.elem_bits == 8 ? group_columns_b8 : group_columns_b16)(lds, addr + 16 * g * 4, cols);
    for (unsigned l = 0; l < 16; ++l) {
      row0[16 * g + l] = uint32_t(cols[l]);
      row1[16 * g + l] = uint32_t(cols[l] >> 32);
    }
  }
  return true;
#else
  (void)s, (void)lds, (void)addr, (void)exec, (void)row0, (void)row1;
  return false;  // the element-wise exchange of ds_transpose()
#endif
}

bool ds_transpose_shape(uint16_t o, DsTransposeShape* s) {
  switch (o) {
    case op::DS_READ_B64_TR_B4: *s = {2, 4, 16, 8}; return true;
    case op::DS_READ_B64_TR_B8: *s = {2, 8, 8, 8}; return true;
    case op::DS_READ_B64_TR_B16: *s = {2, 16, 4, 8}; return true;
    // 96 bits of 6-bit elements; AMD's rocRoller pads every such block to a 128-bit
    // aligned address ("128b alignment requirement of 6-bit transpose loads").
    case op::DS_READ_B96_TR_B6: *s = {3, 6, 16, 16}; return true;
    default: return false;
  }
}

void ds_transpose(const DsTransposeShape& s, const uint32_t* raw, uint32_t* out, unsigned groups) {
  const unsigned n = s.elems, lanes_per_row = 16 / n;
  for (unsigned g = 0; g < 4; ++g) {
    if (!((groups >> g) & 1)) continue;
    for (unsigned l = 0; l < 16; ++l) {
      uint32_t* dst = out + (16 * g + l) * 4;
      dst[0] = dst[1] = dst[2] = dst[3] = 0;
      for (unsigned k = 0; k < n; ++k) {
        const unsigned src_lane = 16 * g + lanes_per_row * k + l / n;
        set_elem(dst, k, s.elem_bits, get_elem(raw + src_lane * 4, l % n, s.elem_bits));
      }
    }
  }
}

}  // namespace zyfa::emu
