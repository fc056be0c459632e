#include "comm/topology/registry.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "comm/topology/clique.h"
#include "comm/topology/hierarchical.h"
#include "comm/topology/ring.h"
#include "comm/topology/schedule_walk.h"
#include "comm/topology/tree.h"
#include "common/lists.h"
#include "common/usage_error.h"

namespace dtbench::comm {

struct TopologyRow {
  std::string name;
  Schedule (*generate)(const HostLayout& hosts);  // nullptr: native
  int64_t defaultSegmentBytes;
  std::string help;
  // The slice of a Schedule that repeats every `period` ranks (Schedule::slicePeriod); nullptr for
  // the topologies whose root makes ranks unlike (the trees and the star).
  Schedule (*slice)(const HostLayout& hosts, int period) = nullptr;
  // Sliceable rows: at most how many transfers one rank sends (Topology::transfersPerRank).
  int64_t (*transfersPerRank)(const HostLayout& hosts) = nullptr;
};

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The table, native first (the order of --help, `--topology all` and the tests).
const std::vector<TopologyRow>& rows() {
  static const std::vector<TopologyRow> kRows{
      {"native", nullptr, 0, "the backend's own all-reduce"},
      {"ring", [](const HostLayout& h) { return ringSchedule(h.worldSize()); }, 0,
       "reduce-scatter then all-gather around one ring",
       [](const HostLayout& h, int period) { return ringSlice(h.worldSize(), period); },
       [](const HostLayout& h) { return 2 * int64_t{h.worldSize() - 1}; }},  // N − 1 steps each way
      {"tree", [](const HostLayout& h) { return treeSchedule(binaryTree(h.worldSize()), "tree"); }, kMiB,
       "binary tree reduce, then broadcast"},
      {"binary-tree-star", [](const HostLayout& h) { return treeSchedule(binaryTreeStar(h), "binary-tree-star"); },
       kMiB, "star inside a host, binary tree across host leaders"},
      {"star", [](const HostLayout& h) { return treeSchedule(starTree(h.worldSize()), "star"); }, kMiB,
       "every rank to one root and back: parameter-server traffic"},
      {"clique", [](const HostLayout& h) { return cliqueSchedule(h.worldSize()); }, 0,
       "each rank owns a shard and exchanges it with every other rank",
       [](const HostLayout& h, int period) { return cliqueSlice(h.worldSize(), period); },
       [](const HostLayout& h) { return 2 * int64_t{h.worldSize() - 1}; }},  // a shard to and from every other
      {"hierarchical", [](const HostLayout& h) { return hierarchicalSchedule(h); }, kMiB,
       "reduce inside a host, ring across host leaders, broadcast inside the host",
       [](const HostLayout& h, int period) { return hierarchicalSlice(h, period); },
       // inside the host both ways, and a leader's ring across the hosts
       [](const HostLayout& h) {
         return 2 * int64_t{std::max(h.consecutiveHostSize(), 1) - 1} + 2 * (static_cast<int64_t>(h.hosts.size()) - 1);
       }},
  };
  return kRows;
}

}  // namespace

Topology::Topology() : row_(&rows().front()) {}

Topology Topology::parse(const std::string& name) {
  for (const TopologyRow& row : rows())
    if (row.name == name) return Topology(&row);
  throw common::UsageError("unknown topology '" + name +
                           "' (--topology); valid topologies: " + common::joinList(topologyNames()));
}

std::vector<Topology> Topology::all() {
  std::vector<Topology> all;
  for (const TopologyRow& row : rows()) all.push_back(Topology(&row));
  return all;
}

const std::string& Topology::name() const { return row_->name; }
const std::string& Topology::help() const { return row_->help; }
bool Topology::native() const { return row_->generate == nullptr; }
int64_t Topology::defaultSegmentBytes() const { return row_->defaultSegmentBytes; }

int64_t Topology::defaultSegmentBytes(const HostLayout& hosts, std::optional<double> slowestLinkBps) const {
  if (native() || hosts.hosts.size() < 2) return row_->defaultSegmentBytes;
  if (!slowestLinkBps) return crossHostSegmentBytes(std::nullopt);
  // A Schedule that repeats every host is counted on one host's slice: a large world stays cheap.
  const int perHost = hosts.consecutiveHostSize();
  const Schedule walked = sliceable() && perHost > 0 ? slice(hosts, perHost) : schedule(hosts);
  return crossHostSegmentBytes(slowestLinkBps, crossHostPiecesInFlight(walked, hosts));
}

int64_t crossHostSegmentBytes(std::optional<double> slowestLinkBps, int64_t piecesInFlightPerLink) {
  if (!slowestLinkBps) return kCrossHostSegmentBytes;
  if (!(*slowestLinkBps > 0))
    throw std::invalid_argument("a link rate must be a positive number of bit/s, got " + std::to_string(*slowestLinkBps));
  if (piecesInFlightPerLink < 0)
    throw std::invalid_argument("pieces in flight must be >= 0, got " + std::to_string(piecesInFlightPerLink));
  constexpr int kLeastLog2 = 14;  // 16 KiB
  constexpr int kMostLog2 = 20;   // 1 MiB
  const double bytesPerSecond = *slowestLinkBps / 8;
  int log2 = static_cast<int>(std::lround(std::log2(bytesPerSecond / 1000)));  // about a millisecond
  if (piecesInFlightPerLink > 0) {  // and the pieces in flight within the queue
    const double fits = bytesPerSecond * kLinkQueueSeconds / static_cast<double>(piecesInFlightPerLink);
    log2 = std::min(log2, static_cast<int>(std::floor(std::log2(fits))));
  }
  return int64_t{1} << std::clamp(log2, kLeastLog2, kMostLog2);
}

Schedule Topology::schedule(const HostLayout& hosts) const {
  if (native()) throw std::invalid_argument("topology 'native' is the backend's own all-reduce and has no schedule");
  if (hosts.worldSize() < 1) throw std::invalid_argument("a topology needs at least one rank");
  return row_->generate(hosts);
}

bool Topology::sliceable() const { return row_->slice != nullptr; }

std::optional<int64_t> Topology::transfersPerRank(const HostLayout& hosts) const {
  if (row_->transfersPerRank == nullptr || hosts.worldSize() < 1) return std::nullopt;
  return row_->transfersPerRank(hosts);
}

Schedule Topology::slice(const HostLayout& hosts, int period) const {
  if (!sliceable()) throw std::invalid_argument("topology '" + name() + "' has no slice (its root makes ranks unlike)");
  if (hosts.worldSize() < 1) throw std::invalid_argument("a topology needs at least one rank");
  return row_->slice(hosts, period);
}

std::vector<std::string> topologyNames() {
  std::vector<std::string> names;
  for (const TopologyRow& row : rows()) names.push_back(row.name);
  return names;
}

std::string topologyHelp() {
  std::vector<std::string> items;
  for (const TopologyRow& row : rows()) items.push_back(row.name + " (" + row.help + ")");
  return common::joinList(items);
}

Schedule makeSchedule(const std::string& topology, const HostLayout& hosts) {
  return Topology::parse(topology).schedule(hosts);
}

}  // namespace dtbench::comm
