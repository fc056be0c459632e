#include "experiments/capture/capture_files.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/file_names.h"

namespace dtbench::capture {
namespace {

nlohmann::json countersJson(const InterfaceCounters& c) {
  return {{"t_s", c.t_s}, {"rx_bytes", c.rxBytes}, {"rx_packets", c.rxPackets},
          {"tx_bytes", c.txBytes}, {"tx_packets", c.txPackets}};
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw std::runtime_error(where + ": \"" + key + "\" is missing");
  return object[key];
}

double number(const nlohmann::json& object, const char* key, const std::string& where) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_number()) throw std::runtime_error(where + ": \"" + key + "\" must be a number, got " + v.dump());
  return v.get<double>();
}

int64_t integer(const nlohmann::json& object, const char* key, const std::string& where) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_number_integer())
    throw std::runtime_error(where + ": \"" + key + "\" must be a whole number, got " + v.dump());
  return v.get<int64_t>();
}

std::string text(const nlohmann::json& object, const char* key, const std::string& where) {
  const nlohmann::json& v = member(object, key, where);
  if (!v.is_string()) throw std::runtime_error(where + ": \"" + key + "\" must be a string, got " + v.dump());
  return v.get<std::string>();
}

InterfaceCounters countersFromJson(const nlohmann::json& json, const std::string& where) {
  InterfaceCounters c;
  c.t_s = number(json, "t_s", where);
  c.rxBytes = integer(json, "rx_bytes", where);
  c.rxPackets = integer(json, "rx_packets", where);
  c.txBytes = integer(json, "tx_bytes", where);
  c.txPackets = integer(json, "tx_packets", where);
  return c;
}

}  // namespace

nlohmann::json toJson(const CaptureFile& file) {
  nlohmann::json interfaces = nlohmann::json::array();
  for (const InterfaceCapture& i : file.interfaces)
    interfaces.push_back({{"name", i.name},
                          {"pcap", i.pcap},
                          {"link_type", i.linkType},
                          {"addresses", i.addresses},
                          {"packets_captured", i.packetsCaptured},
                          {"pcap_received", i.pcapReceived},
                          {"pcap_dropped", i.pcapDropped},
                          {"interface_dropped", i.interfaceDropped},
                          {"counters_before", countersJson(i.countersBefore)},
                          {"counters_after", countersJson(i.countersAfter)}});
  return {{"node", file.node},
          {"snaplen", file.snaplen},
          {"started_s", file.started_s},
          {"stopped_s", file.stopped_s},
          {"interfaces", interfaces}};
}

CaptureFile captureFileFromJson(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw std::runtime_error(where + ": the top level must be an object");
  CaptureFile file;
  file.node = text(json, "node", where);
  file.snaplen = static_cast<int>(integer(json, "snaplen", where));
  file.started_s = number(json, "started_s", where);
  file.stopped_s = number(json, "stopped_s", where);
  const nlohmann::json& interfaces = member(json, "interfaces", where);
  if (!interfaces.is_array()) throw std::runtime_error(where + ": \"interfaces\" must be an array");
  for (size_t k = 0; k < interfaces.size(); ++k) {
    const nlohmann::json& j = interfaces[k];
    const std::string at = where + ": interfaces[" + std::to_string(k) + "]";
    InterfaceCapture i;
    i.name = text(j, "name", at);
    i.pcap = text(j, "pcap", at);
    if (!common::isPlainFileName(i.pcap))
      throw std::runtime_error(at + ": \"pcap\" must be a file name inside the capture directory (no '/', not '.' "
                               "or '..'), got " + nlohmann::json(i.pcap).dump());
    i.linkType = text(j, "link_type", at);
    const nlohmann::json& addresses = member(j, "addresses", at);
    if (!addresses.is_array()) throw std::runtime_error(at + ": \"addresses\" must be an array of strings");
    for (const nlohmann::json& a : addresses) {
      if (!a.is_string()) throw std::runtime_error(at + ": \"addresses\" must be an array of strings");
      i.addresses.push_back(a.get<std::string>());
    }
    i.packetsCaptured = integer(j, "packets_captured", at);
    i.pcapReceived = integer(j, "pcap_received", at);
    i.pcapDropped = integer(j, "pcap_dropped", at);
    i.interfaceDropped = integer(j, "interface_dropped", at);
    i.countersBefore = countersFromJson(member(j, "counters_before", at), at + ".counters_before");
    i.countersAfter = countersFromJson(member(j, "counters_after", at), at + ".counters_after");
    file.interfaces.push_back(i);
  }
  return file;
}

void writeCaptureFile(const std::string& path, const CaptureFile& file) {
  std::ofstream out(path);
  out << toJson(file).dump(2) << '\n';
  out.close();
  if (!out) throw std::runtime_error("cannot write the capture file " + path);
}

CaptureFile readCaptureFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the capture file " + path);
  std::stringstream content;
  content << in.rdbuf();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(content.str());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("capture file " + path + " is not JSON (" + e.what() + ")");
  }
  return captureFileFromJson(json, "capture file " + path);
}

std::string captureFileName(const std::string& node) { return node + ".capture.json"; }

}  // namespace dtbench::capture
