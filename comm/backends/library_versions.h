#pragma once
// The communication libraries this build carries, as run directories record them.

#include <string>

namespace dtbench::comm {

// Open MPI's library version string (MPI_Get_library_version, callable before MPI_Init), or ""
// when this build has no MPI.
std::string mpiLibraryVersion();

}  // namespace dtbench::comm
