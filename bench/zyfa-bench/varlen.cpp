#include "varlen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>

namespace zyfa::bench {
namespace {

// The whole of s as a non-negative integer (no sign, no suffix), or -1.
int64_t non_negative(const std::string& s) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::strtoll(s.c_str(), nullptr, 10);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  size_t pos = 0;
  for (;;) {
    const size_t at = s.find(sep, pos);
    v.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
    if (at == std::string::npos) return v;
    pos = at + 1;
  }
}

// The packed rows are indexed with int32 cu_seqlens (the library's and cuDNN's format).
constexpr int64_t kMaxTotal = std::numeric_limits<int32_t>::max();

}  // namespace

bool parse_varlen(const std::string& spec, int64_t k_extra, VarlenLengths* out, std::string* err) {
  VarlenLengths l;
  l.spec = spec;
  if (k_extra < 0) {
    *err = fmt::format("--varlen-k-extra = {}: must be >= 0", k_extra);
    return false;
  }
  if (spec.rfind("random:", 0) == 0) {
    const std::vector<std::string> f = split(spec.substr(7), ':');
    if (f.size() != 4) {
      *err = "--varlen " + spec + ": expected random:N:LO:HI:SEED";
      return false;
    }
    const int64_t n = non_negative(f[0]), lo = non_negative(f[1]), hi = non_negative(f[2]);
    const int64_t seed = non_negative(f[3]);
    if (n < 1 || n > 1000000 || lo < 0 || hi < lo || hi > kMaxTotal || seed < 0) {
      *err = "--varlen " + spec + ": need N in 1..1000000, 0 <= LO <= HI < 2^31 and a SEED >= 0";
      return false;
    }
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::uniform_int_distribution<int64_t> len(lo, hi);
    for (int64_t i = 0; i < n; ++i) l.q.push_back(len(rng));
  } else {
    for (const std::string& item : split(spec, ',')) {
      const int64_t x = non_negative(item);
      if (x < 0) {
        *err = "--varlen " + spec + ": '" + item + "' is not a length (a non-negative integer)";
        return false;
      }
      l.q.push_back(x);
    }
  }
  int64_t total_q = 0, total_k = 0;
  for (int64_t x : l.q) {
    l.k.push_back(x + k_extra);
    total_q += x;
    total_k += x + k_extra;
    if (total_k > kMaxTotal) {
      *err = fmt::format("--varlen {}: more than {} packed rows (int32 cu_seqlens)", spec, kMaxTotal);
      return false;
    }
  }
  if (total_q == 0) {
    *err = "--varlen " + spec + ": every sequence is empty";
    return false;
  }
  *out = std::move(l);
  return true;
}

bool parse_chunk(const std::string& spec, int64_t* lq, int64_t* lk, std::string* err) {
  const std::vector<std::string> f = split(spec, ':');
  const int64_t q = f.size() == 2 ? non_negative(f[0]) : -1, k = f.size() == 2 ? non_negative(f[1]) : -1;
  if (q < 1 || k < q || k > kMaxTotal) {
    *err = "--chunk " + spec + ": expected LQ:LK with 1 <= LQ <= LK < 2^31";
    return false;
  }
  *lq = q;
  *lk = k;
  return true;
}

int64_t causal_pairs(int64_t lq, int64_t lk) {
  // Query i sees min(Lk, i + Lk - Lq + 1) keys, or none when that is <= 0; the minimum never
  // binds since i <= Lq - 1. With Lk >= Lq every query sees Lk - Lq + 1 .. Lk keys; with
  // Lk < Lq only the last Lk queries see any, 1 .. Lk of them.
  if (lq <= 0 || lk <= 0) return 0;
  if (lk >= lq) return lq * (lk - lq + 1) + lq * (lq - 1) / 2;
  return lk * (lk + 1) / 2;
}

int64_t equal_batch_seqlen(int64_t pairs, int64_t batch, int64_t extra) {
  const auto work = [&](int64_t l) { return batch * causal_pairs(l, l + extra); };  // grows with l
  int64_t lo = 1, hi = 1;
  while (work(hi) < pairs) hi *= 2;
  while (lo < hi) {  // the smallest length whose work reaches pairs
    const int64_t mid = lo + (hi - lo) / 2;
    if (work(mid) < pairs) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo > 1 && pairs - work(lo - 1) <= work(lo) - pairs ? lo - 1 : lo;
}

int64_t equal_work_seqlen(int64_t pairs) { return equal_batch_seqlen(pairs, 1, 0); }

std::vector<int32_t> prefix_sums(const std::vector<int64_t>& lens) {
  std::vector<int32_t> cu(lens.size() + 1, 0);
  for (size_t i = 0; i < lens.size(); ++i) cu[i + 1] = static_cast<int32_t>(cu[i] + lens[i]);
  return cu;
}

std::string describe(const VarlenLengths& l) {
  const auto [lo, hi] = std::minmax_element(l.q.begin(), l.q.end());
  int64_t total = 0;
  std::string list;
  for (int64_t x : l.q) {
    total += x;
    list += fmt::format("{}{}", list.empty() ? "" : ",", x);
  }
  return fmt::format("{} sequences ({}), query lengths {}..{} (total {}), keys = queries + {}: {}", l.q.size(),
                     l.spec, *lo, *hi, total, l.k.front() - l.q.front(), list);
}

}  // namespace zyfa::bench
