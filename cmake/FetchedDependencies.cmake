# The header-only dependencies, where the system has none of them (a cluster's node without root or
# Debian's packages): found with find_package first (Debian's libcxxopts-dev, catch2, libgloo-dev,
# nlohmann-json3-dev, or a prefix on CMAKE_PREFIX_PATH), else
#   cxxopts, Catch2, Gloo's headers  fetched with FetchContent at configure time, each pinned to one
#                                    commit of its upstream repository (below);
#   nlohmann-json                    the headers of PyPI's nlohmann-json in the build-tools environment
#                                    that scripts/install_deps.sh --user makes (scripts/deps_paths.sh).
# DTBENCH_FETCH_DEPENDENCIES: AUTO (fetch what find_package misses; the default), ON (always fetch), OFF
# (never: a missing dependency is an error that says what to install). A site without internet gives
# each fetched folder with FETCHCONTENT_SOURCE_DIR_CXXOPTS, FETCHCONTENT_SOURCE_DIR_CATCH2 and
# FETCHCONTENT_SOURCE_DIR_GLOO, as CMake cache entries or in the environment: a copy of the pinned
# commit, a distribution's source package of the same library (Debian's `apt-get source cxxopts catch2
# gloo`), or the library's installed files (a prefix holding include/cxxopts.hpp, include/catch2/catch.hpp
# with lib/cmake/Catch2/Catch.cmake, include/gloo/config.h: Debian's -dev packages unpacked with
# dpkg -x). tests/install/test_no_root.sh gives source packages where Debian's mirror serves them and
# the -dev packages where it does not (this project's machines reach no GitHub).
#
# The pins:
#   cxxopts  v3.1.1    eb787304d67ec22f7c3a184ee8b4c481d04357fd  (the release Debian 12 ships)
#   Catch2   v2.13.10  182c910b4b63ff587a3440e08f84f70497e49a81  (the release Debian 12 ships)
#   Gloo     3135b0b41b67dde590eef0938a0bf3d6238df5f7 (pytorch/gloo, 2025-12-01): the third_party/gloo of
#            PyTorch 2.11.0 (torch.__config__ COMMIT_SHA 70d99e99), PyTorch's pin from before 2.11 until
#            pytorch/pytorch#187077 moved it on (2026-06-11); only its headers are used, with a config.h
#            of the CPU transports c10d's ProcessGroupGloo.hpp needs (gloo's own CUDA kernels are
#            LibTorch's business). The multi-rank gloo tests are the check that they fit.

include(FetchContent)
set(DTBENCH_FETCH_DEPENDENCIES AUTO CACHE STRING
    "Fetch cxxopts, Catch2 and Gloo's headers with FetchContent: AUTO (when not found), ON (always), OFF (never)")
set_property(CACHE DTBENCH_FETCH_DEPENDENCIES PROPERTY STRINGS AUTO ON OFF)
if(NOT DTBENCH_FETCH_DEPENDENCIES MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "DTBENCH_FETCH_DEPENDENCIES must be AUTO, ON or OFF, got '${DTBENCH_FETCH_DEPENDENCIES}'")
endif()

# Whether `name` is to be fetched: `found` is what find_package or find_path gave.
function(dtbench_should_fetch name found result)
  if(DTBENCH_FETCH_DEPENDENCIES STREQUAL "ON" OR (NOT found AND DTBENCH_FETCH_DEPENDENCIES STREQUAL "AUTO"))
    set(${result} ON PARENT_SCOPE)
  else()
    set(${result} OFF PARENT_SCOPE)
  endif()
endfunction()

