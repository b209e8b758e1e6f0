# Helpers of the package checks (cmake -P scripts): run a command or fail with its output, and
# build the consumers with the flags pkg-config gives for a given pkgconfig directory.

# run(<command...>): fails the script with the command's output unless it exits with 0; the
# output is left in RUN_OUT.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  set(RUN_OUT "${out}" PARENT_SCOPE)
endfunction()

# A clean environment for programs under test: nothing on the library path, so an installed
# program finds libzyfa through its own RUNPATH or not at all.
set(CLEAN_ENV ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=PKG_CONFIG_PATH)

# pkg_config_flags(<pcdir> <var>): `pkg-config --cflags --libs zyfa` with only <pcdir> searched,
# as a list.
function(pkg_config_flags pcdir var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${pcdir} --unset=PKG_CONFIG_PATH
                          ${PKG_CONFIG} --cflags --libs zyfa
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config found no zyfa in ${pcdir}: ${err}")
  endif()
  message(STATUS "pkg-config --cflags --libs zyfa (${pcdir}): ${out}")
  separate_arguments(flags UNIX_COMMAND "${out}")
  set(${var} ${flags} PARENT_SCOPE)
endfunction()

# build_and_run_consumers(<pcdir> <libdir> <workdir>): the C consumer and the C++11 consumer,
# built with the pkg-config flags alone and run against <libdir>; the C++ header must refuse
# C++98 with its own message.
function(build_and_run_consumers pcdir libdir workdir)
  file(MAKE_DIRECTORY ${workdir})
  pkg_config_flags(${pcdir} flags)
  run(${C_COMPILER} -std=c11 -Wall -Wextra -Werror -pedantic ${SOURCE_DIR}/consumer.c -o ${workdir}/consumer-c ${flags})
  run(${CLEAN_ENV} LD_LIBRARY_PATH=${libdir} ${workdir}/consumer-c)
  run(${CXX_COMPILER} -std=c++11 -Wall -Wextra -Werror -pedantic ${SOURCE_DIR}/consumer_cxx11.cpp
      -o ${workdir}/consumer-cxx11 ${flags})
  run(${CLEAN_ENV} LD_LIBRARY_PATH=${libdir} ${workdir}/consumer-cxx11)
  execute_process(COMMAND ${CXX_COMPILER} -std=c++98 -fsyntax-only ${SOURCE_DIR}/consumer_cxx11.cpp ${flags}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(rc EQUAL 0 OR NOT err MATCHES "zyfa/zyfa.hpp needs C\\+\\+11 or later")
    message(FATAL_ERROR "zyfa.hpp under -std=c++98: expected its own #error, got (${rc}):\n${err}")
  endif()
endfunction()

# no_fmt_needed(<library>): libzyfa must not need libfmt at run time (fmt is compiled in).
function(no_fmt_needed lib)
  run(${READELF} -d ${lib})
  if(RUN_OUT MATCHES "NEEDED[^\n]*libfmt")
    message(FATAL_ERROR "${lib} needs libfmt at run time:\n${RUN_OUT}")
  endif()
endfunction()
