# Every dependency is found with find_package from Debian's packages (or a prefix given with
# CMAKE_PREFIX_PATH, or a cluster's module); the header-only ones are fetched where the system has none
# (cmake/FetchedDependencies.cmake). Optional ones degrade to a clear message naming what they turn off.

include(Torch)
find_package(Threads REQUIRED)

include(FetchedDependencies)  # cxxopts, Catch2, Gloo's headers and nlohmann-json: the system's, else fetched

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

