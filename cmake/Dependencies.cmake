# Every dependency is found with find_package from Debian's packages (or a prefix given with
# CMAKE_PREFIX_PATH on machines without them). Optional ones degrade to a clear message.

find_package(Torch REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(cxxopts REQUIRED)

# Is this LibTorch built with CUDA? Decided from the Torch target, never from /usr/local/cuda.
set(DTBENCH_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(DTBENCH_TORCH_HAS_CUDA ON)
endif()

set(DTBENCH_HAVE_MPI OFF)
if(DTBENCH_WITH_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(DTBENCH_HAVE_MPI ON)
  else()
    message(WARNING "DTBENCH_WITH_MPI is ON but no MPI was found: the mpi backend will say "
                    "'this build has no MPI' (install libopenmpi-dev, or pass -DDTBENCH_WITH_MPI=OFF)")
  endif()
endif()

# zlib reads gzipped IDX files (Fashion-MNIST); without it only plain (gunzipped) files are read.
find_package(ZLIB)
set(DTBENCH_HAVE_ZLIB OFF)
if(ZLIB_FOUND)
  set(DTBENCH_HAVE_ZLIB ON)
endif()

set(DTBENCH_HAVE_DOWNLOAD OFF)
if(DTBENCH_WITH_DOWNLOAD)
  find_package(CURL)
  find_package(LibArchive)
  if(CURL_FOUND AND LibArchive_FOUND AND ZLIB_FOUND)
    set(DTBENCH_HAVE_DOWNLOAD ON)
  else()
    message(WARNING "DTBENCH_WITH_DOWNLOAD is ON but libcurl, libarchive or zlib is missing: "
                    "--download will say 'this build cannot download'")
  endif()
endif()

set(DTBENCH_HAVE_FIGURES OFF)
if(DTBENCH_WITH_FIGURES)
  find_program(DTBENCH_PLOT_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(DTBENCH_PLOT_PYTHON)
    set(DTBENCH_HAVE_FIGURES ON)
  endif()
endif()

if(DTBENCH_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
