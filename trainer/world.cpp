#include "trainer/world.h"

#include <chrono>
#include <cmath>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/allgather_values.h"
#include "comm/backends/make_communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/impairment/impairment.h"
#include "comm/work.h"
#include "common/cluster_file.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "trainer/config_agreement.h"
#include "trainer/stop_signal.h"

namespace dtbench::trainer {
namespace {

// The ranks compare their settings over the communicator (trainer/config_agreement.h), which a
// rank with another backend, world size or rendezvous prevents from forming: a gloo rank then
// waits out --timeout at the rendezvous, and an mpi rank started without mpirun finds itself rank
// 0 of 1. So a failure to meet says what every rank must share.
std::unique_ptr<comm::Communicator> meetTheOtherRanks(const RunConfig& config) {
  try {
    return comm::makeCommunicator(config.comm.connection);
  } catch (const common::UsageError&) {
    throw;  // this build cannot run the backend at all: nothing to do with the other ranks
  } catch (const std::exception& e) {
    if (config.worldSize() <= 1) throw;
    std::vector<std::string> flags;
    for (const SharedSetting& setting : sharedSettings()) flags.emplace_back(setting.flag);
    throw comm::CommError(std::string(e.what()) +
                          "; every rank must run with the same --backend, world size and rendezvous "
                          "(--master-addr and --master-port, or --store-path) to meet the others, which then "
                          "compare the rest of the settings every rank must share: " +
                          common::joinList(flags));
  }
}

}  // namespace

World joinWorld(const RunConfig& config) {
  World world;
  world.communicator = meetTheOtherRanks(config);
  if (const std::string& dir = config.comm.connection.messageLog; !dir.empty()) {
    world.messageLog = std::make_unique<comm::MessageLogFiles>(dir, world.communicator->rank(), comm::thisHostName());
    world.communicator = world.messageLog->wrap(std::move(world.communicator));
  }
  world.hostNames = comm::allgatherStrings(*world.communicator, comm::thisHostName());
  world.hosts = config.comm.ranksPerHost > 0 ? comm::hostsFromRanksPerHost(world.size(), config.comm.ranksPerHost)
                                             : comm::hostsFromNames(world.hostNames);
  world.recorder = std::make_unique<comm::TrafficRecorder>(world.rank(), world.size());
  // Read on every rank alike (checkRanksAgree compares them); config.json's writer warns about a host
  // that is no node of the file.
  if (config.comm.ranksPerHost == 0)
    world.slowestLinkBps =
        common::clusterLinksFromVariable(std::getenv(common::kClusterVariable), world.hostNames, nullptr).slowest();
  // Pair averaging moves its own bytes (trainer/sync/pair_averaging.h), impaired there.
  world.allreduce = std::make_unique<comm::TopologyAllreduce>(
      *world.communicator, config.comm.topology, world.hosts, *world.recorder,
      config.sync.kind == Sync::kSsgd ? config.impairment : comm::Impairment{},
      config.comm.topology.defaultSegmentBytes(world.hosts, world.slowestLinkBps), holdBoundsFor(config));
  return world;
}

comm::HoldBounds holdBoundsFor(const RunConfig& config) {
  comm::HoldBounds bounds;
  if (config.comm.connection.timeoutS > 0 && std::isfinite(config.comm.connection.timeoutS))
    bounds.timeout = std::chrono::milliseconds(static_cast<int64_t>(config.comm.connection.timeoutS * 1e3));
  bounds.stopRequested = [] { return stopSignalRequested(); };
  return bounds;
}

void World::writeMessageLog(bool failure) const {
  if (!messageLog) return;
  if (failure)
    messageLog->writeBestEffort(std::cerr);
  else
    messageLog->write();
}

}  // namespace dtbench::trainer
