# dtbench_warnings: linked PRIVATE by every dtbench target (not global flags).
add_library(dtbench_warnings INTERFACE)
target_compile_options(dtbench_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
                                 -Wcast-align -Woverloaded-virtual -Wnull-dereference>)
