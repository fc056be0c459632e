#include "comm/backends/library_versions.h"

#include "dtbench/build_config.h"

#if DTBENCH_TORCH_HAS_CUDA
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#endif
#if DTBENCH_HAVE_MPI
#include <mpi.h>

#include <cstddef>
#endif

namespace dtbench::comm {

std::string mpiLibraryVersion() {
#if DTBENCH_HAVE_MPI
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return "unknown MPI";
  std::string text(version, static_cast<size_t>(length));
  const auto end = text.find_first_of(",\n");
  return end == std::string::npos ? text : text.substr(0, end);
#else
  return "";
#endif
}

std::string ncclLibraryVersion() {
#if DTBENCH_TORCH_HAS_CUDA
  return c10d::getNcclVersion();
#else
  return "";
#endif
}

}  // namespace dtbench::comm
