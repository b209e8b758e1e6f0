// zyfa-emu-run: runs one kernel of any gfx950 code object on the emulator, with kernel
// arguments and buffers from files, and prints the result and any diagnostic.
//
//   zyfa-emu-run OBJECT.co KERNEL --grid 4 --block 256
//       --buffer in=input.bin --buffer out=:4096 --output out=result.bin
//       --arg ptr:in --arg ptr:out --arg u32:1024
//   zyfa-emu-run OBJECT.co --list          kernels, descriptors and arguments
//   zyfa-emu-run OBJECT.co --disasm        the decoded instructions
// Options: --kernarg FILE (raw bytes; --ptr OFFSET=NAME patches a buffer address in),
//   --arg {u32,i32,u64,f32,ptr}:VALUE (appended in order, naturally aligned; ptr:NAME[+BYTES]),
//   --lds BYTES (dynamic LDS), --seed N, --threads N, --trace WG[:WAVE], --trace-regs,
//   --rules strict|hardware (wait-state rule set; default: ZYFA_EMU_RULES, else strict; under
//   hardware the rules LLVM states conservatively print a warning each instead of stopping),
//   --model mi355x (predicts the kernel's time on an MI355X: one JSON line on stdout, see
//   docs/timing-model.md), --model-cus N (simulate N CUs instead of every busy one).
// Buffers: NAME=FILE loads a file, NAME=FILE:SIZE pads it, NAME=:SIZE is filled with 0xFF
// bytes (NaN for floats), NAME=@SIZE with zeros; all are writable.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"
#include "emu/timing/predict.h"

namespace {

using zyfa::emu::Dispatch;
using zyfa::emu::DispatchOptions;
using zyfa::emu::LoadedCodeObject;

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "zyfa-emu-run: " << msg << "\n";
  std::exit(2);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) die("cannot read " + path);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void dims(const std::string& s, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  std::stringstream ss(s);
  std::string part;
  for (int i = 0; i < 3 && std::getline(ss, part, ','); ++i) out[i] = static_cast<uint32_t>(std::stoul(part));
}

struct Buffer {
  std::vector<uint8_t> bytes;
};

