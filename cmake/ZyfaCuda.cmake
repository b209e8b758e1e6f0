# NVIDIA backend discovery (nvcc, CUDA runtime). Sets ZYFA_HAVE_CUDA and ZYFA_CUDA_SUMMARY.
#
# ZYFA_CUDA=auto builds the backend when nvcc and the CUDA runtime are found, =on requires
# them, =off skips them. Only sm_90a machine code is generated: the kernels use wgmma and
# setmaxnreg, which exist on no other target, so a PTX fallback would be useless.
include(CheckLanguage)

set(ZYFA_HAVE_CUDA 0)
set(ZYFA_CUDA_SUMMARY "off (ZYFA_CUDA=${ZYFA_CUDA})")
# Case-insensitive, as CMake's own booleans: OFF and Off mean off, ON means on.
string(TOLOWER "${ZYFA_CUDA}" _zyfa_cuda_choice)
if(_zyfa_cuda_choice MATCHES "^(off|0|no|false|n)$")
  set(_zyfa_cuda_choice "off")
elseif(_zyfa_cuda_choice MATCHES "^(on|1|yes|true|y)$")
  set(_zyfa_cuda_choice "on")
endif()

if(NOT _zyfa_cuda_choice STREQUAL "off")
  if(NOT CMAKE_CUDA_COMPILER)
    # Debian/NVIDIA installs often leave nvcc off PATH.
    find_program(ZYFA_NVCC nvcc HINTS ENV CUDACXX ENV CUDA_PATH PATH_SUFFIXES bin
                 PATHS /usr/local/cuda/bin /usr/local/cuda-13.0/bin)
    if(ZYFA_NVCC)
      set(CMAKE_CUDA_COMPILER ${ZYFA_NVCC} CACHE FILEPATH "CUDA compiler" FORCE)
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
    if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.3)
      set(ZYFA_CUDA_SUMMARY "off (nvcc ${CMAKE_CUDA_COMPILER_VERSION} < 12.3)")
    else()
      set(ZYFA_HAVE_CUDA 1)
      set(CMAKE_CUDA_STANDARD 17)
      set(CMAKE_CUDA_STANDARD_REQUIRED ON)
      # Set explicitly (not CMAKE_CUDA_ARCHITECTURES) so CMake adds no other target.
      set(CMAKE_CUDA_ARCHITECTURES OFF)
      set(ZYFA_CUDA_GENCODE -gencode=arch=compute_90a,code=sm_90a)
      set(ZYFA_CUDA_SUMMARY
          "nvcc ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), sm_90a, cudart ${CUDAToolkit_VERSION}")
    endif()
  else()
    set(ZYFA_CUDA_SUMMARY "off (no nvcc / CUDA runtime found)")
  endif()
  if(_zyfa_cuda_choice STREQUAL "on" AND NOT ZYFA_HAVE_CUDA)
    message(FATAL_ERROR "ZYFA_CUDA=on but the CUDA backend cannot be built: ${ZYFA_CUDA_SUMMARY}")
  endif()
endif()

# cuDNN and its C++ frontend (headers from the nvidia-cudnn-frontend wheel, see
# bench/zyfa-bench/fetch-cudnn-frontend.sh) are only used by zyfa-bench's comparison.
set(ZYFA_CUDNN_FRONTEND_INCLUDE "" CACHE PATH "Directory holding cudnn_frontend.h (optional)")
