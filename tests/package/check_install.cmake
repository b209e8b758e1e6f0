# cmake -P script: install, find_package from a clean project, build and run.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/zyfa/zyfa.h include/zyfa/zyfa.hpp include/zyfa/version.h include/zyfa/export.h
          lib/cmake/zyfa/zyfaConfig.cmake lib/cmake/zyfa/zyfaConfigVersion.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${WORK_DIR}/examples -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples --target zyfa-example-01-quickstart zyfa-example-02-fp8)
run(${WORK_DIR}/examples/zyfa-example-01-quickstart)
run(${WORK_DIR}/examples/zyfa-example-02-fp8)
