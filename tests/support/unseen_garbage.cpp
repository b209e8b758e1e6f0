#include "support/unseen_garbage.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "support/enum_names.h"

namespace zyfa::test {
namespace {

// BF16: quiet and signalling NaNs of both signs, +Inf, -Inf. FP8 e4m3fn has no Inf: its two NaNs.
constexpr uint16_t kBf16Garbage[] = {0x7FC0, 0xFFC1, 0x7F81, 0x7F80, 0xFF80};
constexpr uint8_t kFp8Garbage[] = {0x7F, 0xFF};

void put(std::vector<uint8_t>& buf, const AttnData& a, int64_t elem, std::mt19937_64& rng) {
  if (a.cfg.dtype == ZYFA_DTYPE_BF16) {
    const uint16_t g = kBf16Garbage[rng() % 5];
    std::memcpy(&buf[elem * 2], &g, 2);
  } else {
    buf[elem] = kFp8Garbage[rng() % 2];
  }
}

void append_trail(std::vector<uint8_t>& buf, const AttnData& a, std::mt19937_64& rng) {
  const size_t n = buf.size();
  buf.resize(n + kTrailBytes);
  const size_t eb = a.elem_bytes();
  std::vector<uint8_t> tail(kTrailBytes);
  for (size_t i = 0; i < kTrailBytes / eb; ++i) put(tail, a, static_cast<int64_t>(i), rng);
  std::memcpy(&buf[n], tail.data(), kTrailBytes);
}

bool bf16_finite(uint16_t v) { return (v & 0x7F80) != 0x7F80; }

}  // namespace

const char* to_string(Garbage g) { return enum_name(g, {"KV", "K", "V"}); }

AttnData with_unseen_garbage(const AttnData& clean, int64_t cut, Garbage g, uint64_t seed) {
  AttnData a = clean;
  const AttnConfig& c = a.cfg;
  std::mt19937_64 rng(seed);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = cut; s < c.seqlen; ++s)
      for (int64_t h = 0; h < c.heads_k; ++h) {
        if (g != Garbage::V)
          for (int64_t i = 0; i < c.d_qk; ++i)
            put(a.k, a, b * a.k_stride[0] + s * a.k_stride[1] + h * a.k_stride[2] + i, rng);
        const int64_t vrow = b * a.v_stride[0] + s * a.v_stride[1] + h * a.v_stride[2];
        if (g == Garbage::KV)
          for (int64_t i = 0; i < c.d_v; ++i) put(a.v, a, vrow + i, rng);
        if (g == Garbage::V) put(a.v, a, vrow + static_cast<int64_t>(rng() % c.d_v), rng);
      }
  // The trailing bytes go after the copies (PACKED_QKV: after the interleaved bytes as well).
  append_trail(a.q, a, rng);
  append_trail(a.k, a, rng);
  append_trail(a.v, a, rng);
  return a;
}

std::string compare_unseen(const AttnData& a, const uint16_t* clean_out, const float* clean_lse,
                           const uint16_t* dirty_out, const float* dirty_lse, int64_t cut,
                           bool check_seen) {
  const AttnConfig& c = a.cfg;
  std::ostringstream msg;
  int64_t changed = 0, finite_seen = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t h = 0; h < c.heads; ++h) {
        bool any_nonfinite = false;
        for (int64_t i = 0; i < c.d_v; ++i) {
          const int64_t o = a.out_offset(b, s, h, i);
          if (s < cut && clean_out[o] != dirty_out[o] && changed++ == 0)
            msg << "out (b " << b << ", s " << s << ", h " << h << ", i " << i << "): 0x" << std::hex
                << clean_out[o] << " became 0x" << dirty_out[o] << std::dec << "; ";
          if (!bf16_finite(dirty_out[o])) any_nonfinite = true;
        }
        if (s < cut && c.lse) {
          const int64_t l = (b * c.heads + h) * c.seqlen + s;
          if (std::memcmp(&clean_lse[l], &dirty_lse[l], 4) != 0 && changed++ == 0)
            msg << "lse (b " << b << ", s " << s << ", h " << h << "): " << clean_lse[l] << " became "
                << dirty_lse[l] << "; ";
        }
        if (check_seen && s >= cut && !any_nonfinite && finite_seen++ == 0)
          msg << "row (b " << b << ", s " << s << ", h " << h << ") saw a non-finite value and came out finite; ";
      }
  if (changed) msg << changed << " values of rows before " << cut << " changed; ";
  if (finite_seen) msg << finite_seen << " rows at or after " << cut << " came out finite";
  return msg.str();
}

std::vector<UnseenCase> unseen_cases(int64_t seqlen, int64_t near, std::mt19937_64& rng) {
  const int64_t S = seqlen;
  return {{std::min<int64_t>(near, S - 1), Garbage::KV},
          {std::min<int64_t>(near, S - 1), Garbage::V},
          {std::min<int64_t>(40, S - 1), Garbage::V},
          {1, Garbage::K},
          {1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(S - 1)), Garbage::KV},
          {S, Garbage::KV}};
}

}  // namespace zyfa::test
