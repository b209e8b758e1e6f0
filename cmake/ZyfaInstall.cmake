# Installs libzyfa, its headers and a CMake package: find_package(zyfa) gives zyfa::zyfa.
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

# Tools that ship with the library (bench binary, emulator runner) install from their folders.
