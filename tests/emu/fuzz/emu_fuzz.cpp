// The emulator under fuzz: an input is either a structured kernel (header + instruction words
// patched into a template code object) or a list of byte edits of the whole template file
// (loader, metadata and descriptor parsing). Both go through LoadedCodeObject (ELF, msgpack,
// decoder) and, when that accepts them, run_dispatch on one host thread.
#include "emu_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <vector>

#include "emu/emulator.h"
#include "emu/loader/code_object.h"

namespace zyfa::emu::fuzz {
namespace {

std::vector<uint8_t> g_template;
size_t g_kd = 0;                     // file offset of the kernel descriptor
size_t g_text = 0, g_text_bytes = 0;  // file offset and size of .text

// AMDGPU kernel descriptor field offsets (LLVM AMDGPUUsage, "Kernel Descriptor").
constexpr size_t kKdGroupSegment = 0, kKdRsrc3 = 44, kKdRsrc1 = 48, kKdRsrc2 = 52, kKdProperties = 56,
                 kKdPreload = 58;

template <typename T>
void put(std::vector<uint8_t>& f, size_t at, T v) {
  std::memcpy(f.data() + at, &v, sizeof(T));
}
template <typename T>
T get(const std::vector<uint8_t>& f, size_t at) {
  T v;
  std::memcpy(&v, f.data() + at, sizeof(T));
  return v;
}

void run_object(const std::vector<uint8_t>& file, uint32_t waves, uint32_t grid, const uint32_t args[4]) {
  std::unique_ptr<LoadedCodeObject> object;
  try {
    object = std::make_unique<LoadedCodeObject>(file.data(), file.size());
  } catch (const std::runtime_error&) {
    return;  // rejected with a message: fine
  }
  std::vector<uint32_t> out(1024, 0xDEADBEEFu), in(1024, 0x3F800000u);
  uint8_t kernarg[32];
  const uint64_t out_ptr = reinterpret_cast<uint64_t>(out.data()), in_ptr = reinterpret_cast<uint64_t>(in.data());
  std::memcpy(kernarg, &out_ptr, 8);
  std::memcpy(kernarg + 8, &in_ptr, 8);
  std::memcpy(kernarg + 16, args, 16);
  for (const KernelInfo& k : object->kernels()) {
    Dispatch d;
    d.object = object.get();
    d.kernel = k.name;
    d.grid[0] = grid;
    d.block[0] = 64 * waves;
    d.kernarg = kernarg;
    d.kernarg_size = sizeof(kernarg);
    d.regions.push_back({out_ptr, 4 * out.size(), true, "out"});
    d.regions.push_back({in_ptr, 4 * in.size(), false, "in"});
    DispatchOptions opt;
    opt.seed = args[0] | 1;
    opt.threads = 1;
    opt.max_instructions_per_wave = 4096;
    // Half the inputs under the hardware rules: MFMA hazards there go through the timing
    // model's replay (emu/timing/cycle_hazards.cpp).
    opt.rules = (args[0] & 2) ? RuleSet::kHardware : RuleSet::kStrict;
    const DispatchResult r = run_dispatch(d, opt);
    // Faults are the emulator's answer; an exception other than a kernel fault is not.
    if (!r.ok && r.error.find("emulator error") != std::string::npos) {
      std::fprintf(stderr, "emu fuzz: exception escaped the executor: %s\n", r.error.c_str());
      std::abort();
    }
  }
}

}  // namespace

void load_template(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  g_template.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (g_template.empty()) throw std::runtime_error("cannot read fuzz template " + path);
  const LoadedCodeObject object(g_template.data(), g_template.size());
  g_text = object.text_file_offset();
  g_text_bytes = object.text_end() - object.text_begin();
  // The descriptor: group segment 0x1234, private 0, kernarg size 64 (kernels/fuzz_template.s).
  const uint8_t mark[12] = {0x34, 0x12, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0};
  size_t found = 0, count = 0;
  for (size_t i = 0; i + 64 <= g_template.size(); i += 4) {
    if (std::memcmp(&g_template[i], mark, sizeof(mark)) == 0) {
      found = i;
      ++count;
    }
  }
  if (count != 1 || g_text_bytes < 8) throw std::runtime_error("fuzz template: descriptor or text not found");
  g_kd = found;
}

int run_one(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) return 0;
  std::vector<uint8_t> file = g_template;
  uint32_t args[4];
  std::memcpy(args, data + 8, 8);
  args[2] = data[4];
  args[3] = data[5];
  const uint32_t waves = 1 + (data[3] & 3), grid = 1 + ((data[3] >> 2) & 1);
  if ((data[0] & 7) == 0) {
    // Byte edits of the whole file: (offset low, offset high, value) triples.
    for (size_t i = kHeaderBytes; i + 3 <= size; i += 3) {
      const size_t at = (size_t(data[i]) | (size_t(data[i + 1]) << 8)) % file.size();
      file[at] = data[i + 2];
    }
    run_object(file, waves, grid, args);
    return 0;
  }
  // Structured: the descriptor from the header, the text from the rest.
  uint32_t rsrc1 = get<uint32_t>(file, g_kd + kKdRsrc1), rsrc2 = get<uint32_t>(file, g_kd + kKdRsrc2);
  rsrc1 = (rsrc1 & ~0x3Fu) | (data[1] & 0x3F);                   // VGPR granules: 8..512
  if (data[0] & 0x08) rsrc1 ^= uint32_t(data[6]) << 12;          // float round/denorm modes
  if (data[0] & 0x10) rsrc2 = (rsrc2 & ~0x3Eu) | ((data[7] & 0x1F) << 1);  // USER_SGPR_COUNT
  if (data[0] & 0x20) rsrc2 ^= uint32_t(data[7] >> 5) << 7;      // workgroup id enables
  put<uint32_t>(file, g_kd + kKdRsrc1, rsrc1);
  put<uint32_t>(file, g_kd + kKdRsrc2, rsrc2);
  put<uint32_t>(file, g_kd + kKdRsrc3, (get<uint32_t>(file, g_kd + kKdRsrc3) & ~0x3Fu) | (data[2] & 0x3F));
  if (data[0] & 0x40) {
    put<uint16_t>(file, g_kd + kKdProperties, uint16_t(get<uint16_t>(file, g_kd + kKdProperties) ^ (data[14] & 0x7F)));
    put<uint16_t>(file, g_kd + kKdPreload, uint16_t(data[15] | (uint16_t(data[13]) << 7)));
  }
  if (data[0] & 0x80) put<uint32_t>(file, g_kd + kKdGroupSegment, uint32_t(data[12]) << 8);
  const size_t text = std::min(size - kHeaderBytes, g_text_bytes) & ~size_t(3);
  std::memcpy(file.data() + g_text, data + kHeaderBytes, text);
  run_object(file, waves, grid, args);
  return 0;
}

}  // namespace zyfa::emu::fuzz
