# Installs libzyfa, its headers, a CMake package (find_package(zyfa) gives zyfa::zyfa) and a
# pkg-config file; packages the same tree as a .deb with CPack.
include(CMakePackageConfigHelpers)

install(TARGETS zyfa EXPORT zyfaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zyfa DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${ZYFA_GENERATED_INCLUDE}/zyfa/version.h ${ZYFA_GENERATED_INCLUDE}/zyfa/export.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/zyfa)

set(ZYFA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/zyfa)
install(EXPORT zyfaTargets NAMESPACE zyfa:: DESTINATION ${ZYFA_CMAKE_DIR})
configure_package_config_file(cmake/zyfaConfig.cmake.in ${PROJECT_BINARY_DIR}/zyfaConfig.cmake
  INSTALL_DESTINATION ${ZYFA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zyfaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zyfaConfig.cmake ${PROJECT_BINARY_DIR}/zyfaConfigVersion.cmake
  DESTINATION ${ZYFA_CMAKE_DIR})

# pkg-config: `pkg-config --cflags --libs zyfa` is all a C program needs. Relative install
# directories give a relocatable file (prefix from ${pcfiledir}); absolute ones are written as is.
set(ZYFA_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ZYFA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _zyfa_pc_up /zyfa-prefix/${ZYFA_PC_DIR} /zyfa-prefix)
  string(REGEX REPLACE "/$" "" _zyfa_pc_up "${_zyfa_pc_up}")
  set(ZYFA_PC_PREFIX "\${pcfiledir}/${_zyfa_pc_up}")
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(ZYFA_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(ZYFA_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(cmake/zyfa.pc.in ${PROJECT_BINARY_DIR}/zyfa.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/zyfa.pc DESTINATION ${ZYFA_PC_DIR})

# `cpack -G DEB` in the build directory: one package with the library, headers, CMake and
# pkg-config files and the installed programs, under /usr. Run-time dependencies come from
# dpkg-shlibdeps. (rocm-cmake's rocm_create_package targets /opt/rocm layouts and would make
# rocm-cmake a build requirement on machines without ROCm; plain CPack covers one package.)
set(CPACK_PACKAGE_NAME zyfa)
set(CPACK_PACKAGE_VENDOR "ZYFA")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "ZYFA maintainers")
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR DEB)
include(CPack)

# Tools that ship with the library (bench binary, emulator runner) install from their folders.
