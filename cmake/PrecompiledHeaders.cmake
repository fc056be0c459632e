# One precompiled header with LibTorch, built once and reused by every target:
# a translation unit that includes <torch/torch.h> costs ~30 s on 2 cores without it.
add_library(dtbench_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(dtbench_pch PUBLIC torch dtbench_warnings dtbench_sanitizers)
if(DTBENCH_PCH)
  target_precompile_headers(dtbench_pch PRIVATE
    <torch/torch.h> <vector> <string> <memory> <functional> <chrono> <cstdint>)
endif()

# dtbench_target(<target>): the settings every dtbench C++ target shares.
function(dtbench_target target)
  target_link_libraries(${target} PRIVATE dtbench_warnings dtbench_sanitizers)
  if(DTBENCH_PCH)
    target_precompile_headers(${target} REUSE_FROM dtbench_pch)
  endif()
endfunction()
