// The decoder against the real disassembler: every instruction of every embedded code object
// and of the hand-written test kernels must decode to the mnemonic llvm-objdump prints, in
// the same sequence (so instruction sizes, literals and the two-part scaled MFMA agree too).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bar_list.h"
#include "emu/loader/code_object.h"
#include "kernel_harness.h"

namespace zyfa::emu::test {
namespace {

std::vector<std::string> objdump_mnemonics(const std::string& file) {
  const std::string cmd =
      tool_command(ZYFA_EMU_OBJDUMP, "-d --no-show-raw-insn --no-leading-addr '" + file + "' 2>&1");
  std::vector<std::string> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (fgets(line, sizeof(line), p)) {
    if (line[0] != '\t' && line[0] != ' ') continue;
    std::istringstream ls(line);
    std::string m;
    ls >> m;
    if (!m.empty() && (m[0] == 's' || m[0] == 'v' || m[0] == 'd' || m[0] == 'b' || m[0] == 'g' || m[0] == 'f'))
      out.push_back(m);
  }
  const int rc = pclose(p);
  if (rc != 0) out.clear();
  return out;
}

std::vector<std::string> code_objects() {
  std::vector<std::string> files = split_bar_list(ZYFA_EMU_CODE_OBJECT_FILES);
  for (const char* k : {"salu", "valu", "memory", "waitcnt", "lds", "hazards", "ds", "smem", "dispatch", "hidden"})
    files.push_back(std::string(ZYFA_EMU_TEST_KERNEL_DIR) + "/" + k + ".co");
  return files;
}

class Decoder : public ::testing::TestWithParam<std::string> {};

TEST_P(Decoder, MatchesLlvmObjdump) {
  const std::string file = GetParam();
  const std::vector<uint8_t> bytes = read_binary(file);
  ASSERT_FALSE(bytes.empty()) << file;
  const LoadedCodeObject obj(bytes.data(), bytes.size());
  const std::vector<std::string> want = objdump_mnemonics(file);
  ASSERT_FALSE(want.empty()) << "llvm-objdump (" << ZYFA_EMU_OBJDUMP << ") gave nothing for " << file;
  const auto& got = obj.instructions();
  ASSERT_EQ(got.size(), want.size()) << file << ": instruction count differs";
  size_t mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i] != got[i].name) {
      if (++mismatches <= 10)
        ADD_FAILURE() << file << " pc 0x" << std::hex << got[i].pc << ": decoded " << got[i].name << ", llvm-objdump "
                      << want[i];
    }
  }
  EXPECT_EQ(mismatches, 0u);
  std::printf("%s: %zu instructions agree\n", file.c_str(), got.size());
}

INSTANTIATE_TEST_SUITE_P(Emu, Decoder, ::testing::ValuesIn(code_objects()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(i.param.rfind('/') + 1);
                           for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace zyfa::emu::test
