#include "common/cluster_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/usage_error.h"

namespace dtbench::common {
namespace {

std::runtime_error malformed(const std::string& path, const std::string& field, const std::string& what,
                             const nlohmann::json* value = nullptr) {
  return std::runtime_error("cluster file " + path + ": " + field + " " + what +
                            (value ? ", got " + value->dump() : std::string()));
}

}  // namespace

const ClusterNode* ClusterFile::node(const std::string& name) const {
  for (const ClusterNode& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

ClusterFile readClusterFile(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw std::runtime_error("cannot read cluster file " + path + " (it is a directory)");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read cluster file " + path + " (" + std::strerror(errno) + ")");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read cluster file " + path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("cluster file " + path + " is not JSON (" + e.what() + ")");
  }
  if (!json.is_object()) throw malformed(path, "the top level", "must be an object");
  if (!json.contains("nodes")) throw malformed(path, "\"nodes\"", "is missing");
  const nlohmann::json& nodes = json["nodes"];
  if (!nodes.is_array()) throw malformed(path, "\"nodes\"", "must be an array of nodes", &nodes);
  ClusterFile file;
  file.path = path;
  std::set<std::string> names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const nlohmann::json& node = nodes[i];
    const std::string at = "nodes[" + std::to_string(i) + "]";
    if (!node.is_object()) throw malformed(path, at, "must be an object", &node);
    if (!node.contains("name")) throw malformed(path, at + ".name", "is missing");
    const nlohmann::json& name = node["name"];
    if (!name.is_string() || name.get<std::string>().empty())
      throw malformed(path, at + ".name", "must be a non-empty string", &name);
    if (!names.insert(name.get<std::string>()).second) throw malformed(path, at + ".name", "names a node twice", &name);
    if (!node.contains("link_rate_bps")) throw malformed(path, at + ".link_rate_bps", "is missing (null: not shaped)");
    const nlohmann::json& rate = node["link_rate_bps"];
    ClusterNode parsed{name.get<std::string>(), std::nullopt};
    if (!rate.is_null()) {
      if (!rate.is_number() || !(rate.get<double>() > 0) || !std::isfinite(rate.get<double>()))
        throw malformed(path, at + ".link_rate_bps", "must be a positive number of bit/s, or null when not shaped",
                        &rate);
      parsed.linkRateBps = rate.get<double>();
    }
    file.nodes.push_back(std::move(parsed));
  }
  return file;
}

std::optional<std::vector<double>> ClusterLinks::rates() const {
  if (!onCluster()) return std::nullopt;
  std::vector<double> result;
  for (const HostLink& h : hosts) {
    if (!h.linkRateBps) return std::nullopt;
    result.push_back(*h.linkRateBps);
  }
  return result;
}

std::optional<double> ClusterLinks::slowest() const {
  const std::optional<std::vector<double>> all = rates();
  if (!all || all->empty()) return std::nullopt;
  return *std::min_element(all->begin(), all->end());
}

ClusterLinks clusterLinks(const ClusterFile& file, const std::vector<std::string>& hostnameOfRank) {
  ClusterLinks links;
  std::set<std::string> seen;
  for (const std::string& host : hostnameOfRank) {
    if (!seen.insert(host).second) continue;
    const ClusterNode* node = file.node(host);
    if (!node) return ClusterLinks{std::nullopt, {}, host};
    links.hosts.push_back({host, node->linkRateBps});
  }
  links.file = file.path;
  return links;
}

ClusterLinks clusterLinksFromVariable(const char* variable, const std::vector<std::string>& hostnameOfRank,
                                      std::ostream* warnings) {
  if (!variable || !*variable) return {};
  ClusterFile file;
  try {
    file = readClusterFile(variable);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string(kClusterVariable) + "=" + variable + ": " + e.what() +
                     "; point it at the cluster.json that `cluster.sh up` wrote (`cluster.sh env` sets it), or "
                     "unset it to run off the cluster");
  }
  ClusterLinks links = clusterLinks(file, hostnameOfRank);
  if (links.missingHost && warnings)
    *warnings << "dtbench: warning: host '" << *links.missingHost << "' is not a node of " << kClusterVariable << "="
              << variable << "; running off the cluster (no link rates)\n"
              << std::flush;
  return links;
}

nlohmann::json rateJson(double bitsPerSecond) {
  if (bitsPerSecond == std::floor(bitsPerSecond) && std::abs(bitsPerSecond) < 9e18)
    return static_cast<int64_t>(bitsPerSecond);
  return bitsPerSecond;
}

std::string rateText(double bitsPerSecond) {
  std::ostringstream out;
  if (bitsPerSecond >= 1e9)
    out << bitsPerSecond / 1e9 << " Gbit/s";
  else if (bitsPerSecond >= 1e6)
    out << bitsPerSecond / 1e6 << " Mbit/s";
  else
    out << bitsPerSecond << " bit/s";
  return out.str();
}

std::string describeLinkRateDisagreement(const std::vector<std::optional<double>>& slowestOfRank) {
  if (std::all_of(slowestOfRank.begin(), slowestOfRank.end(),
                  [&](const std::optional<double>& rate) { return rate == slowestOfRank.front(); }))
    return "";
  std::string seen;
  for (size_t r = 0; r < slowestOfRank.size(); ++r)
    seen += (r ? "; rank " : "rank ") + std::to_string(r) + ": " +
            (slowestOfRank[r] ? rateText(*slowestOfRank[r]) : std::string("none"));
  return "the ranks read different link rates from the emulated cluster's cluster.json (" + seen +
         "), which set the pipeline segment across hosts; every rank must see the same " + kClusterVariable +
         " (or none)";
}

}  // namespace dtbench::common
