// Configuration names, seeds and poison patterns.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <mutex>

#include "support/enum_names.h"
#include "support/zyfa_test_support.h"

namespace zyfa::test {

const char* to_string(Layout l) { return enum_name(l, {"Bshd", "Bhsd", "Packed"}); }
const char* to_string(Inputs i) { return enum_name(i, {"Gauss", "Real", "Rising"}); }
const char* to_string(DescaleMode d) { return enum_name(d, {"Host", "DevScalar", "DevPerHead"}); }

std::string kind_name(zyfa_dtype_t dtype, int64_t d_qk, int64_t d_v, int64_t heads, int64_t heads_k) {
  std::string n = dtype == ZYFA_DTYPE_FP8_E4M3 ? "Fp8" : "Bf16";
  n += d_qk == d_v ? fmt::format("_D{}", d_qk) : fmt::format("_D{}v{}", d_qk, d_v);
  if (heads_k == heads) {
    n += fmt::format("_Mha{}", heads);
  } else if (heads_k == 1) {
    n += fmt::format("_Mqa{}", heads);
  } else {
    n += fmt::format("_Gqa{}", heads / heads_k);
  }
  return n;
}

std::string inputs_name(Inputs inputs, double std) {
  if (inputs == Inputs::REALISTIC) return "_Real";
  if (inputs == Inputs::RISING) return "_Rising";
  if (std != 0.1) return std == 1.0 ? std::string("_Std1") : fmt::format("_Std{}", static_cast<int>(std * 1000));
  return "";
}

std::string AttnConfig::name() const {
  std::string n = kind_name(dtype, d_qk, d_v, heads, heads_k);
  n += fmt::format("_S{}", seqlen);
  if (batch != 1) n += fmt::format("_B{}", batch);
  if (layout != Layout::BSHD) n += std::string("_") + to_string(layout);
  n += inputs_name(inputs, std);
  if (dtype == ZYFA_DTYPE_FP8_E4M3 && descale != DescaleMode::HOST) {
    n += std::string("_") + to_string(descale);
  }
  if (softmax_scale != 0.0f) n += fmt::format("_Scale{}", static_cast<int>(softmax_scale * 1000));
  if (!lse) n += "_NoLse";
  return n;
}

void poison_bf16(uint16_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = kPoisonBf16;
}

void poison_f32(float* p, size_t n) {
  for (size_t i = 0; i < n; ++i) std::memcpy(&p[i], &kPoisonF32, sizeof(float));
}

bool is_poison_bf16(uint16_t v) { return v == kPoisonBf16; }

bool is_poison_f32(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u == kPoisonF32;
}

uint64_t test_seed() {
  static std::once_flag once;
  static uint64_t seed = 0;
  std::call_once(once, [] {
    if (const char* env = std::getenv("ZYFA_TEST_SEED"); env && *env) {
      seed = std::strtoull(env, nullptr, 0);
    } else {
      seed = static_cast<uint64_t>(
          std::chrono::high_resolution_clock::now().time_since_epoch().count());
    }
    std::fprintf(stderr, "ZYFA_TEST_SEED=%llu (set it to reproduce this run)\n",
                 static_cast<unsigned long long>(seed));
  });
  return seed;
}

uint64_t seed_for(const std::string& test_name) {
  // FNV-1a of the name mixed with the run seed through splitmix64.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : test_name) h = (h ^ c) * 1099511628211ull;
  uint64_t z = test_seed() ^ h;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace zyfa::test
