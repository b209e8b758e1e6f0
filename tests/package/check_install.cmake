# cmake -P script: install into a temporary prefix; find_package from a clean project, build and
# run the examples; build C and C++11 consumers with pkg-config alone; then move the prefix
# elsewhere and check that the installed demo and the pkg-config file still work there.
include(${CMAKE_CURRENT_LIST_DIR}/package_common.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/zyfa/zyfa.h include/zyfa/zyfa.hpp include/zyfa/version.h include/zyfa/export.h
          lib/cmake/zyfa/zyfaConfig.cmake lib/cmake/zyfa/zyfaConfigVersion.cmake lib/pkgconfig/zyfa.pc
          lib/libzyfa.so bin/zyfa-demo)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
no_fmt_needed(${prefix}/lib/libzyfa.so)

run(${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${WORK_DIR}/examples -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples --target zyfa-example-01-quickstart zyfa-example-02-fp8 zyfa-example-04-varlen)
run(${WORK_DIR}/examples/zyfa-example-01-quickstart)
run(${WORK_DIR}/examples/zyfa-example-02-fp8)
run(${WORK_DIR}/examples/zyfa-example-04-varlen)

build_and_run_consumers(${prefix}/lib/pkgconfig ${prefix}/lib ${WORK_DIR}/consumers)

# The same tree under another prefix, the original gone: the demo finds libzyfa through its
# RUNPATH ($ORIGIN/../lib) and pkg-config through ${pcfiledir}.
set(moved ${WORK_DIR}/moved/elsewhere)
file(MAKE_DIRECTORY ${WORK_DIR}/moved)
file(RENAME ${prefix} ${moved})
run(${READELF} -d ${moved}/bin/zyfa-demo)
if(NOT RUN_OUT MATCHES "RUNPATH[^\n]*\\$ORIGIN/\\.\\./lib")
  message(FATAL_ERROR "bin/zyfa-demo has no RUNPATH $ORIGIN/../lib:\n${RUN_OUT}")
endif()
run(${CLEAN_ENV} ${moved}/bin/zyfa-demo --backend cpu --seqlen 64 --heads 2 --heads-k 1)
build_and_run_consumers(${moved}/lib/pkgconfig ${moved}/lib ${WORK_DIR}/consumers-moved)
