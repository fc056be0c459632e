#pragma once
// makeCommunicator: a Communicator by backend name (`--backend`).
//   gloo  GlooCommunicator over a TCPStore at masterAddr:masterPort (rank 0 serves), or a FileStore
//         when storePath is set, or an in-process HashStore for a world of 1 with no port given.
//   mpi   MpiCommunicator; MPI decides rank and size (a rank/world from the environment that
//         disagrees is an error). "this build has no MPI" when built without it.
//   nccl  known, and rejected: "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch"
//         (decided from DTBENCH_TORCH_HAS_CUDA, never /usr/local/cuda). With a CUDA LibTorch it is
//         rejected as not implemented yet: a ProcessGroupNCCL communicator is future work, not
//         written here because no CUDA build was available to compile and test it against.
// Unknown names throw std::invalid_argument listing the valid ones.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace dtbench::comm {

struct BackendOptions {
  std::string backend = "gloo";
  int rank = 0;
  int worldSize = 1;
  std::string masterAddr;  // gloo over TCPStore
  int masterPort = 0;
  std::string storePath;   // gloo over FileStore instead (shared filesystem)
  std::string glooIface;   // --gloo-iface, else GLOO_SOCKET_IFNAME (read by the caller)
  int glooThreads = 2;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

const std::vector<std::string>& backendNames();  // gloo, mpi, nccl

// Throws std::invalid_argument for an unknown backend or one this build cannot run (message says
// why and what to do).
void checkBackendAvailable(const std::string& backend);

std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options);

// True for 127.0.0.0/8, ::1 and "localhost": every rank on this machine.
bool isLoopbackAddress(const std::string& address);

}  // namespace dtbench::comm
