# Generates build_config.h: what this build contains, read at run time by the CLI and config.json.
# Feature switches live in this header, not in -D flags, so every target shares one precompiled header.
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_config.h.in ${PROJECT_BINARY_DIR}/generated/dtbench/build_config.h @ONLY)
add_library(dtbench_build_config INTERFACE)
target_include_directories(dtbench_build_config INTERFACE ${PROJECT_BINARY_DIR}/generated)
