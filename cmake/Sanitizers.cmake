# dtbench_sanitizers: ASan + UBSan when DTBENCH_SANITIZE is ON, empty otherwise.
add_library(dtbench_sanitizers INTERFACE)
if(DTBENCH_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_options(dtbench_sanitizers INTERFACE ${_san})
  target_link_options(dtbench_sanitizers INTERFACE ${_san})
endif()
