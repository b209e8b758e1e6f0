# cmake -P script. With no ROCm and no sysroot, the default configure must fail and say why and
# what to do; with -DZYFA_AMD=OFF the same configure must succeed without the AMD backends.
file(REMOVE_RECURSE ${WORK_DIR})
set(common -S ${SOURCE_DIR} -G ${GENERATOR} -DZYFA_CUDA=off -DZYFA_BUILD_BENCH=OFF
    -DZYFA_BUILD_EXAMPLES=OFF -DZYFA_BUILD_TESTS=OFF
    -DZYFA_SYSROOT_DIR=${WORK_DIR}/no-such-sysroot)
set(ENV{ROCM_PATH} ${WORK_DIR}/no-such-rocm)

execute_process(COMMAND ${CMAKE_COMMAND} ${common} -B ${WORK_DIR}/default
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "configure without a gfx950 toolchain succeeded; it must fail:\n${out}")
endif()
foreach(needle "No usable gfx950 toolchain" "no-such-sysroot" "no-such-rocm" "-DZYFA_AMD=OFF")
  string(FIND "${err}" "${needle}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the configure error does not mention '${needle}':\n${err}")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} ${common} -B ${WORK_DIR}/amd-off -DZYFA_AMD=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with -DZYFA_AMD=OFF failed:\n${out}\n${err}")
endif()
string(FIND "${out}" "off (ZYFA_AMD=OFF)" at)
if(at LESS 0)
  message(FATAL_ERROR "the summary does not say the AMD backends are off on request:\n${out}")
endif()
message(STATUS "configure refuses a missing toolchain and accepts -DZYFA_AMD=OFF")
