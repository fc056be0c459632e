#include "experiments/predict/hardware.h"

#include "comm/backends/backend.h"
#include "comm/topology/native_models.h"

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>

#include "experiments/predict/json_fields.h"

namespace dtbench::predict {
namespace {

// A class of links; `given` says whether it had message_overhead_us (else it is 0, for the caller's default).
LinkClass linkClass(const nlohmann::json& json, const char* key, const JsonFields& f, bool& given) {
  if (!json.contains(key)) f.fail(std::string(key) + " is missing");
  const nlohmann::json& c = json.at(key);
  const std::string where = std::string(key) + ".";
  if (!c.is_object())
    f.fail(std::string(key) + " must be an object with bandwidth_gbit_s and latency_us (and optionally message_overhead_us)");
  f.onlyKeys(c, {"bandwidth_gbit_s", "latency_us", "message_overhead_us"}, where);
  // At most a petabit per second and a thousand seconds: beyond any link.
  LinkClass link{f.number(c, "bandwidth_gbit_s", where, false, 1e6) * 1e9 / 8,
                 f.number(c, "latency_us", where, true, 1e9) * 1e-6};
  given = c.contains("message_overhead_us");
  if (given) link.messageOverheadS = f.number(c, "message_overhead_us", where, true, 1e9) * 1e-6;
  return link;
}

// Written where it was given, 0 included (a calibration's fit is of links without one), so that the
// file reads back as the same links; a default is left for the reader to take again.
nlohmann::json linkJson(const LinkClass& c, bool overheadGiven) {
  nlohmann::json json = {{"bandwidth_gbit_s", c.bytesPerSecond * 8 / 1e9}, {"latency_us", c.latencyS * 1e6}};
  if (overheadGiven) json["message_overhead_us"] = c.messageOverheadS * 1e6;
  return json;
}

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g us", seconds * 1e6);
  return text;
}

}  // namespace

double Hardware::efficiencyOf(const std::string& backend) const {
  const auto it = nativeEfficiency.find(backend);
  if (it != nativeEfficiency.end()) return it->second;
  return comm::nativeModel(comm::backendNames().parse(backend)).efficiency;
}

Network networkFor(const Hardware& hardware, int world, int ranksPerNode, comm::Backend backend, bool ownCollective) {
  Network network{world, ranksPerNode, hardware.intra, hardware.inter, {}};
  network.inter.eagerBytes = comm::backendRow(backend).eagerBytesBetweenHosts;
  if (ownCollective && comm::nativeModel(backend).postedAhead) {
    network.intra.eagerBytes = network.inter.eagerBytes = std::numeric_limits<int64_t>::max();
    // Its cost model's latency a step already holds the network's post overhead (the shipped
    // systems' latencies are built from it), and its proxy keeps several sends in flight.
    network.intra.messageOverheadS = network.inter.messageOverheadS = 0;
  }
  return network;
}

Hardware hardwareFromJson(const nlohmann::json& json, const std::string& source) {
  const JsonFields f(source, "The hardware file");
  if (!json.is_object()) f.fail("the file must hold one JSON object");
  f.onlyKeys(json,
             {"description", "nodes", "ranks_per_node", "intra_node", "inter_node", "compute_scale",
              "native_efficiency", "link_rate_bps", "calibration", "gpu", "collective_library", "framework",
              "gpu_spread"},
             "");
  Hardware h;
  if (json.contains("description")) h.description = f.text(json, "description", "");
  h.ranksPerNode = static_cast<int>(f.whole(json, "ranks_per_node", "", 1, 1 << 24));
  if (json.contains("nodes")) h.nodes = static_cast<int>(f.whole(json, "nodes", "", 1, 1 << 24));
  h.intra = linkClass(json, "intra_node", f, h.intraOverheadGiven);
  h.inter = linkClass(json, "inter_node", f, h.interOverheadGiven);
  if (!h.interOverheadGiven) h.inter.messageOverheadS = kDefaultNetworkOverheadS;
  if (json.contains("compute_scale")) h.computeScale = f.number(json, "compute_scale", "", false, 1e6);
  if (json.contains("link_rate_bps")) h.linkRateBps = f.number(json, "link_rate_bps", "", false);
  h.device = readGpuField(json, f);
  if (json.contains("collective_library")) h.collectiveLibrary = collectiveLibraryFromJson(json.at("collective_library"), f);
  if (json.contains("framework")) h.framework = controlPlaneFromJson(json.at("framework"), f);
  if (json.contains("gpu_spread")) h.gpuSpread = gpuSpreadFromJson(json.at("gpu_spread"), f);
  if (json.contains("native_efficiency")) {
    const nlohmann::json& e = json.at("native_efficiency");
    if (!e.is_object()) f.fail("native_efficiency must be an object {backend: efficiency}");
    for (const auto& item : e.items()) {
      if (!comm::backendNames().contains(item.key()))
        f.fail("native_efficiency names '" + item.key() + "', which is no backend (" + comm::backendNames().joined() +
               ")");
      h.nativeEfficiency[item.key()] = f.number(e, item.key(), "native_efficiency.", false);
    }
  }
  return h;
}

Hardware loadHardware(const std::string& path) { return hardwareFromJson(readInputFile(path, "--hardware"), path); }

nlohmann::json toJson(const Hardware& h) {
  nlohmann::json json;
  if (!h.description.empty()) json["description"] = h.description;
  if (h.nodes) json["nodes"] = *h.nodes;
  json["ranks_per_node"] = h.ranksPerNode;
  json["intra_node"] = linkJson(h.intra, h.intraOverheadGiven);
  json["inter_node"] = linkJson(h.inter, h.interOverheadGiven);
  json["compute_scale"] = h.computeScale;
  json["native_efficiency"] = nlohmann::json::object();
  for (const auto& [backend, e] : h.nativeEfficiency) json["native_efficiency"][backend] = e;
  if (h.linkRateBps) json["link_rate_bps"] = *h.linkRateBps;
  if (!h.device.gpuField().empty()) json["gpu"] = h.device.gpuField();
  if (h.collectiveLibrary) json["collective_library"] = toJson(*h.collectiveLibrary);
  if (h.framework) json["framework"] = toJson(*h.framework);
  if (h.gpuSpread) json["gpu_spread"] = toJson(*h.gpuSpread);
  return json;
}

std::string messageOverheadAssumed(const Hardware& h) {
  // Absent across nodes, the default applies, so both are 0 only where the file says 0 there.
  if (h.intra.messageOverheadS == 0 && h.inter.messageOverheadS == 0)
    return std::string("0: the hardware file's message_overhead_us of 0 ") +
           (h.intraOverheadGiven ? "in both classes" : "across nodes (none given inside a node)") +
           ", so the messages a rank sends at once (a clique's N - 1, a star root's) are issued at no cost";
  std::string text = "inter-node " + microseconds(h.inter.messageOverheadS) + ", intra-node " +
                     microseconds(h.intra.messageOverheadS) + " per message a rank issues: inter-node ";
  text += h.interOverheadGiven ? "the hardware file's"
                               : "the default, NCCL's network post overhead (netOverhead of NVIDIA/nccl "
                                 "src/graph/tuning.cc: 1 us, 2 us on AMD CPUs), as the hardware file gives no "
                                 "inter_node.message_overhead_us";
  text += h.intraOverheadGiven ? ", intra-node the hardware file's"
                               : ", intra-node 0 as the file gives none (NCCL's model names no cost a message inside "
                                 "a node beyond the hop's latency)";
  return text;
}

}  // namespace dtbench::predict
