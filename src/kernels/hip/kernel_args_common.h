// Shared by host C++ (g++/clang) and gfx950 device code (HIP and the generated assembly):
// the kernel-argument structs are the one definition both sides compile.
#pragma once

#include <stddef.h>
#include <stdint.h>

// Packed so that no compiler may insert padding; every field is still naturally aligned
// (the static_asserts check offsets), and aligned(8) keeps the kernarg loads wide.
#define ZYFA_KERNEL_ARGS __attribute__((packed, aligned(8)))