# Declares `name` at `commit` of `repository`; FETCHCONTENT_SOURCE_DIR_<NAME> replaces the download.
function(dtbench_declare name repository commit)
  string(TOUPPER "${name}" upper)
  # The environment's FETCHCONTENT_SOURCE_DIR_<NAME> too, so scripts/bootstrap.sh needs no flags.
  if(NOT FETCHCONTENT_SOURCE_DIR_${upper} AND DEFINED ENV{FETCHCONTENT_SOURCE_DIR_${upper}})
    set(FETCHCONTENT_SOURCE_DIR_${upper} "$ENV{FETCHCONTENT_SOURCE_DIR_${upper}}" CACHE PATH
        "The sources of ${name} (instead of fetching them)")
  endif()
  if(FETCHCONTENT_SOURCE_DIR_${upper})
    message(STATUS "${name}: from FETCHCONTENT_SOURCE_DIR_${upper} = ${FETCHCONTENT_SOURCE_DIR_${upper}}")
  else()
    message(STATUS "${name}: fetching ${repository} at ${commit}")
  endif()
  # SOURCE_SUBDIR that holds no CMakeLists.txt: populate only; what is built from it is said below.
  FetchContent_Declare(${name} GIT_REPOSITORY "${repository}" GIT_TAG "${commit}" SOURCE_SUBDIR dtbench-headers-only)
  FetchContent_MakeAvailable(${name})
  if(NOT EXISTS "${${name}_SOURCE_DIR}")
    message(FATAL_ERROR "${name} could not be fetched from ${repository}; without internet, give a copy of commit "
                        "${commit} with -DFETCHCONTENT_SOURCE_DIR_${upper}=<folder>, or install it on the system")
  endif()
  set(${name}_SOURCE_DIR "${${name}_SOURCE_DIR}" PARENT_SCOPE)
endfunction()

# cxxopts (one header).
if(NOT DTBENCH_FETCH_DEPENDENCIES STREQUAL "ON")
  find_package(cxxopts QUIET)
