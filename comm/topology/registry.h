#pragma once
// The topologies (--topology) as one table, like models/registry.cpp: each row is a name, the
// generator of its Schedule (none for native), the executor's default pipeline segment and a line of
// help. The option parsers, the --help texts and the report take their lists from here; adding a
// topology is one generator file and one row in registry.cpp.
//
//   native            the backend's own all-reduce (no Schedule; the backend picks its algorithm)
//   ring              ring.h            tree, star, binary-tree-star   tree.h
//   clique            clique.h          hierarchical                   hierarchical.h
//
// Default segments (Note [Pipelined schedules] in comm/schedule_executor.h): 1 MiB for the trees
// (tree, star, binary-tree-star) and hierarchical, whose levels forward a segment while the next one
// arrives; within one host whole chunks (0) for ring and clique, whose steps already move a different
// chunk each and where, measured over Open MPI's shared memory at 2 ranks, segments only added
// messages (docs/benchmarks-history.md, "Communication: every backend x topology, pipelined
// schedules"); 0 for native. Across hosts
// every point-to-point topology is cut into segments of crossHostSegmentBytes() (below; 128 KiB when the
// links' rate is not known; at most kMaxSegments per chunk): a pair
// of hosts exchanging whole chunks of several MiB both ways over Open MPI's TCP runs one direction at
// a time (its rendezvous control messages queue behind the data flowing the other way), while
// segments travel eagerly (comm/backends/mpi_communicator.cpp, Note [Open MPI's eager limit between
// nodes]); and a tree's pipeline fills sooner with small segments: 0.81-0.97 of the link bound from
// 4 MB at 3 and 4 nodes with 256 KiB, against 0.66-0.90 with 1 MiB; at 4 MB over 4 nodes a tree two
// levels deep fills its pipeline in about three segments of sixteen at 256 KiB (0.88 modelled,
// 0.87-0.91 measured), of thirty-two at 128 KiB (0.93 modelled, 0.87-0.96 measured; docs/benchmarks-history.md,
// "The link bound: why trees and stars ran at half of it").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

struct TopologyRow;

// The executor's default segment for a Schedule that crosses hosts whose link rate is not known
// (see above).
constexpr int64_t kCrossHostSegmentBytes = int64_t{128} << 10;

// The queue in front of a link, in seconds of its rate: the emulated cluster's switch port holds
// 10 ms (docs/cluster.md). The only links whose rate dtbench knows are that cluster's.
constexpr double kLinkQueueSeconds = 0.010;

// The segment across hosts whose slowest link carries `slowestLinkBps` bit/s (the emulated cluster's
// cluster.json says so: common/cluster_file.h), when the walk keeps `piecesInFlightPerLink` segment
// pieces posted at once into the busiest link (comm::crossHostPiecesInFlight; 0: not known). Two
// bounds, the smaller wins, at least 16 KiB and at most 1 MiB:
//  - about one millisecond of the link, the power of two nearest to rate / 8 / 1000 bytes. A segment
//    costs each rank a message's fixed work and a tree's pipeline fills in a few segment times, so the
//    best segment grows with the rate: at 1 Gbit/s over 4 emulated nodes (four ranks on two cores)
//    128 KiB did as well as 64 KiB or better and beat 256 KiB at 4 MB;
//  - the largest power of two with which the pieces in flight fit the link's queue
//    (kLinkQueueSeconds): more than that and the flows that share the link overflow it, and each
//    loss costs a flow its congestion window. A clique over 4 nodes keeps 12 pieces in flight per
//    link: at 200 Mbit/s 32 KiB pieces dropped ~3,200 packets per launch at the queue and ran at
//    0.84-0.86 of the bound at 4 MB, 16 KiB pieces ~350 and 0.92 (docs/benchmarks-history.md, "Segments that
//    fit the link's queue"; measured again with the nodes on cubic, "The nodes' TCP congestion
//    control": Open MPI's 4-node clique 0.98 at 16 KiB against 0.88-0.94 at 32 KiB).
// kCrossHostSegmentBytes when the rate is not known. Throws std::invalid_argument for a rate that is
// not positive or a negative count.
int64_t crossHostSegmentBytes(std::optional<double> slowestLinkBps, int64_t piecesInFlightPerLink = 0);

// One topology of the table: what a configuration holds for --topology. Copyable; compares equal
// when it is the same row.
class Topology {
 public:
  Topology();  // native

  // The row named `name`; throws common::UsageError "unknown topology 'x' (--topology); valid
  // topologies: native, ring, ...".
  static Topology parse(const std::string& name);
  static std::vector<Topology> all();  // in table order, native first

  const std::string& name() const;
  const std::string& help() const;
  // native: the backend's own all-reduce, with no Schedule of dtbench's.
  bool native() const;
  // The Schedule over `hosts` (which must cover the world; only binary-tree-star and hierarchical
  // read the hosts). Throws std::invalid_argument for native and for an empty world.
  Schedule schedule(const HostLayout& hosts) const;
  // Whether the Schedule repeats along the ranks (ring, clique, hierarchical over equal hosts), so
  // that a slice of it (Schedule::slicePeriod) stands for it in a model of a large world.
  bool sliceable() const;
  // The transfers that ranks [0, period) send; throws std::invalid_argument when the topology is
  // not sliceable or `period` does not fit it (see ring.h, clique.h, hierarchical.h).
  Schedule slice(const HostLayout& hosts, int period) const;
  // For a sliceable topology, at most how many transfers one rank sends over a whole all-reduce of
  // `hosts` (before segmenting): what a model of a large world holds per simulated rank. nullopt for
  // the others, whose Schedules have O(N) transfers in all.
  std::optional<int64_t> transfersPerRank(const HostLayout& hosts) const;
  // The segment within one host; defaultSegmentBytes(hosts, rate) is the one for a Schedule over
  // `hosts` (for every point-to-point topology over several hosts, crossHostSegmentBytes of the
  // slowest link's rate and of the pieces the Schedule's walk keeps in flight per link, counted on
  // one host's slice where the Schedule repeats every host; kCrossHostSegmentBytes when their rate is
  // not known).
  int64_t defaultSegmentBytes() const;
  int64_t defaultSegmentBytes(const HostLayout& hosts, std::optional<double> slowestLinkBps = std::nullopt) const;

  bool operator==(const Topology& other) const { return row_ == other.row_; }
  bool operator!=(const Topology& other) const { return row_ != other.row_; }

 private:
  explicit Topology(const TopologyRow* row) : row_(row) {}
  const TopologyRow* row_;
};

std::vector<std::string> topologyNames();  // native first

// "native (the backend's own all-reduce), ring (...), ...": the list for --help texts.
std::string topologyHelp();

// Topology::parse(topology).schedule(hosts), for callers holding the name as text (the report reads
// it from config.json).
Schedule makeSchedule(const std::string& topology, const HostLayout& hosts);

}  // namespace dtbench::comm
