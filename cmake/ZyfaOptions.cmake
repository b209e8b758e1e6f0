# User-facing build options.
option(ZYFA_BUILD_TESTS "Build the GoogleTest suite" ON)
option(ZYFA_BUILD_BENCH "Build benchmarks and the accuracy report" ON)
option(ZYFA_BUILD_EXAMPLES "Build the examples" ON)
option(ZYFA_AMD "Build the AMD backends (hip, emu); configure fails when no gfx950 toolchain is found" ON)
set(ZYFA_AMD_TOOLCHAIN "auto" CACHE STRING "gfx950 toolchain: auto, rocm, sysroot or off")
set_property(CACHE ZYFA_AMD_TOOLCHAIN PROPERTY STRINGS auto rocm sysroot off)
set(ZYFA_CUDA "auto" CACHE STRING "NVIDIA backend: auto (if nvcc is found), on or off")
set_property(CACHE ZYFA_CUDA PROPERTY STRINGS auto on off)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

find_program(ZYFA_CCACHE ccache)
if(ZYFA_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${ZYFA_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${ZYFA_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${ZYFA_CCACHE})
endif()

# Set by the backend subdirectories; summarized at the end of configure.
set(ZYFA_HAVE_HIP 0)
set(ZYFA_HAVE_EMU 0)
set(ZYFA_HAVE_CUDA 0)
set(ZYFA_AMD_TOOLCHAIN_SUMMARY "off")
set(ZYFA_CUDA_SUMMARY "off")