endif()
dtbench_should_fetch(cxxopts "${cxxopts_FOUND}" _fetch)
if(_fetch)
  dtbench_declare(cxxopts https://github.com/jarro2783/cxxopts.git eb787304d67ec22f7c3a184ee8b4c481d04357fd)
  if(NOT EXISTS "${cxxopts_SOURCE_DIR}/include/cxxopts.hpp")  # the sources' layout and an installed one alike
    message(FATAL_ERROR "${cxxopts_SOURCE_DIR} holds no include/cxxopts.hpp: neither cxxopts' sources nor its files")
  endif()
  add_library(cxxopts::cxxopts INTERFACE IMPORTED)
  target_include_directories(cxxopts::cxxopts INTERFACE "${cxxopts_SOURCE_DIR}/include")
elseif(NOT cxxopts_FOUND)
  message(FATAL_ERROR "cxxopts is missing: install libcxxopts-dev (scripts/install_deps.sh), or configure with "
                      "-DDTBENCH_FETCH_DEPENDENCIES=AUTO to fetch it")
endif()

# Gloo's headers: c10d's ProcessGroupGloo.hpp includes <gloo/...>, and PyTorch's wheel ships none.
if(NOT DTBENCH_FETCH_DEPENDENCIES STREQUAL "ON")
  find_path(DTBENCH_GLOO_INCLUDE_DIR gloo/algorithm.h)
endif()
dtbench_should_fetch(gloo "${DTBENCH_GLOO_INCLUDE_DIR}" _fetch)
if(_fetch)
  dtbench_declare(gloo https://github.com/pytorch/gloo.git 3135b0b41b67dde590eef0938a0bf3d6238df5f7)
endif()
if(_fetch AND EXISTS "${gloo_SOURCE_DIR}/include/gloo/config.h")
  # Gloo's installed headers (a -dev package's files), config.h written by its own build.
  set(DTBENCH_GLOO_INCLUDE_DIR "${gloo_SOURCE_DIR}/include")
elseif(_fetch)
  if(NOT EXISTS "${gloo_SOURCE_DIR}/gloo/config.h.in" OR NOT EXISTS "${gloo_SOURCE_DIR}/gloo/algorithm.h")
    message(FATAL_ERROR "${gloo_SOURCE_DIR} holds neither gloo/config.h.in with gloo/algorithm.h (Gloo's sources) nor "
                        "include/gloo/config.h (its installed headers)")
  endif()
  # gloo/config.h as Gloo's own CMake would write it for a build with the TCP transport alone.
  set(GLOO_VERSION_MAJOR 0)
  set(GLOO_VERSION_MINOR 5)
  set(GLOO_VERSION_PATCH 0)
  foreach(_off GLOO_USE_CUDA GLOO_USE_NCCL GLOO_USE_ROCM GLOO_USE_RCCL GLOO_USE_REDIS GLOO_USE_IBVERBS GLOO_USE_MPI
               GLOO_USE_AVX GLOO_USE_LIBUV GLOO_HAVE_TRANSPORT_TCP_TLS GLOO_HAVE_TRANSPORT_IBVERBS
               GLOO_HAVE_TRANSPORT_UV GLOO_USE_TORCH_DTYPES)
    set(${_off} 0)
  endforeach()
  set(GLOO_HAVE_TRANSPORT_TCP 1)
  configure_file("${gloo_SOURCE_DIR}/gloo/config.h.in" "${PROJECT_BINARY_DIR}/fetched/gloo/gloo/config.h")
  # Gloo's sources beside the configured config.h, which comes first.
  set(DTBENCH_GLOO_INCLUDE_DIR "${PROJECT_BINARY_DIR}/fetched/gloo;${gloo_SOURCE_DIR}")
elseif(NOT DTBENCH_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "Gloo's headers (gloo/algorithm.h) are missing: c10d's ProcessGroupGloo.hpp needs them and "
                      "PyTorch's wheel does not ship them. Install libgloo-dev (scripts/install_deps.sh), or configure "
                      "with -DDTBENCH_FETCH_DEPENDENCIES=AUTO to fetch them")
endif()

# nlohmann-json: the system's, else PyPI's in the build-tools environment.
find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  set(_tools_python "${DTBENCH_CACHE}/build-tools/bin/python")
  if(EXISTS "${_tools_python}")
    execute_process(COMMAND "${_tools_python}" -c
                    "import os, nlohmann_json; print(os.path.join(os.path.dirname(nlohmann_json.__file__), 'include'))"
                    OUTPUT_VARIABLE _nlohmann_include OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
  endif()
  if(NOT _nlohmann_include OR NOT EXISTS "${_nlohmann_include}/nlohmann/json.hpp")
    message(FATAL_ERROR "nlohmann-json is missing: install nlohmann-json3-dev, or run scripts/install_deps.sh --user "
                        "(PyPI's nlohmann-json into ${DTBENCH_CACHE}/build-tools)")
  endif()
  message(STATUS "nlohmann-json: PyPI's, ${_nlohmann_include}")
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE "${_nlohmann_include}")
endif()

# Catch2 v2 (one header, and its CMake module for catch_discover_tests).
if(DTBENCH_BUILD_TESTS)
  if(NOT DTBENCH_FETCH_DEPENDENCIES STREQUAL "ON")
    find_package(Catch2 2 QUIET)
  endif()
  dtbench_should_fetch(catch2 "${Catch2_FOUND}" _fetch)
  if(_fetch)
    dtbench_declare(catch2 https://github.com/catchorg/Catch2.git 182c910b4b63ff587a3440e08f84f70497e49a81)
    # The sources' layout (single_include/, contrib/Catch.cmake), or an installed one (include/,
    # lib/cmake/Catch2/Catch.cmake).
    if(EXISTS "${catch2_SOURCE_DIR}/single_include/catch2/catch.hpp")
      set(_catch_include "${catch2_SOURCE_DIR}/single_include")
      set(_catch_module "${catch2_SOURCE_DIR}/contrib")
    elseif(EXISTS "${catch2_SOURCE_DIR}/include/catch2/catch.hpp")
      set(_catch_include "${catch2_SOURCE_DIR}/include")
      set(_catch_module "${catch2_SOURCE_DIR}/lib/cmake/Catch2")
    else()
      message(FATAL_ERROR "${catch2_SOURCE_DIR} holds neither single_include/catch2/catch.hpp (Catch2 v2's sources) "
                          "nor include/catch2/catch.hpp (its installed files)")
    endif()
    add_library(Catch2::Catch2 INTERFACE IMPORTED)
    target_include_directories(Catch2::Catch2 INTERFACE "${_catch_include}")
    list(APPEND CMAKE_MODULE_PATH "${_catch_module}")  # Catch.cmake: catch_discover_tests
  elseif(NOT Catch2_FOUND)
    message(FATAL_ERROR "Catch2 v2 is missing: install catch2 (scripts/install_deps.sh), configure with "
                        "-DDTBENCH_FETCH_DEPENDENCIES=AUTO to fetch it, or -DDTBENCH_BUILD_TESTS=OFF")
  endif()
endif()
