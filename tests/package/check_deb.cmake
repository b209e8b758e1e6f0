# cmake -P script: `cpack -G DEB` of the build, then the package inspected without installing
# it: its file list and fields (dpkg-deb), and its tree unpacked with dpkg -x into a scratch
# directory, where the installed demo runs through its RUNPATH and the consumers build with
# the packaged pkg-config file.
include(${CMAKE_CURRENT_LIST_DIR}/package_common.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run(${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/out)
file(GLOB debs ${WORK_DIR}/out/*.deb)
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cpack -G DEB made ${n} packages: ${debs}")
endif()

run(${DPKG_DEB} -c ${debs})
foreach(f ./usr/lib/libzyfa.so.0 ./usr/include/zyfa/zyfa.h ./usr/include/zyfa/zyfa.hpp
          ./usr/include/zyfa/version.h ./usr/lib/cmake/zyfa/zyfaConfig.cmake ./usr/lib/pkgconfig/zyfa.pc
          ./usr/bin/zyfa-demo)
  string(FIND "${RUN_OUT}" " ${f}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${debs} lacks ${f}:\n${RUN_OUT}")
  endif()
endforeach()
if(RUN_OUT MATCHES "/usr/local/|/build")
  message(FATAL_ERROR "${debs} holds build or /usr/local paths:\n${RUN_OUT}")
endif()
run(${DPKG_DEB} -f ${debs} Package Version Architecture Depends)
if(NOT RUN_OUT MATCHES "Package: zyfa\n" OR NOT RUN_OUT MATCHES "Version: ${VERSION}\n" OR
   RUN_OUT MATCHES "libfmt")
  message(FATAL_ERROR "unexpected control fields:\n${RUN_OUT}")
endif()

set(root ${WORK_DIR}/root)
run(${DPKG} -x ${debs} ${root})
no_fmt_needed(${root}/usr/lib/libzyfa.so.0)
run(${CLEAN_ENV} ${root}/usr/bin/zyfa-demo --backend cpu --seqlen 64 --heads 2 --heads-k 1)
build_and_run_consumers(${root}/usr/lib/pkgconfig ${root}/usr/lib ${WORK_DIR}/consumers)
