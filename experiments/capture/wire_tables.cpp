#include "experiments/capture/wire_tables.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace dtbench::capture {
namespace {

constexpr int kBinWidthsMs[] = {1, 5, 10};
constexpr int kFlowBinMs = 10;
constexpr int64_t kEthernetHeaderBytes = 14;

std::string seconds(double t_s) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", t_s);
  return text;
}

int64_t microseconds(double t_s) { return std::llround(t_s * 1e6); }

// The start of the bin of `widthMs` that holds `t_s`, in microseconds.
int64_t binStartUs(double t_s, int widthMs) {
  const int64_t width = int64_t{widthMs} * 1000, us = microseconds(t_s);
  const int64_t bin = us >= 0 ? us / width : -((-us + width - 1) / width);
  return bin * width;
}

std::string binSeconds(int64_t startUs) {
  char text[64];
  std::snprintf(text, sizeof text, "%" PRId64 ".%06" PRId64, startUs / 1000000, startUs % 1000000);
  return text;
}

int64_t tcpPayload(const Packet& p) { return p.kind == PacketKind::kTcp ? p.payloadLength : 0; }

struct Load {
  int64_t frames = 0, frameBytes = 0, tcpPayloadBytes = 0;
  void add(const Packet& p) {
    ++frames;
    frameBytes += p.frameLength;
    tcpPayloadBytes += tcpPayload(p);
  }
};

std::string quoteless(const std::string& text) {  // CSV fields here never need quotes; keep it so
  std::string out = text;
  for (char& c : out)
    if (c == ',' || c == '\n' || c == '"') c = '_';
  return out;
}

}  // namespace

std::string wirePairsCsv(const WireCapture& capture) {
  struct Pair {
    std::string srcHost, dstHost;
    int64_t frames = 0, frameBytes = 0, wireFrames = 0, wireBytes = 0, ipBytes = 0, tcpPayloadBytes = 0;
  };
  // By addresses, then hosts: `lo`'s 127.0.0.1 of two nodes stays two rows.
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Pair> pairs;
  for (const WirePacket& w : capture.packets) {
    if (w.packet.src.empty()) continue;
    Pair& p = pairs[{w.packet.src, w.packet.dst, w.srcHost, w.dstHost}];
    p.srcHost = w.srcHost;
    p.dstHost = w.dstHost;
    ++p.frames;
    p.frameBytes += w.packet.frameLength;
    p.wireFrames += w.wireFrames;
    p.wireBytes += w.wireBytes;
    p.ipBytes += w.packet.ipTotalLength;
    p.tcpPayloadBytes += tcpPayload(w.packet);
  }
  std::string csv = "src,dst,src_host,dst_host,frames,frame_bytes,wire_frames,wire_bytes,ip_bytes,tcp_payload_bytes\n";
  for (const auto& [key, p] : pairs)
    csv += std::get<0>(key) + "," + std::get<1>(key) + "," + quoteless(p.srcHost) + "," + quoteless(p.dstHost) + "," +
           std::to_string(p.frames) + "," + std::to_string(p.frameBytes) + "," + std::to_string(p.wireFrames) + "," +
           std::to_string(p.wireBytes) + "," + std::to_string(p.ipBytes) + "," + std::to_string(p.tcpPayloadBytes) +
           "\n";
  return csv;
}

std::string wireLinksCsv(const WireCapture& capture) {
  // (bin_ms, link, direction, bin start in µs)
  std::map<std::tuple<int, std::string, std::string, int64_t>, Load> bins;
  // Every frame at its own link's capture point (WireCapture::linkFrames), not deduplicated: a node's
  // downlink is what its interface received, when it received it.
  for (const LinkFrame& f : capture.linkFrames) {
    const std::string& link = capture.points[f.point].link;
    const char* direction = f.direction == 'l' ? "local" : f.direction == 'u' ? "up" : "down";
    for (int width : kBinWidthsMs) {
      Load& load = bins[{width, link, direction, binStartUs(f.t_s, width)}];
      ++load.frames;
      load.frameBytes += f.frameBytes;
      load.tcpPayloadBytes += f.tcpPayloadBytes;
    }
  }
  std::string csv = "bin_ms,t_start_s,link,direction,frames,frame_bytes,tcp_payload_bytes\n";
  for (const auto& [key, load] : bins)
    csv += std::to_string(std::get<0>(key)) + "," + binSeconds(std::get<3>(key)) + "," + quoteless(std::get<1>(key)) +
           "," + std::get<2>(key) + "," + std::to_string(load.frames) + "," + std::to_string(load.frameBytes) + "," +
           std::to_string(load.tcpPayloadBytes) + "\n";
  return csv;
}

