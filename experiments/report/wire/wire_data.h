#pragma once
// WireData: a run's wire/ folder (docs/wire.md), the tables `dtbench capture analyze` writes from
// the packet captures, read into plain rows. Every field is checked against the format: a count or
// byte field that is not a whole number of 0 or more, a time that is not finite seconds of 0 or
// more, a rank below -1, a `direction` or `class` the format does not name, or a flow bin of a flow
// that wire_flows.csv does not list is an error naming the file, the line and the column.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::report {

// wire_pairs.csv: one directed pair of IP addresses.
struct WirePair {
  std::string src, dst, srcHost, dstHost;
  int64_t frames = 0, frameBytes = 0, wireFrames = 0, wireBytes = 0, ipBytes = 0, tcpPayloadBytes = 0;
};

// wire_links.csv: one bin of one link's direction.
struct WireLinkBin {
  int binMs = 0;       // 1, 5 or 10
  double startS = 0;   // bin index x bin width
  std::string link;    // a node (its link interface) or "<node>:lo"
  std::string direction;  // up | down | local
  int64_t frames = 0, frameBytes = 0, tcpPayloadBytes = 0;
};

// wire_flows.csv: one directed flow (a TCP connection is two).
struct WireFlow {
  std::string flow, protocol, src, dst, srcHost, dstHost;
  int64_t srcPort = 0, dstPort = 0;
  int srcRank = -1, dstRank = -1;  // -1: a socket of no rank
  std::string flowClass;           // backend | store | launcher | slurm | other
  double firstS = 0, lastS = 0;
  int64_t packets = 0, frameBytes = 0, payloadBytes = 0, streamBytes = 0;
  int64_t retransmittedPackets = 0, retransmittedBytes = 0, timeouts = 0;
};

// wire_flow_bins.csv: one flow's 10 ms bin.
struct WireFlowBin {
  double startS = 0;
  std::string flow;
  int64_t packets = 0, frameBytes = 0, tcpPayloadBytes = 0;
};

// reconciliation.csv: one directed rank pair and category.
struct ReconciliationRow {
  int srcRank = -1, dstRank = -1;
  std::string srcHost, dstHost, category;
  int64_t messages = 0, countedBytes = 0, wireBytes = 0, differenceBytes = 0;
  double differencePct = 0;  // NaN when the field is empty (nothing counted)
};

struct WireData {
  std::string directory;
  std::vector<WirePair> pairs;
  std::vector<WireLinkBin> links;
  std::vector<WireFlow> flows;
  std::vector<WireFlowBin> flowBins;
  bool hasReconciliation = false;  // reconciliation.csv exists (analyze ran with --messages)
  std::vector<ReconciliationRow> reconciliation;
  nlohmann::json summary;  // wire_summary.json; null without it
};

// Reads `directory` (a run's wire/). wire_pairs.csv, wire_links.csv and wire_flows.csv are required;
// wire_flow_bins.csv, reconciliation.csv and wire_summary.json are read when present. Throws
// std::runtime_error naming the file (and line and column for a bad field).
WireData readWire(const std::string& directory);

}  // namespace dtbench::report
