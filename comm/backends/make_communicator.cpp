#include "comm/backends/make_communicator.h"

#include <stdexcept>

#include "comm/backends/gloo_communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/store.h"
#include "dtbench/build_config.h"

#if DTBENCH_HAVE_MPI
#include "comm/backends/mpi_communicator.h"
#endif

namespace dtbench::comm {

bool isLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

std::unique_ptr<Communicator> makeCommunicator(const BackendOptions& options) {
  checkBackendAvailable(options.backend);
  if (options.backend == Backend::kGloo) {
    const bool server = options.rank == 0;
    const bool alone = options.worldSize == 1 && options.storePath.empty() && options.masterPort == 0;
    Store store = alone ? Store::hash(options.timeout())
                  : options.storePath.empty()
                      ? Store::tcp(options.masterAddr, options.masterPort, server, options.worldSize, options.timeout())
                      : Store::file(options.storePath, options.worldSize, options.timeout());
    GlooOptions gloo;
    gloo.iface = options.glooIface;
    gloo.hostname = alone || isLoopbackAddress(options.masterAddr) ? "127.0.0.1" : thisHostName();
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
