#pragma once
// World: this rank's place among the ranks of a run: the communicator (--backend), the host
// layout (real host names, or --ranks-per-host), the traffic recorder and the all-reduce algorithm
// (--topology). joinWorld() is collective: every rank of the run calls it with the same flags.
// MPI decides rank and size for --backend mpi; the World's rank() and size() are authoritative.
// Under --message-log the communicator is a LoggingCommunicator (comm/traffic/logging_communicator.h)
// installed before anything else used it, and messageLog writes the rank's files at the end.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/topology/hosts.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic/message_log_files.h"
#include "comm/traffic/traffic_recorder.h"
#include "trainer/config.h"

namespace dtbench::trainer {

struct World {
  std::unique_ptr<comm::Communicator> communicator;
  comm::HostLayout hosts;
  std::unique_ptr<comm::TrafficRecorder> recorder;
  std::unique_ptr<comm::TopologyAllreduce> allreduce;
  std::vector<std::string> hostNames;  // of every rank
  // The slowest link among the run's hosts, from the emulated cluster's cluster.json
  // (common/cluster_file.h); none off the cluster, with --ranks-per-host, or when a link is not
  // shaped. It sets the pipeline segment across hosts (comm::crossHostSegmentBytes).
  std::optional<double> slowestLinkBps;
  std::unique_ptr<comm::MessageLogFiles> messageLog;  // --message-log only

  // Writes the message log's files (when on); on the failure path failure = true never throws.
  void writeMessageLog(bool failure) const;

  int rank() const { return communicator->rank(); }
  int size() const { return communicator->size(); }
};

// Throws common::UsageError for a backend this build lacks, comm::CommError when the rendezvous fails.
World joinWorld(const RunConfig& config);

// The bounds of the injected impairment's holds (comm/impairment/impaired_point_to_point.h): the run's
// --timeout, and its stop signal (trainer/stop_signal.h).
comm::HoldBounds holdBoundsFor(const RunConfig& config);

}  // namespace dtbench::trainer
