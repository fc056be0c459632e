# DTBENCH_CUDA_COMPILE_CHECK: compile, never link, the translation units whose GPU branches are
# guarded by DTBENCH_TORCH_HAS_CUDA, with that switch on, against this LibTorch's headers and a CUDA
# toolkit's headers. Where LibTorch has no CUDA (Debian's 1.13) those branches otherwise meet a
# compiler only on a GPU machine. The objects are thrown away: nothing here runs or links.
#
#   cmake -S . -B build-cuda-check -DDTBENCH_CUDA_COMPILE_CHECK=ON [-DDTBENCH_CUDA_INCLUDE_DIR=...]
#   ninja -C build-cuda-check dtbench_trainer_cuda_check
option(DTBENCH_CUDA_COMPILE_CHECK "Compile (not link) the CUDA-guarded code against CUDA's headers" OFF)
set(DTBENCH_CUDA_INCLUDE_DIR "/usr/local/cuda/include" CACHE PATH "CUDA toolkit headers for DTBENCH_CUDA_COMPILE_CHECK")

# dtbench_cuda_compile_check(<target> <sources...>): an OBJECT library of <sources> compiled with
# DTBENCH_TORCH_HAS_CUDA = 1. Does nothing unless DTBENCH_CUDA_COMPILE_CHECK is ON, and nothing
# when LibTorch itself has CUDA (the real build then compiles those branches).
function(dtbench_cuda_compile_check target)
  if(NOT DTBENCH_CUDA_COMPILE_CHECK)
    return()
  endif()
  if(DTBENCH_TORCH_HAS_CUDA)
    message(STATUS "DTBENCH_CUDA_COMPILE_CHECK: this LibTorch has CUDA, the build itself compiles the GPU path")
    return()
  endif()
  if(NOT EXISTS "${DTBENCH_CUDA_INCLUDE_DIR}/cuda_runtime_api.h")
    message(FATAL_ERROR "DTBENCH_CUDA_COMPILE_CHECK: no cuda_runtime_api.h in DTBENCH_CUDA_INCLUDE_DIR "
                        "(${DTBENCH_CUDA_INCLUDE_DIR}); point it at a CUDA toolkit's include folder")
  endif()
  set(dir "${PROJECT_BINARY_DIR}/cuda-compile-check")

  # build_config.h as this build generated it, with the CUDA switch on.
  file(READ "${PROJECT_BINARY_DIR}/generated/dtbench/build_config.h" config)
  string(REPLACE "#define DTBENCH_TORCH_HAS_CUDA 0" "#define DTBENCH_TORCH_HAS_CUDA 1" config "${config}")
  if(NOT config MATCHES "#define DTBENCH_TORCH_HAS_CUDA 1")
    message(FATAL_ERROR "DTBENCH_CUDA_COMPILE_CHECK: cannot find DTBENCH_TORCH_HAS_CUDA in build_config.h")
  endif()
  file(WRITE "${dir}/dtbench/build_config.h" "${config}")

  # LibTorch's c10/cuda headers include c10/cuda/impl/cuda_cmake_macros.h, which a CUDA build of
  # LibTorch generates and a CPU-only package does not ship. Its one setting says that c10_cuda
  # is a shared library (export macros only): supply that when the header is missing.
  find_path(DTBENCH_C10_CUDA_MACROS_DIR c10/cuda/impl/cuda_cmake_macros.h PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(NOT DTBENCH_C10_CUDA_MACROS_DIR)
    file(WRITE "${dir}/c10/cuda/impl/cuda_cmake_macros.h"
         "#pragma once\n// Stand-in for the header a CUDA build of LibTorch generates (DTBENCH_CUDA_COMPILE_CHECK only).\n"
         "#define C10_CUDA_BUILD_SHARED_LIBS\n")
  endif()

  add_library(${target} OBJECT ${ARGN})
  target_include_directories(${target} BEFORE PRIVATE "${dir}")
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_include_directories(${target} SYSTEM PRIVATE "${DTBENCH_CUDA_INCLUDE_DIR}")
  target_link_libraries(${target} PRIVATE torch nlohmann_json::nlohmann_json dtbench_warnings)
  message(STATUS "DTBENCH_CUDA_COMPILE_CHECK: ${target} compiles ${ARGN} with DTBENCH_TORCH_HAS_CUDA=1 "
                 "against ${DTBENCH_CUDA_INCLUDE_DIR}")
endfunction()
