#include "trainer/world.h"

#include "comm/allgather_values.h"
#include "comm/backends/make_communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/impairment/impairment.h"

namespace dtbench::trainer {

World joinWorld(const RunConfig& config) {
  World world;
  world.communicator = comm::makeCommunicator(config.comm.connection);
  world.hostNames = comm::allgatherStrings(*world.communicator, comm::thisHostName());
  world.hosts = config.comm.ranksPerHost > 0 ? comm::hostsFromRanksPerHost(world.size(), config.comm.ranksPerHost)
                                             : comm::hostsFromNames(world.hostNames);
  world.recorder = std::make_unique<comm::TrafficRecorder>(world.rank(), world.size());
  // Pair averaging moves its own bytes (trainer/sync/pair_averaging.h), impaired there.
  world.allreduce =
      std::make_unique<comm::TopologyAllreduce>(*world.communicator, config.comm.topology, world.hosts, *world.recorder,
                                                config.sync.kind == Sync::kSsgd ? config.impairment
                                                                                : comm::Impairment{});
  return world;
}

}  // namespace dtbench::trainer
