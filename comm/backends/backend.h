#pragma once
// Backend: the communication libraries dtbench runs on (--backend), by name:
//   gloo  c10d's ProcessGroupGloo (comm/backends/gloo_communicator.h)
//   mpi   Open MPI's C API (comm/backends/mpi_communicator.h); only when this build has MPI
//   nccl  c10d's ProcessGroupNCCL (comm/backends/nccl_communicator.h), --topology native only; in a
//         build whose LibTorch has no CUDA (decided from DTBENCH_TORCH_HAS_CUDA, never
//         /usr/local/cuda) it is known and rejected: "this build of LibTorch has no CUDA".
// and which element types each one's own all-reduce takes (the table of comm/element_type.h):
//   backend       float32  float16  bfloat16
//   gloo native   yes      yes      yes
//   mpi native    yes      no       no (Open MPI has no 16-bit float type)
//   nccl native   yes      yes      yes

#include <cstdint>

#include "comm/element_type.h"
#include "common/named_values.h"

#include <string>
#include <vector>

namespace dtbench::comm {

enum class Backend { kGloo, kMpi, kNccl };

// gloo, mpi, nccl; parse() throws "unknown backend 'x' (--backend); valid backends: gloo, mpi, nccl".
const common::NamedValues<Backend>& backendNames();

inline const char* name(Backend backend) { return backendNames().name(backend); }

// Throws common::UsageError, saying why and what to do, for a backend this build cannot run.
void checkBackendAvailable(Backend backend);

// Whether `backend` runs dtbench's point-to-point topologies (ring, tree, ...) and pair averaging:
// gloo and mpi do; nccl runs --topology native only.
bool backendRunsPointToPoint(Backend backend);

// Throws common::UsageError naming `topology` when it is a point-to-point topology (or pair
// averaging: `pointToPoint` true) that `backend` does not run.
void checkBackendRunsTopology(Backend backend, const std::string& topology, bool pointToPoint);

// Whether `backend`'s own all-reduce (topology "native") takes `type`; point-to-point topologies
// take every ElementType.
bool nativeAllreduceSupports(Backend backend, ElementType type);

// The largest message `backend` sends from one host to another without waiting for the receiver to
// ask for it: mpi 2 MiB (the TCP eager limit dtbench sets, Note [Open MPI's eager limit between
// nodes] in comm/backends/mpi_communicator.cpp), gloo 0 (every message waits for the receiver's
// "ready"), nccl 0 (it runs no point-to-point topology). The predictor's network model reads it.
int64_t eagerBytesBetweenHosts(Backend backend);

}  // namespace dtbench::comm
