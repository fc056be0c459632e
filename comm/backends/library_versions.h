#pragma once
// The communication libraries this build carries, as run directories record them.

#include <string>

namespace dtbench::comm {

// Open MPI's library version string (MPI_Get_library_version, callable before MPI_Init), or ""
// when this build has no MPI.
std::string mpiLibraryVersion();

// The version of the NCCL that LibTorch loads ("2.28.9"), or "" when this build's LibTorch has no
// CUDA. Loading NCCL needs no GPU.
std::string ncclLibraryVersion();

}  // namespace dtbench::comm
