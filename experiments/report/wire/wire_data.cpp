#include "experiments/report/wire/wire_data.h"

#include <cmath>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <stdexcept>

#include "common/csv_file.h"
#include "common/regular_file.h"

namespace dtbench::report {
using common::CsvFile;
using common::openRegularFile;
namespace fs = std::filesystem;
namespace {

int64_t wireCount(const CsvFile& f, size_t row, size_t column) {
  const int64_t value = f.integer(row, column);
  if (value < 0) f.fail(row, column, "'" + f.text(row, column) + "' is not a count (a whole number, 0 or more)");
  return value;
}

double seconds(const CsvFile& f, size_t row, size_t column) {
  const double value = f.number(row, column);
  if (!(std::isfinite(value) && value >= 0))
    f.fail(row, column, "'" + f.text(row, column) + "' is not a time (finite seconds, 0 or more)");
  return value;
}

int rank(const CsvFile& f, size_t row, size_t column) {
  const int64_t value = f.integer(row, column);
  if (value < -1 || value >= std::numeric_limits<int>::max())
    f.fail(row, column, "'" + f.text(row, column) + "' is not a rank (0 or more, or -1 for none)");
  return static_cast<int>(value);
}

const std::string& oneOf(const CsvFile& f, size_t row, size_t column, std::initializer_list<const char*> names) {
  const std::string& value = f.text(row, column);
  std::string list;
  for (const char* name : names) {
    if (value == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  f.fail(row, column, "'" + value + "' is not one of " + list);
}

void readPairs(const CsvFile& f, std::vector<WirePair>& rows) {
  const size_t src = f.column("src"), dst = f.column("dst"), srcHost = f.column("src_host"),
               dstHost = f.column("dst_host"), frames = f.column("frames"), frameBytes = f.column("frame_bytes"),
               wireFrames = f.column("wire_frames"), wireBytes = f.column("wire_bytes"), ipBytes = f.column("ip_bytes"),
               payload = f.column("tcp_payload_bytes");
  for (size_t i = 0; i < f.rows(); ++i)
    rows.push_back({f.text(i, src), f.text(i, dst), f.text(i, srcHost), f.text(i, dstHost), wireCount(f, i, frames),
                    wireCount(f, i, frameBytes), wireCount(f, i, wireFrames), wireCount(f, i, wireBytes), wireCount(f, i, ipBytes),
                    wireCount(f, i, payload)});
}

void readLinks(const CsvFile& f, std::vector<WireLinkBin>& rows) {
  const size_t binMs = f.column("bin_ms"), start = f.column("t_start_s"), link = f.column("link"),
               direction = f.column("direction"), frames = f.column("frames"), frameBytes = f.column("frame_bytes"),
               payload = f.column("tcp_payload_bytes");
  for (size_t i = 0; i < f.rows(); ++i) {
    WireLinkBin r;
    const int64_t width = f.integer(i, binMs);
    if (width != 1 && width != 5 && width != 10)
      f.fail(i, binMs, "'" + f.text(i, binMs) + "' is not a bin width of the format (1, 5 or 10 ms)");
    r.binMs = static_cast<int>(width);
    r.startS = seconds(f, i, start);
    r.link = f.text(i, link);
    if (r.link.empty()) f.fail(i, link, "empty (a node, or <node>:lo)");
    r.direction = oneOf(f, i, direction, {"up", "down", "local"});
    r.frames = wireCount(f, i, frames);
    r.frameBytes = wireCount(f, i, frameBytes);
    r.tcpPayloadBytes = wireCount(f, i, payload);
    rows.push_back(r);
  }
}

void readFlows(const CsvFile& f, std::vector<WireFlow>& rows) {
  const size_t flow = f.column("flow"), protocol = f.column("protocol"), src = f.column("src"),
               srcPort = f.column("src_port"), dst = f.column("dst"), dstPort = f.column("dst_port"),
               srcHost = f.column("src_host"), dstHost = f.column("dst_host"), srcRank = f.column("src_rank"),
               dstRank = f.column("dst_rank"), flowClass = f.column("class"), first = f.column("first_s"),
               last = f.column("last_s"), packets = f.column("packets"), frameBytes = f.column("frame_bytes"),
               payload = f.column("payload_bytes"), stream = f.column("stream_bytes"),
               retransmittedPackets = f.column("retransmitted_packets"),
               retransmittedBytes = f.column("retransmitted_bytes"), timeouts = f.column("timeouts");
  std::set<std::string> seen;
  for (size_t i = 0; i < f.rows(); ++i) {
    WireFlow r;
    r.flow = f.text(i, flow);
    if (!seen.insert(r.flow).second) f.fail(i, flow, "flow '" + r.flow + "' again (a flow is one row)");
    r.protocol = f.text(i, protocol);
    r.src = f.text(i, src);
    r.srcPort = wireCount(f, i, srcPort);
    r.dst = f.text(i, dst);
    r.dstPort = wireCount(f, i, dstPort);
    r.srcHost = f.text(i, srcHost);
    r.dstHost = f.text(i, dstHost);
    r.srcRank = rank(f, i, srcRank);
    r.dstRank = rank(f, i, dstRank);
    r.flowClass = oneOf(f, i, flowClass, {"backend", "store", "launcher", "slurm", "other"});
    r.firstS = seconds(f, i, first);
    r.lastS = seconds(f, i, last);
    r.packets = wireCount(f, i, packets);
    r.frameBytes = wireCount(f, i, frameBytes);
    r.payloadBytes = wireCount(f, i, payload);
    r.streamBytes = wireCount(f, i, stream);
    r.retransmittedPackets = wireCount(f, i, retransmittedPackets);
    r.retransmittedBytes = wireCount(f, i, retransmittedBytes);
    r.timeouts = wireCount(f, i, timeouts);
    rows.push_back(r);
  }
}

void readFlowBins(const CsvFile& f, const std::vector<WireFlow>& flows, std::vector<WireFlowBin>& rows) {
  const size_t start = f.column("t_start_s"), flow = f.column("flow"), packets = f.column("packets"),
               frameBytes = f.column("frame_bytes"), payload = f.column("tcp_payload_bytes");
  std::set<std::string> known;
  for (const WireFlow& w : flows) known.insert(w.flow);
  for (size_t i = 0; i < f.rows(); ++i) {
    if (!known.count(f.text(i, flow))) f.fail(i, flow, "flow '" + f.text(i, flow) + "' is not in wire_flows.csv");
    rows.push_back({seconds(f, i, start), f.text(i, flow), wireCount(f, i, packets), wireCount(f, i, frameBytes),
                    wireCount(f, i, payload)});
  }
}

void readReconciliation(const CsvFile& f, std::vector<ReconciliationRow>& rows) {
  const size_t srcRank = f.column("src_rank"), dstRank = f.column("dst_rank"), srcHost = f.column("src_host"),
               dstHost = f.column("dst_host"), category = f.column("category"), messages = f.column("messages"),
               counted = f.column("counted_bytes"), wire = f.column("wire_bytes"),
               difference = f.column("difference_bytes"), pct = f.column("difference_pct");
  for (size_t i = 0; i < f.rows(); ++i) {
    ReconciliationRow r;
    r.srcRank = rank(f, i, srcRank);
    r.dstRank = rank(f, i, dstRank);
    r.srcHost = f.text(i, srcHost);
    r.dstHost = f.text(i, dstHost);
    r.category = oneOf(f, i, category,
                       {"gradients", "buffers", "initial", "parameters", "control", "setup", "store", "launcher", "slurm",
                        "retransmission", "unattributed"});
    r.messages = wireCount(f, i, messages);
    r.countedBytes = wireCount(f, i, counted);
    r.wireBytes = wireCount(f, i, wire);
    r.differenceBytes = f.integer(i, difference);
    r.differencePct = f.number(i, pct);
    if (std::isinf(r.differencePct)) f.fail(i, pct, "'" + f.text(i, pct) + "' is not a finite percentage");
    rows.push_back(r);
  }
}

CsvFile readRequired(const fs::path& file) {
  if (!fs::exists(file))
    throw std::runtime_error(file.string() + " is missing (dtbench capture analyze writes it; docs/wire.md)");
  return CsvFile::read(file.string());
}

}  // namespace

WireData readWire(const std::string& directory) {
  const fs::path dir(directory);
  WireData wire;
  wire.directory = directory;
  readPairs(readRequired(dir / "wire_pairs.csv"), wire.pairs);
  readLinks(readRequired(dir / "wire_links.csv"), wire.links);
  readFlows(readRequired(dir / "wire_flows.csv"), wire.flows);
  if (fs::exists(dir / "wire_flow_bins.csv"))
    readFlowBins(CsvFile::read((dir / "wire_flow_bins.csv").string()), wire.flows, wire.flowBins);
  if (fs::exists(dir / "reconciliation.csv")) {
    wire.hasReconciliation = true;
    readReconciliation(CsvFile::read((dir / "reconciliation.csv").string()), wire.reconciliation);
  }
  const fs::path summary = dir / "wire_summary.json";
  if (fs::exists(summary)) {
    std::ifstream in = openRegularFile(summary.string());
    try {
      wire.summary = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(summary.string() + " is not valid JSON (" + e.what() + ")");
    }
  }
  return wire;
}

}  // namespace dtbench::report
