#include "experiments/capture/wire_capture.h"

#include <cmath>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <system_error>

#include "experiments/capture/pcap_reader.h"

namespace dtbench::capture {
namespace {

namespace fs = std::filesystem;

// Nodes' and the controller's addresses from the emulated cluster's cluster.json
// (experiments/cluster/cluster.sh): {"controller": {"address": ...}, "nodes": [{"name", "address"}]}.
void addClusterHosts(const std::string& path, std::map<std::string, std::string>& hostOfAddress) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the cluster file " + path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("cluster file " + path + " is not JSON (" + e.what() + ")");
  }
  if (json.contains("nodes") && json["nodes"].is_array())
    for (const nlohmann::json& node : json["nodes"])
      if (node.is_object() && node.contains("name") && node["name"].is_string() && node.contains("address") &&
          node["address"].is_string())
        hostOfAddress.emplace(node["address"].get<std::string>(), node["name"].get<std::string>());
  if (json.contains("controller") && json["controller"].is_object() && json["controller"].contains("address") &&
      json["controller"]["address"].is_string())
    hostOfAddress.emplace(json["controller"]["address"].get<std::string>(), "controller");
}

struct Sortable {
  WirePacket packet;
  size_t order = 0;
};

}  // namespace

bool WireCapture::complete() const {
  if (orphanPcaps > 0) return false;
  for (const CapturePoint& p : points)
    if (p.interface.pcapDropped > 0 || p.truncated) return false;
  return true;
}

std::string WireCapture::hostOf(const std::string& address) const {
  const auto it = hostOfAddress.find(address);
  return it == hostOfAddress.end() ? "" : it->second;
}