std::string wireFlowsCsv(const WireCapture& capture) {
  std::string csv =
      "flow,protocol,src,src_port,dst,dst_port,src_host,dst_host,src_rank,dst_rank,class,first_s,last_s,packets,"
      "frame_bytes,payload_bytes,stream_bytes,retransmitted_packets,retransmitted_bytes,timeouts\n";
  for (const Flow& f : capture.flows)
    csv += std::to_string(f.id) + "," + flowProtocolName(f.key.protocol) + "," + f.key.src + "," +
           std::to_string(f.key.srcPort) + "," + f.key.dst + "," + std::to_string(f.key.dstPort) + "," +
           quoteless(f.srcHost) + "," + quoteless(f.dstHost) + "," + std::to_string(f.srcRank) + "," +
           std::to_string(f.dstRank) + "," + quoteless(f.cls) + "," + seconds(f.first_s) + "," + seconds(f.last_s) +
           "," + std::to_string(f.packets) + "," + std::to_string(f.frameBytes) + "," +
           std::to_string(f.payloadBytes) + "," + std::to_string(f.streamBytes) + "," +
           std::to_string(f.retransmittedPackets) + "," + std::to_string(f.retransmittedBytes) + "," +
           std::to_string(f.timeouts) + "\n";
  return csv;
}

std::string wireFlowBinsCsv(const WireCapture& capture) {
  std::map<std::pair<int, int64_t>, Load> bins;
  for (const WirePacket& w : capture.packets)
    if (w.flow >= 0) bins[{w.flow, binStartUs(w.packet.t_s, kFlowBinMs)}].add(w.packet);
  std::string csv = "t_start_s,flow,packets,frame_bytes,tcp_payload_bytes\n";
  for (const auto& [key, load] : bins)
    csv += binSeconds(key.second) + "," + std::to_string(key.first) + "," + std::to_string(load.frames) + "," +
           std::to_string(load.frameBytes) + "," + std::to_string(load.tcpPayloadBytes) + "\n";
  return csv;
}

std::string wireRetransmissionsCsv(const WireCapture& capture) {
  std::string csv = "t_s,flow,seq_offset,bytes,kind,since_first_s\n";
  for (const Retransmission& r : capture.retransmissions)
    csv += seconds(r.t_s) + "," + std::to_string(r.flow) + "," + std::to_string(r.seqOffset) + "," +
           std::to_string(r.bytes) + "," + r.kind + "," + seconds(r.sinceFirst_s) + "\n";
  return csv;
}

