// The build passes lists to the tests as one '|'-separated string: an LLVM tool's command
// words (the generated wrapper and its arguments), the code objects to check.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace zyfa::emu::test {

inline std::vector<std::string> split_bar_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, '|'))
    if (!item.empty()) out.push_back(item);
  return out;
}

// A shell command that runs the tool of `command_words` (quoted word by word), then `args`.
inline std::string tool_command(const std::string& command_words, const std::string& args) {
  std::string cmd;
  for (const auto& part : split_bar_list(command_words)) cmd += "'" + part + "' ";
  return cmd + args;
}

}  // namespace zyfa::emu::test
