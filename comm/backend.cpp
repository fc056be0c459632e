#include "comm/backend.h"

#include <stdexcept>

#include "comm/gloo_communicator.h"
#include "comm/peer_table.h"
#include "comm/store.h"
#include "dtbench/build_config.h"

#if DTBENCH_HAVE_MPI
#include "comm/mpi_communicator.h"
#endif

namespace dtbench::comm {

const std::vector<std::string>& backendNames() {
  static const std::vector<std::string> names{"gloo", "mpi", "nccl"};
  return names;
}

bool isLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

void checkBackendAvailable(const std::string& backend) {
  if (backend == "gloo") return;
  if (backend == "mpi") {
    if (DTBENCH_HAVE_MPI) return;
    throw std::invalid_argument("this build has no MPI; rebuild with libopenmpi-dev installed and "
                                "-DDTBENCH_WITH_MPI=ON, or use --backend gloo");
  }
  if (backend == "nccl") {
    if (!DTBENCH_TORCH_HAS_CUDA)
      throw std::invalid_argument("this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch (use --backend "
                                  "gloo or mpi here)");
    throw std::invalid_argument("this LibTorch has CUDA, but dtbench's nccl backend (c10d ProcessGroupNCCL) is not "
                                "implemented yet; use --backend gloo or mpi");
  }
  throw std::invalid_argument("unknown backend '" + backend + "' (--backend); valid backends: gloo, mpi, nccl");
}

std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options) {
  checkBackendAvailable(options.backend);
  if (options.backend == "gloo") {
    const bool server = options.rank == 0;
    const bool alone = options.worldSize == 1 && options.storePath.empty() && options.masterPort == 0;
    Store store = alone ? Store::hash(options.timeout)
                  : options.storePath.empty()
                      ? Store::tcp(options.masterAddr, options.masterPort, server, options.worldSize, options.timeout)
                      : Store::file(options.storePath, options.worldSize, options.timeout);
    GlooOptions gloo;
    gloo.iface = options.glooIface;
    gloo.hostname = alone || isLoopbackAddress(options.masterAddr) ? "127.0.0.1" : thisHostName();
    gloo.timeout = options.timeout;
    gloo.threads = options.glooThreads;
    return std::make_unique<GlooCommunicator>(store, options.rank, options.worldSize, gloo);
  }
#if DTBENCH_HAVE_MPI
  if (options.backend == "mpi") {
    auto mpi = std::make_unique<MpiCommunicator>(options.timeout);
    if (options.worldSize > 1 && (mpi->rank() != options.rank || mpi->size() != options.worldSize))
      throw std::invalid_argument("MPI says rank " + std::to_string(mpi->rank()) + " of " +
                                  std::to_string(mpi->size()) + " but the environment or flags say rank " +
                                  std::to_string(options.rank) + " of " + std::to_string(options.worldSize) +
                                  "; launch mpi runs with mpirun/srun only");
    return mpi;
  }
#endif
  throw std::logic_error("unreachable backend " + options.backend);
}

}  // namespace dtbench::comm