WireCapture loadWireCapture(const std::string& directory, const std::string& clusterFile) {
  WireCapture capture;
  capture.directory = directory;
  std::error_code error;
  if (!fs::is_directory(directory, error)) throw std::runtime_error("capture directory " + directory + " does not exist");
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".capture.json";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw std::runtime_error("no <node>.capture.json in " + directory +
                             " (dtbench capture record writes one per node when it stops)");

  std::set<std::string> capturedAddresses;  // of link interfaces
  for (const std::string& name : names) {
    const CaptureFile file = readCaptureFile((fs::path(directory) / name).string());
    capture.files.push_back(file);
    for (const InterfaceCapture& i : file.interfaces) {
      CapturePoint point;
      point.node = file.node;
      point.interface = i;
      point.pcapPath = (fs::path(directory) / i.pcap).string();
      point.loopback = i.name == "lo";
      point.link = point.loopback ? file.node + ":lo" : file.node;
      if (!point.loopback)
        for (const std::string& a : i.addresses) {
          capture.hostOfAddress.emplace(a, file.node);
          capturedAddresses.insert(a);
        }
      if (i.pcapDropped > 0)
        capture.warnings.push_back("capture incomplete: " + file.node + " " + i.name + " dropped " +
                                   std::to_string(i.pcapDropped) + " packets (pcap_dropped); its tables undercount");
      capture.points.push_back(point);
    }
  }
  // A pcap no capture file names: a recorder that never stopped cleanly (its node went down), whose
  // packets are not in the tables.
  std::set<std::string> named;
  for (const CapturePoint& point : capture.points) named.insert(point.interface.pcap);
  std::vector<std::string> orphans;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".pcap") == 0 && named.count(name) == 0)
      orphans.push_back(name);
  }
  std::sort(orphans.begin(), orphans.end());
  for (const std::string& name : orphans)
    capture.warnings.push_back("capture incomplete: " + name + " in " + directory +
                               " belongs to no capture file (its recorder did not stop cleanly: a node that went "
                               "down?); its packets are not in the tables");
  capture.orphanPcaps = static_cast<int>(orphans.size());
  if (!clusterFile.empty()) addClusterHosts(clusterFile, capture.hostOfAddress);
  std::vector<Sortable> counted;
  for (size_t k = 0; k < capture.points.size(); ++k) {
    CapturePoint& point = capture.points[k];
    const std::set<std::string> own(point.interface.addresses.begin(), point.interface.addresses.end());
    std::error_code missing;
    if (!fs::exists(point.pcapPath, missing))
      throw std::runtime_error("the pcap " + point.pcapPath + " that " + point.node +
                               ".capture.json names is gone: an earlier `dtbench capture analyze` deletes the pcaps "
                               "once their tables are written (add --keep-pcap to analyze a capture again)");
    PcapReader reader(point.pcapPath);
    Packet packet;
    while (reader.next(packet)) {
      ++point.frames;
      point.frameBytes += packet.frameLength;
      const double from = point.interface.countersBefore.t_s, to = point.interface.countersAfter.t_s;
      if (packet.t_s >= from && packet.t_s <= to) {
        ++point.windowFrames;
        point.windowBytes += packet.frameLength;
      }
      if (std::abs(packet.t_s - from) <= kCountEdgeS || std::abs(packet.t_s - to) <= kCountEdgeS) {
        ++point.edgeFrames;
        point.edgeBytes += packet.frameLength;
      }
      const bool sentHere = !point.loopback && own.count(packet.src) > 0;
      capture.linkFrames.push_back({packet.t_s, static_cast<int>(k), point.loopback ? 'l' : (sentHere ? 'u' : 'd'),
                                    packet.frameLength,
                                    packet.kind == PacketKind::kTcp ? packet.payloadLength : int64_t{0}});
      WirePacket w;
      w.point = static_cast<int>(k);
      if (point.loopback) {
        w.loLink = point.link;
        w.srcHost = w.dstHost = point.node;
      } else {
        if (!sentHere && capturedAddresses.count(packet.src) > 0) continue;
        w.srcHost = capture.hostOf(packet.src);
        w.dstHost = capture.hostOf(packet.dst);
      }
      ++point.countedFrames;
      w.packet = std::move(packet);
      counted.push_back({std::move(w), counted.size()});
    }
    if (reader.truncated()) {
      point.truncated = true;
      const bool cut = reader.error().find("truncated") != std::string::npos;
      capture.warnings.push_back(
          "capture incomplete: pcap " + point.pcapPath +
          (cut ? " ends mid-packet (was the recorder killed?)" : " has a corrupt record after packet " +
                                                                    std::to_string(point.frames)) +
          " (libpcap: " + reader.error() + "); read the " + std::to_string(point.frames) + " packets before it");
    } else if (point.frames < point.interface.packetsCaptured) {
      point.truncated = true;
      capture.warnings.push_back("capture incomplete: pcap " + point.pcapPath + " holds " +
                                 std::to_string(point.frames) + " packets, its capture file says " +
                                 std::to_string(point.interface.packetsCaptured) + " were written");
    }
  }
  std::sort(counted.begin(), counted.end(), [](const Sortable& a, const Sortable& b) {
    if (a.packet.packet.t_s != b.packet.packet.t_s) return a.packet.packet.t_s < b.packet.packet.t_s;
    return a.order < b.order;  // by capture point (read in order), then file order
  });

  FlowTable table;
  capture.packets.reserve(counted.size());
  for (Sortable& s : counted) {
    WirePacket& w = s.packet;
    w.flow = table.add(w.packet, w.loLink);
    w.wireFrames = table.lastWireFrames();
    w.wireBytes = table.lastWireBytes();
    capture.packets.push_back(std::move(w));
  }
  capture.flows = table.flows();
  capture.retransmissions = table.retransmissions();
  const std::string loopback = ":lo";
  for (Flow& flow : capture.flows) {
    if (!flow.key.scope.empty()) {  // on lo both ends are the node whose lo it is
      flow.srcHost = flow.dstHost = flow.key.scope.substr(0, flow.key.scope.size() - loopback.size());
    } else {
      flow.srcHost = capture.hostOf(flow.key.src);
      flow.dstHost = capture.hostOf(flow.key.dst);
    }
  }
  return capture;
}

}  // namespace dtbench::capture

