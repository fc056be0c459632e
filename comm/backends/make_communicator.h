#pragma once
// makeCommunicator: the Communicator of a backend (comm/backends/backend.h), from the options every
// multi-rank subcommand shares (experiments/cli/rank_options.h fills them from flags and the
// launcher's environment).
//   gloo  GlooCommunicator over a TCPStore at masterAddr:masterPort (rank 0 serves), or a FileStore
//         when storePath is set, or an in-process HashStore for a world of 1 with no port given.
//   mpi   MpiCommunicator; MPI decides rank and size (a rank/world from the environment that
//         disagrees is an error). "this build has no MPI" when built without it.
//   nccl  NcclCommunicator over the same stores as gloo, on the GPU of the local rank
//         (comm/backends/gpu_devices.h); without a visible GPU it fails before meeting any rank.

#include <memory>
#include <string>

#include "comm/backends/backend.h"
#include "comm/backends/backend_options.h"
#include "comm/communicator.h"

namespace dtbench::comm {

// Throws common::UsageError for a backend this build cannot run, std::runtime_error when this machine
// cannot (nccl without a GPU), CommError when the rendezvous fails.
std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options);

// True for 127.0.0.0/8, ::1 and "localhost": every rank on this machine.
bool isLoopbackAddress(const std::string& address);

}  // namespace dtbench::comm
