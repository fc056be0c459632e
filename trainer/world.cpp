#include "trainer/world.h"

#include <stdexcept>

#include "comm/allgather_values.h"
#include "comm/backend.h"
#include "comm/peer_table.h"
#include "comm/topology/topology.h"

namespace dtbench::trainer {

World joinWorld(const RunConfig& config) {
  comm::BackendOptions options;
  options.backend = config.backend;
  options.rank = config.rank;
  options.worldSize = config.worldSize;
  options.masterAddr = config.masterAddr;
  options.masterPort = config.masterPort;
  options.storePath = config.storePath;
  options.glooIface = config.glooIface;
  options.glooThreads = config.glooThreads;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(config.timeoutS * 1000.0));
  World world;
  try {
    comm::checkBackendAvailable(config.backend);
    comm::checkTopologyName(config.topology);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  world.communicator = comm::makeCommunicator(options);
  world.hostNames = comm::allgatherStrings(*world.communicator, comm::thisHostName());
  world.hosts = config.ranksPerHost > 0 ? comm::hostsFromRanksPerHost(world.size(), config.ranksPerHost)
                                        : comm::hostsFromNames(world.hostNames);
  world.recorder = std::make_unique<comm::TrafficRecorder>(world.rank(), world.size());
  world.allreduce =
      std::make_unique<comm::TopologyAllreduce>(*world.communicator, config.topology, world.hosts, *world.recorder,
                                                config.sync == "ssgd" ? impairmentOf(config) : comm::Impairment{});
  return world;
}

}  // namespace dtbench::trainer
