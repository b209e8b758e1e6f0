#include "micro_kernel.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"

namespace zyfa::emu::timing {
namespace {

struct Loaded {
  std::vector<uint8_t> image;
  std::unique_ptr<LoadedCodeObject> object;
};

// Each code object read once per process.
const LoadedCodeObject& code_object(const std::string& file) {
  static std::map<std::string, Loaded> cache;
  Loaded& l = cache[file];
  if (!l.object) {
    std::ifstream f(std::string(ZYFA_TIMING_TEST_KERNEL_DIR) + "/" + file, std::ios::binary);
    l.image.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    l.object = std::make_unique<LoadedCodeObject>(l.image.data(), l.image.size());
  }
  return *l.object;
}

}  // namespace

Prediction predict_micro(const MicroLaunch& l) {
  struct Args { void* out; const void* in; } args{l.out, l.in};
  Dispatch d;
  d.object = &code_object(l.file);
  d.kernel = l.kernel;
  d.grid[0] = l.workgroups;
  d.block[0] = l.threads;
  d.kernarg = &args;
  d.kernarg_size = sizeof(args);
  if (l.out) d.regions.push_back({reinterpret_cast<uint64_t>(l.out), l.out_bytes, true, "out"});
  if (l.in) d.regions.push_back({reinterpret_cast<uint64_t>(l.in), l.in_bytes, false, "in"});
  Geometry g;
  g.object = d.object;
  g.kernel = l.kernel;
  g.grid[0] = l.workgroups;
  g.block[0] = l.threads;
  DispatchOptions opt;
  opt.rules = RuleSet::kStrict;
  ModelOptions m;
  m.cus = l.cus;
  const Prediction p = predict(g, [&](const DispatchOptions& o) { return run_dispatch(d, o); }, opt, m);
  EXPECT_TRUE(p.ok) << l.kernel << ": " << p.error;
  return p;
}

}  // namespace zyfa::emu::timing
