#include "emu/core/valu_ops.h"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "emu/core/decoder.h"

namespace zyfa::emu {
namespace {

ValuType type_of(const std::string& t) {
  if (t == "f32") return ValuType::kF32;
  if (t == "f16") return ValuType::kF16;
  if (t == "f64") return ValuType::kF64;
  if (t == "bf16") return ValuType::kBF16;
  if (t == "i64" || t == "u64" || t == "b64") return ValuType::kI64;
  if (t == "i16" || t == "u16" || t == "b16") return ValuType::kI16;
  if (t == "i32" || t == "u32" || t == "b32" || t == "i24" || t == "u24") return ValuType::kB32;
  return ValuType::kOther;
}

std::vector<std::string> split(std::string s) {
  for (const char* suffix : {"_e64", "_e32"})
    if (s.size() > 4 && s.compare(s.size() - 4, 4, suffix) == 0) s.resize(s.size() - 4);
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == '_') { parts.push_back(s.substr(start, i - start)); start = i + 1; }
  return parts;
}

struct Table {
  std::array<ValuOpInfo, 1024> info{};
  Table() {
    static const char* fconds[] = {"f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"};
    static const char* iconds[] = {"f", "lt", "eq", "le", "gt", "ne", "ge", "t"};
    for (unsigned op = 0; op < 1024; ++op) {
      const char* name = opcode_mnemonic(Encoding::kVop3, op);
      if (!name) continue;
      const std::vector<std::string> p = split(name);
      ValuOpInfo& i = info[op];
      if (p.size() < 2) continue;
      const ValuType last = type_of(p.back());
      i.src = last == ValuType::kOther ? ValuType::kB32 : last;
      i.dst = i.src;
      if (p[1] == "cvt" && p.size() >= 4) {
        const ValuType first = type_of(p[p.size() - 2]);
        if (first != ValuType::kOther) i.dst = first;
      }
      if (p[1] == "cmp" || p[1] == "cmpx") {
        i.is_cmp = true;
        i.is_cmpx = p[1] == "cmpx";
        i.dst = ValuType::kOther;
        if (p[2] == "class") { i.is_class = true; continue; }
        const bool is_float = last == ValuType::kF32 || last == ValuType::kF16 || last == ValuType::kF64;
        i.is_signed = p.back()[0] == 'i';
        if (is_float) {
          for (int c = 0; c < 16; ++c) if (p[2] == fconds[c]) i.cond = c;
        } else {
          for (int c = 0; c < 8; ++c) if (p[2] == iconds[c]) i.cond = c;
        }
      }
    }
  }
};

}  // namespace

const ValuOpInfo& valu_op_info(uint16_t valu_op) {
  static const Table t;
  return t.info[valu_op & 1023];
}

}  // namespace zyfa::emu
