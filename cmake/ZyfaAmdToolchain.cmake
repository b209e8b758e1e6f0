# gfx950 toolchain discovery, included at top level so that its results reach every directory.
#
# ZYFA_AMD_TOOLCHAIN picks the route:
#   rocm     native ROCm >= 6.4 in $ROCM_PATH or /opt/rocm (its clang, llvm-mc, ld.lld)
#   sysroot  Debian sid's LLVM 21 in a sysroot made by cmake/gfx950-sysroot.sh, run in place
#            through its own loader (no chroot, no mount, no root)
#   auto     rocm if usable, else an existing sysroot (created first with ZYFA_CREATE_SYSROOT=ON),
#            else a configure error that says how to get one
#   off      no code objects: the hip and emu backends report NOT_SUPPORTED (same as ZYFA_AMD=OFF)
#
# Results (top-level scope):
#   ZYFA_AMD_TOOLCHAIN_SUMMARY  one line for the configure summary and zyfa_last_error()
#   ZYFA_AMD_CODE_OBJECTS       1 when the gfx950 code objects are built and embedded
#   ZYFA_HAVE_EMU               1 when code objects are built (the emulator runs them)
#                               (the emulator needs nothing else from the toolchain)
#   ZYFA_HAVE_HIP               1 when code objects are built and the host HIP runtime is found
#   ZYFA_AMD_CLANG, ZYFA_AMD_LLVM_MC, ZYFA_AMD_LLD, ZYFA_AMD_READOBJ, ZYFA_AMD_OBJDUMP
#                               commands (lists) that run the gfx950 tools
#   ZYFA_HIP_INCLUDE_DIR, ZYFA_HIP_LIBRARY   host HIP runtime (module API only)

set(ZYFA_SYSROOT_SCRIPT "${PROJECT_SOURCE_DIR}/cmake/gfx950-sysroot.sh")
set(ZYFA_SYSROOT_DIR "$ENV{ZYFA_SYSROOT_DIR}" CACHE PATH
    "Debian sid sysroot with the gfx950 LLVM (default: gfx950-sysroot.sh default-dir)")