nlohmann::json wireSummary(const WireCapture& capture) {
  nlohmann::json points = nlohmann::json::array();
  for (const CapturePoint& p : capture.points) {
    const InterfaceCounters& a = p.interface.countersBefore;
    const InterfaceCounters& b = p.interface.countersAfter;
    const int64_t counterBytes = p.loopback ? b.txBytes - a.txBytes : (b.rxBytes - a.rxBytes) + (b.txBytes - a.txBytes);
    const int64_t counterPackets =
        p.loopback ? b.txPackets - a.txPackets : (b.rxPackets - a.rxPackets) + (b.txPackets - a.txPackets);
    // lo's driver counts a packet after taking its Ethernet header off (eth_type_trans in
    // loopback_xmit); a veth counts the whole frame.
    const int64_t uncountedHeaderBytes = p.loopback ? kEthernetHeaderBytes * p.windowFrames : 0;
    const int64_t comparedBytes = p.windowBytes - uncountedHeaderBytes;
    const int64_t edgeBytes = p.edgeBytes - (p.loopback ? kEthernetHeaderBytes * p.edgeFrames : 0);
    const auto within = [](int64_t counted, int64_t captured, int64_t edge) {
      return counted >= captured - edge && counted <= captured + edge;
    };
    points.push_back(
        {{"node", p.node},
         {"interface", p.interface.name},
         {"link", p.link},
         {"pcap", p.interface.pcap},
         {"link_type", p.interface.linkType},
         {"addresses", p.interface.addresses},
         {"pcap_stats",
          {{"packets_captured", p.interface.packetsCaptured},
           {"pcap_received", p.interface.pcapReceived},
           {"pcap_dropped", p.interface.pcapDropped},
           {"interface_dropped", p.interface.interfaceDropped}}},
         {"frames_read", p.frames},
         {"frame_bytes_read", p.frameBytes},
         {"frames_counted", p.countedFrames},
         {"pcap_truncated", p.truncated},
         {"count_check",
          {{"window_s", {a.t_s, b.t_s}},
           {"counters", p.loopback ? "tx" : "rx+tx"},
           {"captured_frames", p.windowFrames},
           {"counter_packets", counterPackets},
           {"frames_equal", p.windowFrames == counterPackets},
           {"edge_s", kCountEdgeS},
           {"edge_frames", p.edgeFrames},
           {"edge_bytes", edgeBytes},
           {"frames_consistent", within(counterPackets, p.windowFrames, p.edgeFrames)},
           {"bytes_consistent", within(counterBytes, comparedBytes, edgeBytes)},
           {"captured_frame_bytes", p.windowBytes},
           {"captured_bytes", comparedBytes},
           {"counter_bytes", counterBytes},
           {"bytes_equal", comparedBytes == counterBytes}}}});
  }
  int64_t frames = 0, frameBytes = 0, wireFrames = 0, wireBytes = 0, ipBytes = 0, tcpPayloadBytes = 0;
  for (const WirePacket& w : capture.packets) {
    ++frames;
    frameBytes += w.packet.frameLength;
    wireFrames += w.wireFrames;
    wireBytes += w.wireBytes;
    ipBytes += w.packet.ipTotalLength;
    tcpPayloadBytes += tcpPayload(w.packet);
  }
  int64_t retransmittedBytes = 0, fast = 0, probes = 0, timeouts = 0;
  for (const Retransmission& r : capture.retransmissions) {
    retransmittedBytes += r.bytes;
    (r.kind == "fast" ? fast : r.kind == "probe" ? probes : timeouts) += 1;
  }
  nlohmann::json summary = {
      {"directory", capture.directory},
      {"complete", capture.complete()},
      {"warnings", capture.warnings},
      {"capture_points", points},
      {"totals",
       {{"frames", frames},
        {"frame_bytes", frameBytes},
        {"wire_frames", wireFrames},
        {"wire_bytes", wireBytes},
        {"ip_bytes", ipBytes},
        {"tcp_payload_bytes", tcpPayloadBytes},
        {"flows", capture.flows.size()},
        {"retransmissions", capture.retransmissions.size()},
        {"retransmitted_bytes", retransmittedBytes},
        {"fast_retransmissions", fast},
        {"probe_retransmissions", probes},
        {"timeout_retransmissions", timeouts}}},
  };
  summary["reconciliation"] =
      capture.reconciliation ? reconciliationJson(*capture.reconciliation) : nlohmann::json(nullptr);
  return summary;
}

void writeWireTables(const WireCapture& capture, const std::string& outputDir) {
  std::error_code error;
  std::filesystem::create_directories(outputDir, error);
  if (error) throw std::runtime_error("cannot create the output directory " + outputDir + " (" + error.message() + ")");
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::path(outputDir) / name).string();
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
  };
  write("wire_pairs.csv", wirePairsCsv(capture));
  write("wire_links.csv", wireLinksCsv(capture));
  write("wire_flows.csv", wireFlowsCsv(capture));
  write("wire_flow_bins.csv", wireFlowBinsCsv(capture));
  write("wire_retransmissions.csv", wireRetransmissionsCsv(capture));
  if (capture.reconciliation) {
    std::ostringstream rows;
    writeReconciliationCsv(rows, capture.reconciliation->rows);
    write("reconciliation.csv", rows.str());
  }
  write("wire_summary.json", wireSummary(capture).dump(2) + "\n");
}

}  // namespace dtbench::capture
