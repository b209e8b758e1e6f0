// Deterministic random driver of the emulator fuzzer, for compilers without libFuzzer (CI runs
// it briefly as a ctest case). Inputs mutate the instruction streams of the hand-written test
// kernels (real encodings reach deeper than random words): a random window of one kernel's
// text, then bit flips, random words, words of other kernels, random header bytes.
//
//   zyfa-emu-fuzz-driver TEMPLATE.co KERNEL_DIR ITERATIONS [SEED]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "emu/loader/code_object.h"
#include "emu_fuzz.h"

namespace {

std::vector<std::vector<uint8_t>> text_corpus(const std::string& dir) {
  std::vector<std::vector<uint8_t>> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 4 || name.substr(name.size() - 3) != ".co") continue;
    std::ifstream f(dir + "/" + name, std::ios::binary);
    std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    try {
      const zyfa::emu::LoadedCodeObject o(file.data(), file.size());
      const auto& img = o.image();
      out.emplace_back(img.begin() + long(o.text_begin()), img.begin() + long(o.text_end()));
    } catch (const std::exception&) {
    }
  }
  closedir(d);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TEMPLATE.co KERNEL_DIR ITERATIONS [SEED]\n", argv[0]);
    return 2;
  }
  zyfa::emu::fuzz::load_template(argv[1]);
  const auto corpus = text_corpus(argv[2]);
  if (corpus.empty()) {
    std::fprintf(stderr, "no code objects in %s\n", argv[2]);
    return 2;
  }
  const uint64_t iterations = std::strtoull(argv[3], nullptr, 0);
  const uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 0) : std::random_device{}();
  std::printf("emu fuzz driver: %llu iterations, seed %llu, %zu corpus kernels\n",
              static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(seed), corpus.size());
  std::fflush(stdout);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> input;
  for (uint64_t it = 0; it < iterations; ++it) {
    input.assign(zyfa::emu::fuzz::kHeaderBytes, 0);
    for (auto& b : input) b = uint8_t(rng());
    const auto& src = corpus[rng() % corpus.size()];
    const size_t words = src.size() / 4;
    const size_t start = words ? rng() % words : 0, len = 1 + rng() % 64;
    for (size_t w = start; w < std::min(words, start + len); ++w) input.insert(input.end(), &src[4 * w], &src[4 * w + 4]);
    const size_t body = input.size() - zyfa::emu::fuzz::kHeaderBytes;
    for (int m = int(rng() % 9); m > 0 && body >= 4; --m) {
      const size_t at = zyfa::emu::fuzz::kHeaderBytes + (rng() % body);
      switch (rng() % 4) {
        case 0: input[at] ^= uint8_t(1u << (rng() % 8)); break;
        case 1: input[at] = uint8_t(rng()); break;
        case 2: {
          const auto& other = corpus[rng() % corpus.size()];
          if (other.size() >= 4) {
            const size_t o = 4 * (rng() % (other.size() / 4)), a = at & ~size_t(3);
            for (int i = 0; i < 4 && a + i < input.size(); ++i) input[a + i] = other[o + i];
          }
          break;
        }
        default: input.push_back(uint8_t(rng())); break;
      }
    }
    // Mostly the descriptor of a plausible kernel, sometimes anything.
    if (rng() % 4) input[1] = uint8_t(7 + rng() % 24), input[2] = uint8_t(rng() % 64);
    if (it % 100000 == 0 && it) {
      std::printf("  %llu\n", static_cast<unsigned long long>(it));
      std::fflush(stdout);
    }
    zyfa::emu::fuzz::run_one(input.data(), input.size());
  }
  std::printf("emu fuzz driver: done, no crash\n");
  return 0;
}
