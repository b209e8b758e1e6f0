// libFuzzer entry of the emulator fuzzer (clang -fsanitize=fuzzer). The template code object
// comes from $ZYFA_EMU_FUZZ_TEMPLATE or the path compiled in.
#include <cstdlib>

#include "emu_fuzz.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("ZYFA_EMU_FUZZ_TEMPLATE");
  zyfa::emu::fuzz::load_template(env ? env : ZYFA_EMU_FUZZ_TEMPLATE);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return zyfa::emu::fuzz::run_one(data, size);
}
