// One fuzz execution of the gfx950 emulator: decode and run a code object made from `data`
// (tests/emu/fuzz/emu_fuzz.cpp). Any outcome the emulator reports (a fault, a rejected code
// object, a clean run) is fine; a crash, a sanitizer report or an escaping exception is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zyfa::emu::fuzz {

// Reads the template code object (kernels/fuzz_template.s, assembled); throws on error.
void load_template(const std::string& path);
// Runs one input; returns 0 (the libFuzzer convention).
int run_one(const uint8_t* data, size_t size);
// Size of the header that precedes the instruction words in a structured input.
constexpr size_t kHeaderBytes = 16;

}  // namespace zyfa::emu::fuzz
