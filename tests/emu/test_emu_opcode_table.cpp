// The opcode tables against the real disassembler: for every opcode of every encoding, words
// with that opcode (a few operand variants, since LLVM rejects some field combinations) are
// disassembled by llvm-mc, and each table entry must be confirmed by LLVM under exactly its
// spelling; no opcode LLVM decodes in a probed encoding may be missing from the tables.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bar_list.h"
#include "emu/core/decoder.h"

namespace zyfa::emu {
namespace {

struct Probe {
  Encoding enc;
  uint8_t seg;      // FLAT segment
  unsigned ops;     // opcode count
  std::function<std::vector<std::vector<uint32_t>>(uint32_t)> words;  // variants per opcode
  std::function<bool(uint32_t)> is_class;                             // word0 belongs here
  std::function<uint32_t(uint32_t)> op_of;
};

const uint32_t kNop = 0xBF800000u;  // trailing dword for literal forms (decodes as s_nop)

std::vector<Probe> probes() {
  auto field = [](int hi, int lo) { return [=](uint32_t w) { return (w >> lo) & ((1u << (hi - lo + 1)) - 1); }; };
  std::vector<Probe> p;
  p.push_back({Encoding::kSop2, 0, 0x60, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0x80000000u | op << 23 | 4u << 16 | 2u << 8 | 6}}; },
               [](uint32_t w) { return (w >> 30) == 2 && (w >> 28) != 0xB; }, field(29, 23)});
  p.push_back({Encoding::kSopk, 0, 0x1D, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0xB0000000u | op << 23 | 4u << 16 | 0x10}, {0xB0000000u | op << 23 | 4u << 16 | 0x10, kNop}}; },
               [](uint32_t w) { return (w >> 28) == 0xB && ((w >> 23) & 0x1F) < 0x1D; }, field(27, 23)});
  p.push_back({Encoding::kSop1, 0, 256, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0xBE800000u | 4u << 16 | op << 8 | 2}}; },
               [](uint32_t w) { return (w >> 23) == 0x17D; }, field(15, 8)});
  p.push_back({Encoding::kSopc, 0, 128, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0xBF000000u | op << 16 | 2u << 8 | 4}}; },
               [](uint32_t w) { return (w >> 23) == 0x17E; }, field(22, 16)});
  p.push_back({Encoding::kSopp, 0, 128, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0xBF800000u | op << 16 | 1}, {0xBF800000u | op << 16}}; },
               [](uint32_t w) { return (w >> 23) == 0x17F; }, field(22, 16)});
  p.push_back({Encoding::kSmem, 0, 256, [](uint32_t op) {
                 return std::vector<std::vector<uint32_t>>{{0xC0000000u | op << 18 | 1u << 17 | 4u << 6 | 2, 0x10},
                                                           {0xC0000000u | op << 18 | 1u << 17 | 2, 0x10},
                                                           {0xC0000000u | op << 18, 0}}; },
               [](uint32_t w) { return (w >> 26) == 0x30; }, field(25, 18)});
  p.push_back({Encoding::kVop2, 0, 62, [](uint32_t op) {
                 return std::vector<std::vector<uint32_t>>{{op << 25 | 6u << 17 | 4u << 9 | 0x102}, {op << 25 | 6u << 17 | 4u << 9 | 0x102, kNop}}; },
               [](uint32_t w) { return (w >> 31) == 0 && (w >> 25) != 0x3F && (w >> 25) != 0x3E; }, field(30, 25)});
  p.push_back({Encoding::kVop1, 0, 256, [](uint32_t op) {
                 return std::vector<std::vector<uint32_t>>{{0x7E000000u | 6u << 17 | op << 9 | 0x102}, {0x7E000000u | op << 9 | 0x100}}; },
               [](uint32_t w) { return (w >> 25) == 0x3F; }, field(16, 9)});
  p.push_back({Encoding::kVopc, 0, 256, [](uint32_t op) { return std::vector<std::vector<uint32_t>>{{0x7C000000u | op << 17 | 4u << 9 | 0x102}}; },
               [](uint32_t w) { return (w >> 25) == 0x3E; }, field(24, 17)});
  p.push_back({Encoding::kVop3, 0, 0x380, [](uint32_t op) {
                 return std::vector<std::vector<uint32_t>>{{0xD0000000u | op << 16 | 8, 0x106u << 18 | 0x104u << 9 | 0x102},
                                                           {0xD0000000u | op << 16 | 8, 0x102},
                                                           {0xD0000000u | op << 16, 0x100}}; },
               [](uint32_t w) { return (w >> 26) == 0x34 && ((w >> 16) & 0x3FF) < 0x380; }, field(25, 16)});
  p.push_back({Encoding::kVop3p, 0, 128, [](uint32_t op) {
                 // v_mfma_ld_scale_b32 only exists as the first half of a scaled MFMA.
                 if (op == 0x2C) return std::vector<std::vector<uint32_t>>{{0xD3AC0000u, 0x00003C1Eu, 0xD3AE8800u, 0x02029132u}};
                 return std::vector<std::vector<uint32_t>>{{0xD3800000u | op << 16 | 16, 0x110u << 18 | 0x120u << 9 | 0x130},
                                                           {0xD3800000u | op << 16 | 16, 0x100u << 18 | 0x100u << 9 | 0x100},
                                                           {0xD3800000u | op << 16 | 8, 0x106u << 18 | 0x104u << 9 | 0x102},
                                                           {0xD3800000u | op << 16 | 8, 0x102}}; },
               [](uint32_t w) { return (w >> 23) == 0x1A7; }, field(22, 16)});
  p.push_back({Encoding::kDs, 0, 256, [](uint32_t op) {
                 std::vector<std::vector<uint32_t>> v;
                 for (uint32_t abc : {0x080604u, 0x000004u, 0x080000u, 0u, 0x080004u, 0x080600u, 0x000604u})
                   v.push_back({0xD8000000u | op << 17, (abc >> 16) << 24 | ((abc >> 8) & 0xFF) << 16 | (abc & 0xFF) << 8 | 2});
                 return v; },
               [](uint32_t w) { return (w >> 26) == 0x36; }, field(24, 17)});
  p.push_back({Encoding::kMubuf, 0, 128, [](uint32_t op) {
                 return std::vector<std::vector<uint32_t>>{{0xE0000000u | op << 18 | 1u << 12, 0x80u << 24 | 1u << 16 | 4u << 8 | 2},
                                                           {0xE0000000u | op << 18 | 1u << 12 | 1u << 16, 0x80u << 24 | 1u << 16 | 2},
                                                           {0xE0000000u | op << 18 | 1u << 15, 0}}; },
               [](uint32_t w) { return (w >> 26) == 0x38; }, field(24, 18)});
  for (uint8_t seg : {0, 1, 2}) {
    p.push_back({Encoding::kFlat, seg, 128, [seg](uint32_t op) {
                   std::vector<std::vector<uint32_t>> v;
                   for (uint32_t ab : {0x0804u, 0x0004u, 0x0800u})
                     v.push_back({0xDC000000u | op << 18 | uint32_t(seg) << 14, (ab >> 8) << 24 | (seg ? 0x7Fu : 0u) << 16 | (ab & 0xFF) << 8 | 2});
                   return v; },
                 [seg](uint32_t w) { return (w >> 26) == 0x37 && ((w >> 14) & 3) == seg; }, field(24, 18)});
  }
  return p;
}

