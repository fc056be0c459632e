#pragma once
// Backend: the communication libraries dtbench runs on (--backend), by name:
//   gloo  c10d's ProcessGroupGloo (comm/backends/gloo_communicator.h)
//   mpi   Open MPI's C API (comm/backends/mpi_communicator.h); only when this build has MPI
//   nccl  known, and rejected: "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch"
//         (decided from DTBENCH_TORCH_HAS_CUDA, never /usr/local/cuda). With a CUDA LibTorch it is
//         rejected as not implemented yet: a ProcessGroupNCCL communicator is future work, not
//         written here because no CUDA build was available to compile and test it against.
// and which element types each one's own all-reduce takes (the table of comm/element_type.h):
//   backend       float32  float16  bfloat16
//   gloo native   yes      yes      no (Gloo rejects it)
//   mpi native    yes      no       no (Open MPI has no 16-bit float type)
//   nccl native   yes      yes      yes

#include "comm/element_type.h"
#include "common/named_values.h"

#include <vector>

namespace dtbench::comm {

enum class Backend { kGloo, kMpi, kNccl };

// gloo, mpi, nccl; parse() throws "unknown backend 'x' (--backend); valid backends: gloo, mpi, nccl".
const common::NamedValues<Backend>& backendNames();

inline const char* name(Backend backend) { return backendNames().name(backend); }

// Throws common::UsageError, saying why and what to do, for a backend this build cannot run.
void checkBackendAvailable(Backend backend);

// Whether `backend`'s own all-reduce (topology "native") takes `type`; point-to-point topologies
// take every ElementType.
bool nativeAllreduceSupports(Backend backend, ElementType type);

}  // namespace dtbench::comm
