message(STATUS "")
message(STATUS "zyfa ${PROJECT_VERSION} configuration")
message(STATUS "  build type        : ${CMAKE_BUILD_TYPE}")


message(STATUS "  gfx950 toolchain  : ${ZYFA_AMD_TOOLCHAIN_SUMMARY}")
message(STATUS "  hip / emu         : ${ZYFA_HAVE_HIP} / ${ZYFA_HAVE_EMU}")
message(STATUS "  cuda              : ${ZYFA_CUDA_SUMMARY}")
message(STATUS "  tests / bench / examples : ${ZYFA_BUILD_TESTS} / ${ZYFA_BUILD_BENCH} / ${ZYFA_BUILD_EXAMPLES}")
message(STATUS "")
