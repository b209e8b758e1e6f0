// Runs the hand-written test kernels (tests/emu/kernels/*.s, assembled at build time into
// ZYFA_EMU_TEST_KERNEL_DIR) on the emulator through its C++ API.
// Kernel arguments: +0 out, +8 in, +16.. u32 values (see kernels/common.inc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"

namespace zyfa::emu::test {

inline std::vector<uint8_t> read_binary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class TestKernels {
 public:
  explicit TestKernels(const std::string& file) {
    image_ = read_binary(std::string(ZYFA_EMU_TEST_KERNEL_DIR) + "/" + file + ".co");
    if (image_.empty()) throw std::runtime_error("missing test kernel object " + file);
    object_ = std::make_unique<LoadedCodeObject>(image_.data(), image_.size());
  }
  const LoadedCodeObject& object() const { return *object_; }

  struct Run {
    DispatchResult result;
    std::vector<uint32_t> out;
  };

  // out: `out_words` words filled with 0xDEADBEEF first; `in` is read-only to the kernel.
  Run run(const std::string& kernel, size_t out_words, std::vector<uint32_t> in = {},
          std::vector<uint32_t> args = {}, uint32_t block = 64, uint32_t grid = 1, uint64_t seed = 1) const {
    const uint32_t b[3] = {block, 1, 1}, g[3] = {grid, 1, 1};
    return run3(kernel, out_words, std::move(in), std::move(args), b, g, seed);
  }

  Run run3(const std::string& kernel, size_t out_words, std::vector<uint32_t> in, std::vector<uint32_t> args,
           const uint32_t block[3], const uint32_t grid[3], uint64_t seed, unsigned threads = 1,
           RuleSet rules = RuleSet::kDefault) const {
    Run r;
    r.out.assign(out_words, 0xDEADBEEFu);
    if (in.empty()) in.push_back(0);
    std::vector<uint8_t> ka(16 + 4 * args.size());
    const uint64_t out_ptr = reinterpret_cast<uint64_t>(r.out.data());
    const uint64_t in_ptr = reinterpret_cast<uint64_t>(in.data());
    std::memcpy(ka.data(), &out_ptr, 8);
    std::memcpy(ka.data() + 8, &in_ptr, 8);
    if (!args.empty()) std::memcpy(ka.data() + 16, args.data(), 4 * args.size());
    Dispatch d;
    d.object = object_.get();
    d.kernel = kernel;
    for (int i = 0; i < 3; ++i) {
      d.grid[i] = grid[i];
      d.block[i] = block[i];
    }
    d.kernarg = ka.data();
    d.kernarg_size = ka.size();
    d.regions.push_back({out_ptr, 4 * r.out.size(), true, "out"});
    d.regions.push_back({in_ptr, 4 * in.size(), false, "in"});
    DispatchOptions opt;
    opt.seed = seed;
    opt.threads = threads;
    opt.rules = rules;
    r.result = run_dispatch(d, opt);
    return r;
  }

 private:
  std::vector<uint8_t> image_;
  std::unique_ptr<LoadedCodeObject> object_;
};

inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

// The run stopped with an error that names every one of `parts`.
inline void expect_fault(const TestKernels::Run& r, std::initializer_list<std::string_view> parts) {
  ASSERT_FALSE(r.result.ok) << "the kernel ran to the end";
  for (std::string_view part : parts)
    EXPECT_NE(r.result.error.find(part), std::string::npos) << "no \"" << part << "\" in: " << r.result.error;
}

// A kernel that must run to the end, then `check(lane, words)` on each of the 64 lanes' 16
// output words (out[lane * 16 ..]), with the lane in every failure.
template <typename Check>
void expect_lanes(const TestKernels::Run& r, Check check) {
  ASSERT_TRUE(r.result.ok) << r.result.error;
  for (uint32_t lane = 0; lane < 64; ++lane) {
    SCOPED_TRACE("lane " + std::to_string(lane));
    check(lane, &r.out[lane * 16]);
  }
}

}  // namespace zyfa::emu::test