void usage() {
  std::cerr << "usage: zyfa-emu-run OBJECT.co KERNEL [--grid X,Y,Z] [--block X,Y,Z] [--buffer NAME=FILE[:SIZE]]\n"
               "       [--output NAME=FILE] [--kernarg FILE] [--ptr OFFSET=NAME] [--arg TYPE:VALUE] [--lds BYTES]\n"
               "       [--seed N] [--threads N] [--trace WG[:WAVE]] [--trace-regs] [--rules strict|hardware]\n"
               "       [--model mi355x [--model-cus N]]\n"
               "       zyfa-emu-run OBJECT.co --list | --disasm\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage();
  const std::vector<uint8_t> image = read_file(argv[1]);
  std::unique_ptr<LoadedCodeObject> obj;
  try {
    obj = std::make_unique<LoadedCodeObject>(image.data(), image.size());
  } catch (const std::exception& e) {
    die(std::string(argv[1]) + ": " + e.what());
  }
  const std::string kernel = argv[2];
  if (kernel == "--list") {
    for (const auto& k : obj->kernels()) {
      std::cout << fmt::format("{}: entry 0x{:x} kernarg {} B, LDS {} B, VGPRs {} (AGPRs from {}), user SGPRs {}\n", k.name,
                               k.entry, k.kernarg_segment_size, k.kd.group_segment_fixed_size, k.kd.vgpr_count(),
                               k.kd.accum_offset(), k.kd.user_sgpr_count());
      for (const auto& a : k.args)
        std::cout << fmt::format("    +{:<4} {:>3} B  {:<24} {}\n", a.offset, a.size, a.value_kind, a.name);
    }
    return 0;
  }
  if (kernel == "--disasm") {
    for (const auto& in : obj->instructions()) std::cout << fmt::format("{:06x}: {}\n", in.pc, in.name);
    return 0;
  }

  Dispatch d;
  d.object = obj.get();
  d.kernel = kernel;
  DispatchOptions opt;
  std::map<std::string, Buffer> buffers;
  std::vector<std::pair<std::string, std::string>> outputs;
  std::vector<std::string> args;
  std::vector<std::pair<size_t, std::string>> ptr_patches;
  std::vector<uint8_t> kernarg;
  std::string model;
  int model_cus = 0;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { if (i + 1 >= argc) usage(); return argv[++i]; };
    if (a == "--grid") dims(next(), d.grid);
    else if (a == "--block") dims(next(), d.block);
    else if (a == "--lds") d.dynamic_lds_bytes = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--seed") opt.seed = std::stoull(next(), nullptr, 0);
    else if (a == "--threads") opt.threads = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--rules") {
      const std::string r = next();
      if (!zyfa::emu::parse_rule_set(r, &opt.rules)) die("--rules " + r + ": expected strict or hardware");
    }
    else if (a == "--trace") {
      const std::string t = next();
      const size_t c = t.find(':');
      opt.trace.enabled = true;
      opt.trace.workgroup = std::stoull(t.substr(0, c));
      opt.trace.wave = c == std::string::npos ? 0 : static_cast<uint32_t>(std::stoul(t.substr(c + 1)));
      opt.trace.out = &std::cout;
    } else if (a == "--trace-regs") opt.trace.registers = true;
    else if (a == "--model") {
      model = next();
      if (model != "mi355x") die("--model " + model + ": the only model is mi355x");
    } else if (a == "--model-cus") {
      model_cus = std::stoi(next());
      if (model_cus < 0) die("--model-cus must be 0 (every busy CU) or more");
    }
    else if (a == "--kernarg") kernarg = read_file(next());
    else if (a == "--arg") args.push_back(next());
    else if (a == "--ptr") {
      const std::string p = next();
      const size_t eq = p.find('=');
      if (eq == std::string::npos) usage();
      ptr_patches.emplace_back(std::stoull(p.substr(0, eq), nullptr, 0), p.substr(eq + 1));
    } else if (a == "--buffer" || a == "--output") {
      const std::string b = next();
      const size_t eq = b.find('=');
      if (eq == std::string::npos) usage();
      const std::string name = b.substr(0, eq), spec = b.substr(eq + 1);
      if (a == "--output") { outputs.emplace_back(name, spec); continue; }
      Buffer buf;
      if (!spec.empty() && spec[0] == '@') {
        buf.bytes.assign(std::stoull(spec.substr(1), nullptr, 0), 0);
      } else {
        const size_t colon = spec.rfind(':');
        const std::string file = spec.substr(0, colon);
        if (!file.empty()) buf.bytes = read_file(file);
        else buf.bytes.clear();
        if (colon != std::string::npos) {
          const size_t size = std::stoull(spec.substr(colon + 1), nullptr, 0);
          if (size < buf.bytes.size()) die("buffer " + name + ": file larger than the given size");
          buf.bytes.resize(size, file.empty() ? 0xFF : 0);
        }
      }
      buffers[name] = std::move(buf);
    } else {
      usage();
    }
  }
  auto address_of = [&](const std::string& ref) -> uint64_t {
    const size_t plus = ref.find('+');
    const std::string name = ref.substr(0, plus);
    auto it = buffers.find(name);
    if (it == buffers.end()) die("no buffer named " + name);
    const uint64_t off = plus == std::string::npos ? 0 : std::stoull(ref.substr(plus + 1), nullptr, 0);
    return reinterpret_cast<uint64_t>(it->second.bytes.data()) + off;
  };
  for (const std::string& a : args) {
    const size_t colon = a.find(':');
    if (colon == std::string::npos) die("--arg needs TYPE:VALUE, got " + a);
    const std::string type = a.substr(0, colon), value = a.substr(colon + 1);
    auto append = [&](const void* p, size_t n) {
      while (kernarg.size() % n) kernarg.push_back(0);
      kernarg.insert(kernarg.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    };
    if (type == "u32" || type == "i32") { const uint32_t v = static_cast<uint32_t>(std::stoll(value, nullptr, 0)); append(&v, 4); }
    else if (type == "u64") { const uint64_t v = std::stoull(value, nullptr, 0); append(&v, 8); }
    else if (type == "f32") { const float v = std::stof(value); append(&v, 4); }
    else if (type == "ptr") { const uint64_t v = address_of(value); append(&v, 8); }
    else die("unknown --arg type " + type);
  }
  for (const auto& [off, name] : ptr_patches) {
    if (off + 8 > kernarg.size()) die("--ptr offset beyond the kernel arguments");
    const uint64_t v = address_of(name);
    std::memcpy(kernarg.data() + off, &v, 8);
  }
  d.kernarg = kernarg.data();
  d.kernarg_size = kernarg.size();
  for (auto& [name, buf] : buffers)
    d.regions.push_back({reinterpret_cast<uint64_t>(buf.bytes.data()), buf.bytes.size(), true, name});

  if (!model.empty()) {
    // Predicted time on the modelled MI355X; the kernel runs (on the emulator) only on the
    // CUs simulated, so its outputs are not written in full and --output is refused.
    if (!outputs.empty()) die("--output cannot be combined with --model (only sampled workgroups run)");
    zyfa::emu::timing::Geometry g;
    g.object = obj.get();
    g.kernel = kernel;
    for (int i = 0; i < 3; ++i) { g.grid[i] = d.grid[i]; g.block[i] = d.block[i]; }
    g.dynamic_lds_bytes = d.dynamic_lds_bytes;
    zyfa::emu::timing::ModelOptions m;
    m.cus = model_cus;
    const auto p = zyfa::emu::timing::predict(
        g, [&](const DispatchOptions& o) { return zyfa::emu::run_dispatch(d, o); }, opt, m);
    std::cout << p.json() << "\n";
    if (!p.ok) {
      std::cerr << "FAULT: " << p.error << "\n";
      return 1;
    }
    return 0;
  }
  const auto r = zyfa::emu::run_dispatch(d, opt);
  std::cerr << fmt::format("{} workgroups, {} waves, {} instructions, {} lane-instructions in {:.3f} s ({:.1f} M lane-instr/s)\n",
                           r.stats.workgroups, r.stats.waves, r.stats.instructions, r.stats.lane_instructions,
                           r.stats.seconds, r.stats.lane_instructions / 1e6 / std::max(r.stats.seconds, 1e-9));
  if (r.stats.scratch_lane_bytes)
    std::cerr << fmt::format("scratch: {} bytes per work-item ({} per wave), {} of them used\n", r.stats.scratch_lane_bytes,
                             uint64_t(r.stats.scratch_lane_bytes) * 64, r.stats.scratch_used_bytes);
  for (const auto& w : r.warnings) std::cerr << "warning: " << w.text << "\n";
  if (!r.ok) {
    std::cerr << "FAULT: " << r.error << "\n";
    return 1;
  }
  for (const auto& [name, file] : outputs) {
    auto it = buffers.find(name);
    if (it == buffers.end()) die("no buffer named " + name);
    std::ofstream f(file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(it->second.bytes.data()), static_cast<std::streamsize>(it->second.bytes.size()));
  }
  std::cout << "ok\n";
  return 0;
}
