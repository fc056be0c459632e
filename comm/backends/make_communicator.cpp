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


// One factory per backend this build has; a backend whose row says it is not built has none.
std::unique_ptr<Communicator> makeGloo(const BackendOptions& options) {
  Store store = rendezvousStore(options);
  GlooOptions gloo;
  gloo.iface = options.glooIface;
  gloo.hostname = alone(options) || isLoopbackAddress(options.masterAddr) ? "127.0.0.1" : thisHostName();
  gloo.timeout = options.timeout();
  gloo.threads = options.glooThreads;
  return std::make_unique<GlooCommunicator>(store, options.rank, options.worldSize, gloo);
}

#if DTBENCH_HAVE_MPI
std::unique_ptr<Communicator> makeMpi(const BackendOptions& options) {
  auto mpi = std::make_unique<MpiCommunicator>(options.timeout());
  if (options.worldSize > 1 && (mpi->rank() != options.rank || mpi->size() != options.worldSize))
    throw std::invalid_argument("MPI says rank " + std::to_string(mpi->rank()) + " of " + std::to_string(mpi->size()) +
                                " but the environment or flags say rank " + std::to_string(options.rank) + " of " +
                                std::to_string(options.worldSize) + "; launch mpi runs with mpirun/srun only");
  return mpi;
}
#endif

#if DTBENCH_TORCH_HAS_CUDA
std::unique_ptr<Communicator> makeNccl(const BackendOptions& options) {
  requireGpu("--backend nccl", "use --backend gloo or mpi, which communicate from the CPU");  // before any wait
  NcclOptions nccl;
  nccl.deviceIndex = cudaDeviceForLocalRank(options.localRank);
  nccl.timeout = options.timeout();
  return std::make_unique<NcclCommunicator>(rendezvousStore(options), options.rank, options.worldSize, nccl);
}
#endif

using Factory = std::unique_ptr<Communicator> (*)(const BackendOptions&);

struct BackendFactory {
  Backend backend;
  Factory make;
};

const BackendFactory kFactories[] = {
    {Backend::kGloo, makeGloo},
#if DTBENCH_HAVE_MPI
    {Backend::kMpi, makeMpi},
#endif
#if DTBENCH_TORCH_HAS_CUDA
    {Backend::kNccl, makeNccl},
#endif
};

}  // namespace

std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options) {
  checkBackendAvailable(options.backend);
  for (const BackendFactory& factory : kFactories)
    if (factory.backend == options.backend) return factory.make(options);
  throw std::logic_error(std::string("backend ") + name(options.backend) +
                         " is built (its row says so) but has no factory in make_communicator.cpp");
}

}  // namespace dtbench::comm
