# What a build costs (docs/design.md, "How the tree builds"; scripts/build_profile.py measures it):
#
# DTBENCH_UNITY (default ON): every library, executable and test suite compiles as unity translation units
#   of DTBENCH_UNITY_BATCH sources each (CMake's UNITY_BUILD). A dtbench source costs mostly what it
#   instantiates and generates of LibTorch's, nlohmann/json's and cxxopts' templates, again in every
#   translation unit that uses them; a unity unit does it once for its batch. Measured on 2 cores
#   (docs/benchmarks.md, "Build time"): the dtbench target 900.6 -> 264.8 compiler-seconds at 16 sources a
#   unit, the whole test build 1,436 -> 510; 32 a unit took the dtbench target a further 325.6 -> 280.0
#   (wall 165 -> 145 s). A source edited alone recompiles its batch (tens of seconds, not 3-10); turn it
#   off (-DDTBENCH_UNITY=OFF) to compile file by file. So that a batch compiles as one file, names local to
#   a source (its anonymous namespace, its static functions) are unique within its folder's library;
#   scripts/check_unity_names.py (run by the unit label) names local functions two sources of a target
#   define, which would otherwise compile silently as overloads of each other.
# DTBENCH_CCACHE (default ON): when ccache is on the PATH, the compiler runs under it, with its cache beside
#   the torch environment (DTBENCH_CACHE_DIR, default ~/.cache/dtbench/ccache): a second build of the same
#   sources (a fresh clone, a build directory made again, CI's test build after its first) takes objects
#   from the cache. Sloppiness pch_defines and time_macros let ccache serve units built with the precompiled
#   headers (ccache's manual, "Precompiled headers"); CCACHE_BASEDIR makes paths below the source tree's
#   parent relative, so two clones side by side share entries.
option(DTBENCH_UNITY "Compile each target as unity translation units (faster builds)" ON)
set(DTBENCH_UNITY_BATCH 32 CACHE STRING "Sources per unity translation unit")
option(DTBENCH_CCACHE "Compile under ccache when it is installed" ON)

if(DTBENCH_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${DTBENCH_UNITY_BATCH})
endif()

if(DTBENCH_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(DTBENCH_CCACHE_PROGRAM ccache)
  if(DTBENCH_CCACHE_PROGRAM)
    if(DEFINED ENV{DTBENCH_CACHE_DIR})
      set(_dtbench_cache "$ENV{DTBENCH_CACHE_DIR}")
    else()
      set(_dtbench_cache "$ENV{HOME}/.cache/dtbench")
    endif()
    get_filename_component(_dtbench_base "${PROJECT_SOURCE_DIR}/.." ABSOLUTE)
    set(_dtbench_launcher /usr/bin/env "CCACHE_DIR=${_dtbench_cache}/ccache"
        "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
        "CCACHE_BASEDIR=${_dtbench_base}" "CCACHE_MAXSIZE=5G" "${DTBENCH_CCACHE_PROGRAM}")
    set(CMAKE_C_COMPILER_LAUNCHER ${_dtbench_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_dtbench_launcher})
    message(STATUS "ccache: ${DTBENCH_CCACHE_PROGRAM}, cache ${_dtbench_cache}/ccache")
  else()
    message(STATUS "ccache: not installed (a second build compiles everything again)")
  endif()
endif()
