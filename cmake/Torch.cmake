# LibTorch 2.x (docs/gpu.md, "Which LibTorch"). By default PyTorch's wheel in the virtual environment
# that scripts/install_deps.sh makes outside the checkout (scripts/torch.env: version and location);
# another LibTorch 2.x instead when one of these is given:
#   -DTorch_DIR=<libtorch>/share/cmake/Torch        pytorch.org's LibTorch zip, a cluster's module
#   -DCMAKE_PREFIX_PATH=<torch.utils.cmake_prefix_path or libtorch folder>
#   -DDTBENCH_TORCH_PYTHON=<a python whose torch to use>   (asks it for torch.utils.cmake_prefix_path)
# LibTorch before 2.4 is refused (compat/torch_compat.h: autocast per device; models/classifier.h).
#
# Sets DTBENCH_TORCH_HAS_CUDA (from the Torch package found, never from /usr/local/cuda) and, with
# CUDA, DTBENCH_NCCL_INCLUDE_DIR: the nccl.h of the NCCL this LibTorch loads (never a second copy).

file(STRINGS "${PROJECT_SOURCE_DIR}/scripts/torch.env" _torch_env REGEX "^[A-Z_]+=")
foreach(_line IN LISTS _torch_env)
  string(REGEX MATCH "^([A-Z_]+)=(.*)$" _ "${_line}")
  set(DTBENCH_PINNED_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
if(DEFINED ENV{DTBENCH_CACHE_DIR})
  set(_cache "$ENV{DTBENCH_CACHE_DIR}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_cache "$ENV{XDG_CACHE_HOME}/dtbench")
else()
  set(_cache "$ENV{HOME}/.cache/dtbench")
endif()
set(DTBENCH_CACHE "${_cache}")
# Another release or variant than torch.env's: DTBENCH_TORCH_VERSION / DTBENCH_TORCH_CUDA, as
# scripts/install_deps.sh takes them (scripts/deps_paths.sh).
set(DTBENCH_WANTED_TORCH_VERSION "${DTBENCH_PINNED_TORCH_VERSION}")
set(DTBENCH_WANTED_TORCH_CUDA "${DTBENCH_PINNED_TORCH_CUDA}")
if(DEFINED ENV{DTBENCH_TORCH_VERSION} AND NOT "$ENV{DTBENCH_TORCH_VERSION}" STREQUAL "")
  set(DTBENCH_WANTED_TORCH_VERSION "$ENV{DTBENCH_TORCH_VERSION}")
endif()
if(DEFINED ENV{DTBENCH_TORCH_CUDA} AND NOT "$ENV{DTBENCH_TORCH_CUDA}" STREQUAL "")
  set(DTBENCH_WANTED_TORCH_CUDA "$ENV{DTBENCH_TORCH_CUDA}")
endif()
set(DTBENCH_TORCH_VENV "${_cache}/torch-${DTBENCH_WANTED_TORCH_VERSION}-${DTBENCH_WANTED_TORCH_CUDA}")
# A CUDA toolkit from PyPI that scripts/install_deps.sh --user made because this machine had none of
# the torch's CUDA major: FindCUDAToolkit (called by LibTorch's CMake package) takes it.
set(_pip_cuda "${_cache}/cuda-toolkit-${DTBENCH_WANTED_TORCH_CUDA}/root")
if(NOT CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT} AND EXISTS "${_pip_cuda}/bin/nvcc")
  # LibTorch's package asks FindCUDA (CUDA_TOOLKIT_ROOT_DIR), then enables CUDA (CMAKE_CUDA_COMPILER)
  # and FindCUDAToolkit (CUDAToolkit_ROOT): all three name the same toolkit.
  set(CUDAToolkit_ROOT "${_pip_cuda}" CACHE PATH "The CUDA toolkit for LibTorch's CMake package")
  set(CUDA_TOOLKIT_ROOT_DIR "${_pip_cuda}" CACHE PATH "The CUDA toolkit for LibTorch's CMake package")
  set(CMAKE_CUDA_COMPILER "${_pip_cuda}/bin/nvcc" CACHE FILEPATH "nvcc of the CUDA toolkit")
  message(STATUS "CUDA toolkit from PyPI: ${_pip_cuda}")
endif()

set(DTBENCH_TORCH_PYTHON "" CACHE FILEPATH "A python whose torch package is the LibTorch to build against")
if(NOT DTBENCH_TORCH_PYTHON AND NOT Torch_DIR)
  find_package(Torch 2.4 QUIET)  # CMAKE_PREFIX_PATH, or a LibTorch installed on the system
  if(NOT Torch_FOUND AND EXISTS "${DTBENCH_TORCH_VENV}/bin/python")
    set(DTBENCH_TORCH_PYTHON "${DTBENCH_TORCH_VENV}/bin/python" CACHE FILEPATH
        "A python whose torch package is the LibTorch to build against" FORCE)
  endif()
endif()
if(DTBENCH_TORCH_PYTHON AND NOT Torch_FOUND)
  execute_process(COMMAND "${DTBENCH_TORCH_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_VARIABLE _torch_error RESULT_VARIABLE _torch_rc)
  if(NOT _torch_rc EQUAL 0)
    message(FATAL_ERROR "DTBENCH_TORCH_PYTHON=${DTBENCH_TORCH_PYTHON} cannot import torch:\n${_torch_error}"
                        "Run scripts/install_deps.sh, or point DTBENCH_TORCH_PYTHON at a python that has torch 2.x.")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
endif()
# LibTorch before 2.5 requires the target CUDA::nvToolsExt (NVTX 2), a library CUDA toolkits no
# longer ship from 12.9 on; the torch wheel brings its own copy (nvidia-nvtx-cu12), which is the one it
# loads: the target is made from that copy before LibTorch's package asks for it.
foreach(_prefix IN LISTS CMAKE_PREFIX_PATH)
  set(_nvtx "${_prefix}/../../../nvidia/nvtx")
  if(NOT TARGET CUDA::nvToolsExt AND EXISTS "${_nvtx}/lib/libnvToolsExt.so.1")
    get_filename_component(_nvtx "${_nvtx}" ABSOLUTE)
    add_library(CUDA::nvToolsExt SHARED IMPORTED)
    set_target_properties(CUDA::nvToolsExt PROPERTIES IMPORTED_LOCATION "${_nvtx}/lib/libnvToolsExt.so.1"
                          INTERFACE_INCLUDE_DIRECTORIES "${_nvtx}/include")
    message(STATUS "nvToolsExt from the torch wheel: ${_nvtx}")
  endif()
endforeach()
if(NOT Torch_FOUND)
  find_package(Torch 2.4 QUIET)
endif()
if(NOT Torch_FOUND)
  set(_older "")
  if(Torch_CONSIDERED_VERSIONS)
    string(CONCAT _older " (found only LibTorch ${Torch_CONSIDERED_VERSIONS} at ${Torch_CONSIDERED_CONFIGS}: a "
                         "build folder configured before may hold it in Torch_DIR; configure a fresh one)")
  endif()
  message(FATAL_ERROR
    "No LibTorch 2.4 or newer found${_older}. Run scripts/install_deps.sh (it installs torch==${DTBENCH_WANTED_TORCH_VERSION} into "
    "${DTBENCH_TORCH_VENV}), or name one with -DTorch_DIR=<libtorch>/share/cmake/Torch, "
    "-DCMAKE_PREFIX_PATH=<libtorch> or -DDTBENCH_TORCH_PYTHON=<python with torch>. LibTorch before 2.4 is not supported.")
endif()
if(NOT Torch_VERSION VERSION_EQUAL DTBENCH_PINNED_TORCH_VERSION)
  message(STATUS "LibTorch ${Torch_VERSION} (dtbench is measured on ${DTBENCH_PINNED_TORCH_VERSION}, scripts/torch.env)")
endif()

# A LibTorch built on the pre-C++11 std::string ABI (PyPI's wheels before torch 2.7) gives that ABI to
# the targets that link it; the libraries without LibTorch (common, run, comm's data half) and every
# test share strings with them, so the whole tree takes it.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
  message(STATUS "LibTorch ${Torch_VERSION} is built on the pre-C++11 string ABI: so is dtbench")
endif()

set(DTBENCH_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(DTBENCH_TORCH_HAS_CUDA ON)
endif()

# A wheel's libtorch_cuda.so finds its NCCL, cuDNN and the rest at run time through its RPATH
# ($ORIGIN/../../nvidia/<name>/lib); the linker does not follow $ORIGIN, and would resolve them from the
# machine's (a CUDA toolkit's older libnccl.so.2 lacks the symbols torch 2.15's NCCL 2.30 has). So the
# link takes the wheel's folders first, the ones the process will load.
file(GLOB _wheel_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
foreach(_dir IN LISTS _wheel_libs)
  if(IS_DIRECTORY "${_dir}")
    get_filename_component(_dir "${_dir}" ABSOLUTE)
    add_link_options("LINKER:-rpath-link,${_dir}")
  endif()
endforeach()

# c10d's ProcessGroupNCCL.hpp includes <nccl.h>. The wheel's own (nvidia-nccl-cu13) comes first, so
# that the header matches the library LibTorch loads; dtbench never links NCCL itself.
set(DTBENCH_NCCL_INCLUDE_DIR "" CACHE PATH "Folder of the nccl.h of the NCCL that LibTorch loads")
if(DTBENCH_TORCH_HAS_CUDA AND NOT DTBENCH_NCCL_INCLUDE_DIR)
  find_path(DTBENCH_NCCL_INCLUDE_DIR_FOUND nccl.h
            PATHS "${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include" "${TORCH_INSTALL_PREFIX}/include"
            NO_DEFAULT_PATH)
  if(DTBENCH_NCCL_INCLUDE_DIR_FOUND)
    set(DTBENCH_NCCL_INCLUDE_DIR "${DTBENCH_NCCL_INCLUDE_DIR_FOUND}" CACHE PATH
        "Folder of the nccl.h of the NCCL that LibTorch loads" FORCE)
  endif()
endif()
if(DTBENCH_TORCH_HAS_CUDA)
  message(STATUS "LibTorch ${Torch_VERSION} with CUDA ${CUDA_VERSION} at ${TORCH_INSTALL_PREFIX}; nccl.h from "
                 "${DTBENCH_NCCL_INCLUDE_DIR}")
else()
  message(STATUS "LibTorch ${Torch_VERSION} without CUDA at ${TORCH_INSTALL_PREFIX}")
endif()
