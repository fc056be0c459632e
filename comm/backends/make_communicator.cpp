#include "comm/backends/make_communicator.h"

#include <stdexcept>

#include "comm/backends/gloo_communicator.h"
#include "comm/backends/gpu_devices.h"
#include "comm/failure/peer_table.h"
#include "comm/store.h"
#include "dtbench/build_config.h"

#if DTBENCH_HAVE_MPI
#include "comm/backends/mpi_communicator.h"
#endif
#if DTBENCH_TORCH_HAS_CUDA
#include "comm/backends/nccl_communicator.h"
#endif

namespace dtbench::comm {

bool isLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

namespace {

// A world of 1 with no port or path given meets no one: an in-process store.
bool alone(const BackendOptions& options) {
  return options.worldSize == 1 && options.storePath.empty() && options.masterPort == 0;
}

Store rendezvousStore(const BackendOptions& options) {
  if (alone(options)) return Store::hash(options.timeout());
  if (!options.storePath.empty()) return Store::file(options.storePath, options.worldSize, options.timeout());
  return Store::tcp(options.masterAddr, options.masterPort, options.rank == 0, options.worldSize, options.timeout());
}

}  // namespace

std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options) {
  checkBackendAvailable(options.backend);
#if DTBENCH_TORCH_HAS_CUDA
  if (options.backend == Backend::kNccl) {
    requireGpu("--backend nccl", "use --backend gloo or mpi, which communicate from the CPU");  // before any wait
    NcclOptions nccl;
    nccl.deviceIndex = cudaDeviceForLocalRank(options.localRank);
    nccl.timeout = options.timeout();
    return std::make_unique<NcclCommunicator>(rendezvousStore(options), options.rank, options.worldSize, nccl);
  }
#endif
  if (options.backend == Backend::kGloo) {
    Store store = rendezvousStore(options);
    GlooOptions gloo;
    gloo.iface = options.glooIface;
    gloo.hostname = alone(options) || isLoopbackAddress(options.masterAddr) ? "127.0.0.1" : thisHostName();
    gloo.timeout = options.timeout();
    gloo.threads = options.glooThreads;
    return std::make_unique<GlooCommunicator>(store, options.rank, options.worldSize, gloo);
  }
#if DTBENCH_HAVE_MPI
  if (options.backend == Backend::kMpi) {
    auto mpi = std::make_unique<MpiCommunicator>(options.timeout());
    if (options.worldSize > 1 && (mpi->rank() != options.rank || mpi->size() != options.worldSize))
      throw std::invalid_argument("MPI says rank " + std::to_string(mpi->rank()) + " of " +
                                  std::to_string(mpi->size()) + " but the environment or flags say rank " +
                                  std::to_string(options.rank) + " of " + std::to_string(options.worldSize) +
                                  "; launch mpi runs with mpirun/srun only");
    return mpi;
  }
#endif
  throw std::logic_error(std::string("unreachable backend ") + name(options.backend));
}

}  // namespace dtbench::comm