std::string hex_line(const std::vector<uint32_t>& words) {
  std::string s;
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "%s0x%02x", s.empty() ? "" : ",", (w >> (8 * b)) & 0xFF);
      s += buf;
    }
  return s;
}

TEST(EmuOpcodeTable, EveryEntryConfirmedByLlvmMc) {
  const std::string cmd = test::tool_command(ZYFA_EMU_LLVM_MC, "");
  const std::string in_file = std::string(ZYFA_EMU_SCRATCH_DIR) + "/opcode_probe.txt";
  int checked = 0;
  for (const Probe& probe : probes()) {
    {
      std::ofstream f(in_file);
      for (unsigned op = 0; op < probe.ops; ++op)
        for (const auto& w : probe.words(op)) f << hex_line(w) << "\n";
    }
    FILE* p = popen((cmd + "-triple=amdgcn-amd-amdhsa -mcpu=gfx950 -disassemble -show-encoding '" + in_file + "' 2>/dev/null").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::map<uint32_t, std::string> llvm;  // opcode -> mnemonic LLVM printed
    char line[4096];
    while (fgets(line, sizeof(line), p)) {
      std::string l(line);
      const size_t enc = l.find("encoding: [");
      if (enc == std::string::npos) continue;
      std::istringstream ls(l);
      std::string mnemonic;
      ls >> mnemonic;
      uint32_t w0 = 0;
      std::stringstream bytes(l.substr(enc + 11));
      for (int b = 0; b < 4; ++b) {
        std::string tok;
        std::getline(bytes, tok, b < 3 ? ',' : ']');
        w0 |= uint32_t(std::stoul(tok, nullptr, 16)) << (8 * b);
      }
      if (!probe.is_class(w0)) continue;
      // The scaled MFMA prints as one instruction; its first dword pair is v_mfma_ld_scale_b32.
      if (mnemonic.rfind("v_mfma_scale_", 0) == 0) mnemonic = "v_mfma_ld_scale_b32";
      llvm.emplace(probe.op_of(w0), mnemonic);
    }
    ASSERT_EQ(pclose(p), 0) << "llvm-mc failed on " << encoding_name(probe.enc);
    ASSERT_FALSE(llvm.empty()) << encoding_name(probe.enc);
    for (unsigned op = 0; op < probe.ops; ++op) {
      const char* mine = opcode_mnemonic(probe.enc, op, probe.seg);
      auto it = llvm.find(op);
      if (it != llvm.end()) {
        EXPECT_TRUE(mine != nullptr) << encoding_name(probe.enc) << " opcode " << op << " (" << it->second << ") is missing";
        if (mine) EXPECT_EQ(it->second, mine) << encoding_name(probe.enc) << " opcode " << op;
        ++checked;
      } else if (mine) {
        ADD_FAILURE() << encoding_name(probe.enc) << " opcode " << op << " '" << mine << "' not confirmed by llvm-mc";
      }
    }
  }
  std::printf("%d opcodes agree with llvm-mc\n", checked);
}

}  // namespace
}  // namespace zyfa::emu
