#include "experiments/predict/hardware.h"

#include "comm/backends/backend.h"
#include "comm/topology/native_models.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/strict_json.h"
#include "common/usage_error.h"

namespace dtbench::predict {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw common::UsageError(source + ": " + what + " (docs/predict.md, \"The hardware file\")");
}

void onlyKeys(const nlohmann::json& object, const std::set<std::string>& allowed, const std::string& source,
              const std::string& where) {
  for (const auto& item : object.items())
    if (!allowed.count(item.key())) fail(source, "unknown key '" + where + item.key() + "'");
}

double positive(const nlohmann::json& object, const char* key, const std::string& source, const std::string& where,
                bool zeroAllowed) {
  if (!object.contains(key)) fail(source, where + key + " is missing");
  const nlohmann::json& v = object.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (!zeroAllowed && v.get<double>() == 0))
    fail(source, where + key + " must be a " + (zeroAllowed ? "non-negative" : "positive") + " number");
  return v.get<double>();
}

LinkClass linkClass(const nlohmann::json& json, const char* key, const std::string& source) {
  if (!json.contains(key)) fail(source, std::string(key) + " is missing");
  const nlohmann::json& c = json.at(key);
  const std::string where = std::string(key) + ".";
  if (!c.is_object()) fail(source, std::string(key) + " must be an object with bandwidth_gbit_s and latency_us");
  onlyKeys(c, {"bandwidth_gbit_s", "latency_us"}, source, where);
  return {positive(c, "bandwidth_gbit_s", source, where, false) * 1e9 / 8,
          positive(c, "latency_us", source, where, true) * 1e-6};
}

}  // namespace

double Hardware::efficiencyOf(const std::string& backend) const {
  const auto it = nativeEfficiency.find(backend);
  if (it != nativeEfficiency.end()) return it->second;
  return comm::nativeModel(comm::backendNames().parse(backend)).efficiency;
}

Hardware hardwareFromJson(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) fail(source, "the file must hold one JSON object");
  onlyKeys(json,
           {"description", "nodes", "ranks_per_node", "intra_node", "inter_node", "compute_scale", "native_efficiency",
            "calibration"},
           source, "");
  Hardware h;
  if (json.contains("description")) {
    if (!json.at("description").is_string()) fail(source, "description must be text");
    h.description = json.at("description").get<std::string>();
  }
  const auto count = [&](const char* key) {
    const nlohmann::json& v = json.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1 << 24)
      fail(source, std::string(key) + " must be a whole number from 1");
    return static_cast<int>(v.get<int64_t>());
  };
  if (!json.contains("ranks_per_node")) fail(source, "ranks_per_node is missing");
  h.ranksPerNode = count("ranks_per_node");
  if (json.contains("nodes")) h.nodes = count("nodes");
  h.intra = linkClass(json, "intra_node", source);
  h.inter = linkClass(json, "inter_node", source);
  if (json.contains("compute_scale")) h.computeScale = positive(json, "compute_scale", source, "", false);
  if (json.contains("native_efficiency")) {
    const nlohmann::json& e = json.at("native_efficiency");
    if (!e.is_object()) fail(source, "native_efficiency must be an object {backend: efficiency}");
    for (const auto& item : e.items()) {
      if (!comm::backendNames().contains(item.key()))
        fail(source, "native_efficiency names '" + item.key() + "', which is no backend (" +
                         comm::backendNames().joined() + ")");
      h.nativeEfficiency[item.key()] = positive(e, item.key().c_str(), source, "native_efficiency.", false);
    }
  }
  return h;
}

Hardware loadHardware(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::UsageError("--hardware: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json json;
  try {
    json = common::parseStrictJson(text.str(), "--hardware: " + path);
  } catch (const std::runtime_error& e) {
    throw common::UsageError(e.what());
  }
  return hardwareFromJson(json, path);
}

nlohmann::json toJson(const Hardware& h) {
  nlohmann::json json;
  if (!h.description.empty()) json["description"] = h.description;
  if (h.nodes) json["nodes"] = *h.nodes;
  json["ranks_per_node"] = h.ranksPerNode;
  json["intra_node"] = {{"bandwidth_gbit_s", h.intra.bytesPerSecond * 8 / 1e9}, {"latency_us", h.intra.latencyS * 1e6}};
  json["inter_node"] = {{"bandwidth_gbit_s", h.inter.bytesPerSecond * 8 / 1e9}, {"latency_us", h.inter.latencyS * 1e6}};
  json["compute_scale"] = h.computeScale;
  json["native_efficiency"] = nlohmann::json::object();
  for (const auto& [backend, e] : h.nativeEfficiency) json["native_efficiency"][backend] = e;
  return json;
}

}  // namespace dtbench::predict
