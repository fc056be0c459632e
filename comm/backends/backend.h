#pragma once
// Backend: the communication libraries dtbench runs on (--backend), each one a row of facts
// (BackendRow) that every file outside comm/backends/ asks instead of comparing Backend values:
//   gloo  c10d's ProcessGroupGloo (gloo_communicator.h)
//   mpi   Open MPI's C API (mpi_communicator.h); only in a build with MPI
//   nccl  c10d's ProcessGroupNCCL (nccl_communicator.h), --topology native only; in a build whose
//         LibTorch has no CUDA (DTBENCH_TORCH_HAS_CUDA, never /usr/local/cuda) it is known and
//         refused: "this build of LibTorch has no CUDA".
// Every backend's own all-reduce (--topology native) sums float32, float16 and bfloat16: gloo and
// nccl natively, mpi through a sum of dtbench's own for the 16-bit types (mpi_communicator.cpp);
// point-to-point topologies take every ElementType (dtbench reduces).
//
// Adding a backend (docs/design.md, "Adding a backend"): a value of the enum, its row in
// backend.cpp, its Communicator class beside the others, and its factory line in
// make_communicator.cpp. Nothing else names a backend.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/element_type.h"
#include "common/named_values.h"

namespace dtbench::comm {

enum class Backend { kGloo, kMpi, kNccl };

// What `dtbench predict` and the link bound model a backend's own all-reduce as (native_models.h).
struct NativeModel {
  double efficiency;  // native time = the modelled Schedule's simulated time / efficiency
  bool postedAhead;   // its messages leave without waiting for a receive to be posted (NCCL's slots)
  const char* (*modelledAs)(int worldSize);  // the topology's name (registry.h): ring, hierarchical
  const char* why;    // one line, for tables and help
};

struct BackendRow {
  Backend backend;
  const char* name;  // --backend's value, config.json's comm.backend
  // Build time: whether this build can run it, and else the error (why, and what to do).
  bool built;
  const char* notBuilt;
  // Run time.
  bool needsCuda;     // it communicates between GPUs: the run needs --device cuda
  bool onGpuStream;   // its collectives are GPU work that a CUDA graph records (--cuda-graph)
  bool joinsAlone;    // a one-rank run still makes its communicator (mpi asks MPI who it is; nccl's
                      // all-reduce runs alone); gloo meets no one
  bool pointToPoint;  // it runs dtbench's point-to-point topologies (ring, tree, ...) and pair averaging
  std::vector<ElementType> nativeTypes;  // what its own all-reduce sums
  // The largest message it sends from one host to another without waiting for the receiver to ask
  // for it (the predictor's network model reads it).
  int64_t eagerBytesBetweenHosts;
  // An environment variable that changes its collectives, recorded in config.json under
  // environment.<recordedAs> when set (nullptr: none).
  const char* tuningVariable;
  const char* recordedAs;
  NativeModel native;
};

// Every backend's row, in --backend's order (gloo, mpi, nccl).
const std::vector<BackendRow>& backendRows();
const BackendRow& backendRow(Backend backend);

// gloo, mpi, nccl; parse() throws "unknown backend 'x' (--backend); valid backends: gloo, mpi, nccl".
const common::NamedValues<Backend>& backendNames();

inline const char* name(Backend backend) { return backendRow(backend).name; }

// Throws common::UsageError (the row's notBuilt) for a backend this build cannot run.
void checkBackendAvailable(Backend backend);

// Throws common::UsageError naming `topology` when it is a point-to-point topology (or pair
// averaging: `pointToPoint` true) that `backend` does not run.
void checkBackendRunsTopology(Backend backend, const std::string& topology, bool pointToPoint);

// Whether `backend`'s own all-reduce (topology "native") takes `type` (the row's nativeTypes).
bool nativeAllreduceSupports(Backend backend, ElementType type);

}  // namespace dtbench::comm
