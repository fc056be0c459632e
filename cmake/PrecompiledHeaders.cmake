# Two precompiled headers, each built once and reused by every target of its kind:
#   dtbench_pch        LibTorch (<torch/torch.h>): a translation unit that includes it costs ~30 s on
#                      2 cores without it.
#   dtbench_pch_plain  the standard library and nlohmann/json, for the targets that need no LibTorch
#                      (common, comm's data half, the report, the sweep, the launcher).
add_library(dtbench_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(dtbench_pch PUBLIC torch dtbench_warnings dtbench_sanitizers)
add_library(dtbench_pch_plain OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(dtbench_pch_plain PUBLIC nlohmann_json::nlohmann_json dtbench_warnings dtbench_sanitizers)
if(DTBENCH_PCH)
  target_precompile_headers(dtbench_pch PRIVATE
    <torch/torch.h> <vector> <string> <memory> <functional> <chrono> <cstdint>)
  target_precompile_headers(dtbench_pch_plain PRIVATE
    <nlohmann/json.hpp> <vector> <string> <map> <memory> <functional> <chrono> <cstdint> <sstream>)
endif()

# dtbench_target(<target> [NO_TORCH]): the settings every dtbench C++ target shares. NO_TORCH marks a
# target that must build without LibTorch: it reuses the plain precompiled header instead.
function(dtbench_target target)
  cmake_parse_arguments(ARG "NO_TORCH" "" "" ${ARGN})
  target_link_libraries(${target} PRIVATE dtbench_warnings dtbench_sanitizers dtbench_link_order)
  if(DTBENCH_PCH)
    if(ARG_NO_TORCH)
      target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
      target_precompile_headers(${target} REUSE_FROM dtbench_pch_plain)
    else()
      target_precompile_headers(${target} REUSE_FROM dtbench_pch)
    endif()
  endif()
endfunction()