if(NOT ZYFA_SYSROOT_DIR)
  # /var/cache/zyfa/gfx950-sysroot for root or when complete there, else the user's cache.
  execute_process(COMMAND sh "${ZYFA_SYSROOT_SCRIPT}" default-dir
                  OUTPUT_VARIABLE _zyfa_default_sysroot OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(ZYFA_SYSROOT_DIR "${_zyfa_default_sysroot}" CACHE PATH "" FORCE)
endif()
option(ZYFA_CREATE_SYSROOT "Create the gfx950 sysroot at configure time when it is missing (network)" OFF)

set(ZYFA_HAVE_HIP 0)
set(ZYFA_HAVE_EMU 0)
set(ZYFA_AMD_CODE_OBJECTS 0)
set(ZYFA_AMD_ROUTE "")
set(_zyfa_amd_why "")

# llvm-mc that knows gfx950 is the cheapest proof that the LLVM is recent enough.
function(_zyfa_probe_gfx950 out)
  set(_probe "${PROJECT_BINARY_DIR}/amd-toolchain/probe.s")
  file(WRITE "${_probe}" "v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15], v32, v33\n")
  execute_process(COMMAND ${ARGN} -triple=amdgcn-amd-amdhsa -mcpu=gfx950 -show-encoding "${_probe}"
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err
                  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
  if(_rc EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(_zyfa_try_rocm)
  set(_root "$ENV{ROCM_PATH}")
  if(NOT _root)
    set(_root "/opt/rocm")
  endif()
  if(NOT EXISTS "${_root}/llvm/bin/clang++")
    set(_zyfa_amd_why "no ROCm at ${_root}" PARENT_SCOPE)
    return()
  endif()
  set(_version "")
  if(EXISTS "${_root}/.info/version")
    file(STRINGS "${_root}/.info/version" _version LIMIT_COUNT 1)
  endif()
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _version "${_version}")
  if(NOT _version OR _version VERSION_LESS 6.4)
    set(_zyfa_amd_why "ROCm at ${_root} is '${_version}', need >= 6.4 for gfx950" PARENT_SCOPE)
    return()
  endif()
  set(_bin "${_root}/llvm/bin")
  foreach(_t clang++ llvm-mc ld.lld llvm-readobj llvm-objdump)
    if(NOT EXISTS "${_bin}/${_t}")
      set(_zyfa_amd_why "ROCm ${_version} at ${_root} lacks ${_bin}/${_t}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  _zyfa_probe_gfx950(_ok "${_bin}/llvm-mc")
  if(NOT _ok)
    set(_zyfa_amd_why "ROCm ${_version} llvm-mc does not assemble gfx950" PARENT_SCOPE)
    return()
  endif()
  set(ZYFA_AMD_ROUTE rocm PARENT_SCOPE)
  set(ZYFA_AMD_CLANG "${_bin}/clang++;--rocm-path=${_root}" PARENT_SCOPE)
  set(ZYFA_AMD_LLVM_MC "${_bin}/llvm-mc" PARENT_SCOPE)
  set(ZYFA_AMD_LLD "${_bin}/ld.lld" PARENT_SCOPE)
  set(ZYFA_AMD_READOBJ "${_bin}/llvm-readobj" PARENT_SCOPE)
  set(ZYFA_AMD_OBJDUMP "${_bin}/llvm-objdump" PARENT_SCOPE)
  set(ZYFA_AMD_TOOLCHAIN_SUMMARY "ROCm ${_version} at ${_root}" PARENT_SCOPE)
endfunction()

function(_zyfa_try_sysroot create)
  set(_dir "${ZYFA_SYSROOT_DIR}")
  execute_process(COMMAND sh "${ZYFA_SYSROOT_SCRIPT}" check "${_dir}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 AND create)
    message(STATUS "Creating the gfx950 sysroot in ${_dir} (sid + LLVM 21)")
    execute_process(COMMAND sh "${ZYFA_SYSROOT_SCRIPT}" create "${_dir}" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      set(_zyfa_amd_why "creating the sysroot in ${_dir} failed" PARENT_SCOPE)
      return()
    endif()
  elseif(NOT _rc EQUAL 0)
    set(_zyfa_amd_why "no complete sysroot in ${_dir} (sh cmake/setup.sh or ZYFA_CREATE_SYSROOT=ON creates it)" PARENT_SCOPE)
    return()
  endif()
  # The sysroot's tools run on this host through generated wrappers (its own loader and
  # libraries): nothing is mounted, nothing needs root.
  set(_tools "${PROJECT_BINARY_DIR}/amd-toolchain")
  execute_process(COMMAND sh "${ZYFA_SYSROOT_SCRIPT}" wrappers "${_dir}" "${_tools}"
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    set(_zyfa_amd_why "writing the tool wrappers for ${_dir} failed: ${_err}" PARENT_SCOPE)
    return()
  endif()
  set(_bin "${_tools}/bin")
  _zyfa_probe_gfx950(_ok "${_bin}/llvm-mc")
  if(NOT _ok)
    set(_zyfa_amd_why "the sysroot in ${_dir} is complete but its llvm-mc does not run through ${_bin}/llvm-mc" PARENT_SCOPE)
    return()
  endif()
  set(ZYFA_AMD_ROUTE sysroot PARENT_SCOPE)
  # -no-canonical-prefixes: clang finds its sub-tools and resource directory next to the
  # wrapper (argv[0]), not next to the loader. --sysroot: sid's C++ and HIP headers.
  set(ZYFA_AMD_CLANG "${_bin}/clang++;-no-canonical-prefixes;--sysroot=${_dir}" PARENT_SCOPE)
  set(ZYFA_AMD_LLVM_MC "${_bin}/llvm-mc" PARENT_SCOPE)
  set(ZYFA_AMD_LLD "${_bin}/ld.lld" PARENT_SCOPE)
  set(ZYFA_AMD_READOBJ "${_bin}/llvm-readobj" PARENT_SCOPE)
  set(ZYFA_AMD_OBJDUMP "${_bin}/llvm-objdump" PARENT_SCOPE)
  set(ZYFA_AMD_TOOLCHAIN_SUMMARY "Debian sid sysroot (LLVM 21) in ${_dir}" PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/amd-toolchain")
string(TOLOWER "${ZYFA_AMD_TOOLCHAIN}" _zyfa_amd_choice)
if(NOT ZYFA_AMD)
  set(_zyfa_amd_choice off)
  set(ZYFA_AMD_TOOLCHAIN_SUMMARY "off (ZYFA_AMD=OFF)")
elseif(_zyfa_amd_choice STREQUAL "off")
  set(ZYFA_AMD_TOOLCHAIN_SUMMARY "off (ZYFA_AMD_TOOLCHAIN=off)")
endif()
if(_zyfa_amd_choice STREQUAL "rocm")
  _zyfa_try_rocm()
  if(NOT ZYFA_AMD_ROUTE)
    message(FATAL_ERROR "ZYFA_AMD_TOOLCHAIN=rocm: ${_zyfa_amd_why}")
  endif()
elseif(_zyfa_amd_choice STREQUAL "sysroot")
  _zyfa_try_sysroot(${ZYFA_CREATE_SYSROOT})
  if(NOT ZYFA_AMD_ROUTE)
    message(FATAL_ERROR "ZYFA_AMD_TOOLCHAIN=sysroot: ${_zyfa_amd_why}")
  endif()
elseif(_zyfa_amd_choice STREQUAL "auto")
  _zyfa_try_rocm()
  set(_zyfa_rocm_why "${_zyfa_amd_why}")
  if(NOT ZYFA_AMD_ROUTE)
    _zyfa_try_sysroot(${ZYFA_CREATE_SYSROOT})
  endif()
  if(NOT ZYFA_AMD_ROUTE)
    # Never drop the AMD backends (and their part of the test suite) silently.
    message(FATAL_ERROR
      "No usable gfx950 toolchain, so the hip and emu backends cannot be built:\n"
      "  ROCm: ${_zyfa_rocm_why}\n"
      "  sysroot: ${_zyfa_amd_why}\n"
      "Run `sh cmake/setup.sh` (creates the sysroot; see docs/building.md), or configure with "
      "-DZYFA_AMD=OFF to build without the AMD backends.")
  endif()
elseif(NOT _zyfa_amd_choice STREQUAL "off")
  message(FATAL_ERROR "ZYFA_AMD_TOOLCHAIN = '${ZYFA_AMD_TOOLCHAIN}': expected auto, rocm, sysroot or off")
endif()

if(ZYFA_AMD_ROUTE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(ZYFA_AMD_CODE_OBJECTS 1)
  # The emulator runs exactly these code objects, so the emu backend comes with them.
  set(ZYFA_HAVE_EMU 1)
  # The hip backend needs only the host HIP runtime for the module API (Debian: libamdhip64-dev).
  set(_zyfa_hip_hints "$ENV{ROCM_PATH}" /opt/rocm)
  find_path(ZYFA_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ${_zyfa_hip_hints} PATH_SUFFIXES include)
  find_library(ZYFA_HIP_LIBRARY amdhip64 HINTS ${_zyfa_hip_hints} PATH_SUFFIXES lib)
  if(ZYFA_HIP_INCLUDE_DIR AND ZYFA_HIP_LIBRARY)
    set(ZYFA_HAVE_HIP 1)
  else()
    string(APPEND ZYFA_AMD_TOOLCHAIN_SUMMARY "; hip backend off: no host HIP runtime (libamdhip64-dev)")
  endif()
endif()
# The summary lands in a C string literal (zyfa_build_config.h).
string(REPLACE "\"" "'" ZYFA_AMD_TOOLCHAIN_SUMMARY "${ZYFA_AMD_TOOLCHAIN_SUMMARY}")
