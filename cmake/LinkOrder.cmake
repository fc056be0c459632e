# dtbench_link_order: linked by every dtbench target (dtbench_target); it puts libstdc++ ahead of
# LibTorch on every executable's link line.
#
# Note [libstdc++ before LibTorch]
# PyTorch's wheels are built against an old system C++ runtime plus a static supplement, and
# libtorch.so exports what that supplement holds: std::filesystem (remove_all, status, ...) and
# std::chrono's time zones, unversioned. Linked after LibTorch, as g++ links it by default,
# libstdc++ loses: a program's calls to std::filesystem bind to libtorch.so's copies, and
# std::filesystem::remove_all crashed there (a call through a null pointer). With -lstdc++ first,
# the linker binds those calls to libstdc++'s versioned symbols and the loader searches libstdc++
# first. Executables only: a static library's link options are its consumers'.
add_library(dtbench_link_order INTERFACE)
target_link_options(dtbench_link_order INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:LINKER:--push-state,--no-as-needed -lstdc++ LINKER:--pop-state>)
