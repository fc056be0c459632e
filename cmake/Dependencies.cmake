# Every dependency is found with find_package from Debian's packages (or a prefix given with
# CMAKE_PREFIX_PATH on machines without them). Optional ones degrade to a clear message.

include(Torch)
find_package(Threads REQUIRED)

# Gloo's headers: c10d's ProcessGroupGloo.hpp includes <gloo/...>, and PyTorch's wheel ships none.
# Debian's libgloo-dev provides them (they compile against LibTorch 2.11's c10d; the multi-rank gloo
# tests are the check that they fit); scripts/gpu_deps.sh unpacks them into a prefix for GPU nodes.
find_path(DTBENCH_GLOO_INCLUDE_DIR gloo/algorithm.h)
if(NOT DTBENCH_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "Gloo's headers (gloo/algorithm.h) are missing: c10d's ProcessGroupGloo.hpp needs them and "
                      "PyTorch's wheel does not ship them. Install libgloo-dev (scripts/install_deps.sh), or on a "
                      "machine without apt add scripts/gpu_deps.sh's prefix to CMAKE_PREFIX_PATH.")
endif()
find_package(nlohmann_json 3 REQUIRED)
find_package(cxxopts REQUIRED)

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

# libpcap: `dtbench capture` (record and analyze). GPU nodes often lack libpcap-dev: without it the
# subcommand says so and everything else builds.
set(DTBENCH_HAVE_CAPTURE OFF)
if(DTBENCH_WITH_CAPTURE)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PCAP QUIET IMPORTED_TARGET libpcap)
  endif()
  if(TARGET PkgConfig::PCAP)
    set(DTBENCH_HAVE_CAPTURE ON)
  else()
    find_library(DTBENCH_PCAP_LIBRARY pcap)
    find_path(DTBENCH_PCAP_INCLUDE_DIR pcap/pcap.h)
    if(DTBENCH_PCAP_LIBRARY AND DTBENCH_PCAP_INCLUDE_DIR)
      add_library(dtbench_pcap INTERFACE IMPORTED)
      target_link_libraries(dtbench_pcap INTERFACE ${DTBENCH_PCAP_LIBRARY})
      target_include_directories(dtbench_pcap INTERFACE ${DTBENCH_PCAP_INCLUDE_DIR})
      set(DTBENCH_HAVE_CAPTURE ON)
    else()
      message(WARNING "DTBENCH_WITH_CAPTURE is ON but libpcap is missing: `dtbench capture` will say "
                      "'this build has no capture' (install libpcap-dev, or pass -DDTBENCH_WITH_CAPTURE=OFF)")
    endif()
  endif()
endif()

if(DTBENCH_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
