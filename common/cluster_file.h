#pragma once
// The emulated cluster's description, cluster.json (written by experiments/cluster/cluster.sh up;
// `cluster.sh env` exports its path as DTBENCH_CLUSTER), and the link rates of a run's hosts read
// from it. Each node is a host of its own (its hostname is the node's name) with one link shaped
// to `link_rate_bps` bit/s in both directions, null when the link is not shaped. The keys read:
//
//   {"nodes": [{"name": "node1", "link_rate_bps": 1000000000, ...}, ...], ...}
//
// every other key, of the file and of a node, is ignored.
//
// The rule for a run (clusterLinksFromVariable), given each rank's hostname:
//   DTBENCH_CLUSTER unset or empty           off the cluster: no rates, no file;
//   set, the file unreadable or malformed    common::UsageError naming DTBENCH_CLUSTER and the problem;
//   set, a rank's host not a node of it      off the cluster (e.g. a run in the root namespace), with
//                                            one warning line naming the host;
//   set, every host a node                   on the cluster: each host's rate (null when unshaped).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::common {

// The environment variable that names cluster.json.
inline constexpr char kClusterVariable[] = "DTBENCH_CLUSTER";

struct ClusterNode {
  std::string name;
  std::optional<double> linkRateBps;  // bit/s each way; none: the link is not shaped
};

struct ClusterFile {
  std::string path;
  std::vector<ClusterNode> nodes;

  const ClusterNode* node(const std::string& name) const;  // nullptr when no node has that name
};

// Throws std::runtime_error naming `path` (and the field, for a malformed one) when the file cannot
// be read, is not JSON, or lacks "nodes" (an array), a node's "name" (a non-empty string, unique)
// or its "link_rate_bps" (a positive number, or null).
ClusterFile readClusterFile(const std::string& path);

struct HostLink {
  std::string host;
  std::optional<double> linkRateBps;  // none: the node's link is not shaped
};

// The link rates of a run's hosts, or nothing off the cluster.
struct ClusterLinks {
  std::optional<std::string> file;         // cluster.json's path; none off the cluster
  std::vector<HostLink> hosts;             // the distinct hosts in order of their lowest rank; empty off the cluster
  std::optional<std::string> missingHost;  // off the cluster because this host is no node of the file

  bool onCluster() const { return file.has_value(); }
  // The rate of every host in order, or none when off the cluster or some link is not shaped.
  std::optional<std::vector<double>> rates() const;
  // The slowest host's rate, or none as for rates().
  std::optional<double> slowest() const;
};

// The rates of the hosts named by `hostnameOfRank` (one name per rank) from `file`; off the
// cluster, with missingHost set to the first rank's host that is not a node, when there is one.
ClusterLinks clusterLinks(const ClusterFile& file, const std::vector<std::string>& hostnameOfRank);

// The rule above, for DTBENCH_CLUSTER's value `variable` (nullptr when unset). The warning goes to
// `warnings` when it is not null (rank 0 passes stderr, the other ranks nullptr). Throws
// common::UsageError for a file that cannot be read or is malformed.
ClusterLinks clusterLinksFromVariable(const char* variable, const std::vector<std::string>& hostnameOfRank,
                                      std::ostream* warnings);

// A link rate as cluster.json, config.json and `dtbench allreduce --json` write it: a whole number of
// bits per second as an integer (1000000000, not 1e+09), any other as a number.
nlohmann::json rateJson(double bitsPerSecond);

// A link rate for people: "1 Gbit/s", "200 Mbit/s", "2.5 Gbit/s".
std::string rateText(double bitsPerSecond);

// The slowest link each rank read from cluster.json (none: off the cluster, or a link not shaped),
// rank by rank. "" when every rank read the same; otherwise the usage error to give on every rank:
// the rate sets the pipeline segment across hosts (comm::crossHostSegmentBytes), and ranks that read
// different rates would cut a tensor differently.
std::string describeLinkRateDisagreement(const std::vector<std::optional<double>>& slowestOfRank);

}  // namespace dtbench::common
