// cluster.json (common/cluster_file.h): the nodes' link rates, a malformed file named with its
// field, and the DTBENCH_CLUSTER rule (off the cluster when unset or when a host is no node).
#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cluster_file.h"
#include "common/usage_error.h"
#include "temp_dir.h"

using namespace dtbench::common;
using dtbench::testing::TempDir;

namespace {

// The format cluster.sh writes: two shaped nodes at 1 Gbit/s and 100 Mbit/s and one unshaped.
const char kCluster[] = R"({
  "name": "dtbc",
  "subnet": "10.78.0.0/24",
  "slurm_conf": "/run/dtbench-cluster/dtbc/etc/slurm.conf",
  "nodes": [
    {"name": "node1", "address": "10.78.0.1", "interface": "eth0", "link_rate_bps": 1000000000,
     "tbf_burst_bytes": 131072, "tbf_limit_bytes": 1250000, "cpus": 4, "gpus": 2},
    {"name": "node2", "address": "10.78.0.2", "interface": "eth0", "link_rate_bps": 100000000,
     "tbf_burst_bytes": 131072, "tbf_limit_bytes": 125000, "cpus": 4, "gpus": 0, "added_later": [1, 2]},
    {"name": "node3", "address": "10.78.0.3", "interface": "eth0", "link_rate_bps": null,
     "tbf_burst_bytes": null, "tbf_limit_bytes": null, "cpus": 2, "gpus": 0}
  ],
  "added_later": {"x": 1}
})";

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

std::string readError(const std::string& path) {
  try {
    readClusterFile(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("cluster.json: each node's name and link rate, other keys ignored", "[cluster_file]") {
  TempDir dir;
  const std::string path = write(dir, "cluster.json", kCluster);
  const ClusterFile file = readClusterFile(path);
  CHECK(file.path == path);
  REQUIRE(file.nodes.size() == 3);
  CHECK(file.nodes[0].name == "node1");
  CHECK(file.nodes[0].linkRateBps == std::optional<double>(1e9));
  CHECK(file.nodes[1].linkRateBps == std::optional<double>(1e8));
  CHECK_FALSE(file.nodes[2].linkRateBps);
  REQUIRE(file.node("node2"));
  CHECK(file.node("node2")->name == "node2");
  CHECK(file.node("node4") == nullptr);
}

TEST_CASE("a malformed cluster.json is named with its field", "[cluster_file]") {
  TempDir dir;
  CHECK_THAT(readError(dir / "absent.json"),
             Catch::Contains("cannot read cluster file " + dir / "absent.json") && Catch::Contains("No such file"));
  CHECK_THAT(readError(write(dir, "a.json", "{\"nodes\": [")), Catch::Contains("a.json is not JSON"));
  CHECK_THAT(readError(write(dir, "b.json", "[]")), Catch::Contains("b.json: the top level must be an object"));
  CHECK_THAT(readError(write(dir, "c.json", "{\"name\": \"dtbc\"}")), Catch::Contains("c.json: \"nodes\" is missing"));
  CHECK_THAT(readError(write(dir, "d.json", "{\"nodes\": {}}")), Catch::Contains("\"nodes\" must be an array"));
  CHECK_THAT(readError(write(dir, "e.json", R"({"nodes": [{"link_rate_bps": 1}]})")),
             Catch::Contains("e.json: nodes[0].name is missing"));
  CHECK_THAT(readError(write(dir, "f.json", R"({"nodes": [{"name": "", "link_rate_bps": 1}]})")),
             Catch::Contains("nodes[0].name must be a non-empty string"));
  CHECK_THAT(readError(write(dir, "g.json", R"({"nodes": [{"name": "n1", "link_rate_bps": 1}, {"name": "n2"}]})")),
             Catch::Contains("nodes[1].link_rate_bps is missing"));
  CHECK_THAT(readError(write(dir, "h.json", R"({"nodes": [{"name": "n1", "link_rate_bps": "1G"}]})")),
             Catch::Contains("nodes[0].link_rate_bps must be a positive number") && Catch::Contains("got \"1G\""));
  CHECK_THAT(readError(write(dir, "i.json", R"({"nodes": [{"name": "n1", "link_rate_bps": 0}]})")),
             Catch::Contains("nodes[0].link_rate_bps must be a positive number") && Catch::Contains("got 0"));
  CHECK_THAT(readError(write(dir, "j.json", R"({"nodes": [{"name": "n1", "link_rate_bps": -5}]})")),
             Catch::Contains("got -5"));
  CHECK_THAT(readError(write(dir, "k.json", R"({"nodes": [{"name": "n1", "link_rate_bps": true}]})")),
             Catch::Contains("got true"));
  CHECK_THAT(readError(write(dir, "l.json",
                             R"({"nodes": [{"name": "n1", "link_rate_bps": 1}, {"name": "n1", "link_rate_bps": 2}]})")),
             Catch::Contains("nodes[1].name names a node twice"));
  CHECK_THAT(readError(write(dir, "m.json", R"({"nodes": [7]})")), Catch::Contains("nodes[0] must be an object"));
  CHECK_THAT(readError(dir.path().string()),
             Catch::Contains("cannot read cluster file " + dir.path().string() + " (it is a directory)"));
}

TEST_CASE("a run's hosts: distinct, in order of their lowest rank, with their rates", "[cluster_file]") {
  TempDir dir;
  const ClusterFile file = readClusterFile(write(dir, "cluster.json", kCluster));
  const ClusterLinks links = clusterLinks(file, {"node2", "node2", "node1", "node2"});
  REQUIRE(links.onCluster());
  CHECK(*links.file == file.path);
  CHECK_FALSE(links.missingHost);
  REQUIRE(links.hosts.size() == 2);
  CHECK(links.hosts[0].host == "node2");
  CHECK(links.hosts[0].linkRateBps == std::optional<double>(1e8));
  CHECK(links.hosts[1].host == "node1");
  CHECK(links.hosts[1].linkRateBps == std::optional<double>(1e9));
  CHECK(links.rates() == std::optional<std::vector<double>>({1e8, 1e9}));
  CHECK(links.slowest() == std::optional<double>(1e8));

  // An unshaped node's link has no rate: still on the cluster, but neither rates nor a slowest.
  const ClusterLinks unshaped = clusterLinks(file, {"node1", "node3"});
  REQUIRE(unshaped.onCluster());
  CHECK_FALSE(unshaped.hosts[1].linkRateBps);
  CHECK_FALSE(unshaped.rates());
  CHECK_FALSE(unshaped.slowest());

  // A host that is no node: off the cluster, naming the first such host.
  const ClusterLinks off = clusterLinks(file, {"node1", "laptop", "other"});
  CHECK_FALSE(off.onCluster());
  CHECK(off.hosts.empty());
  CHECK(off.missingHost == std::optional<std::string>("laptop"));
  CHECK_FALSE(off.rates());
  CHECK_FALSE(off.slowest());
}

TEST_CASE("DTBENCH_CLUSTER: unset or empty is off the cluster, a bad file a usage error", "[cluster_file]") {
  TempDir dir;
  const std::string path = write(dir, "cluster.json", kCluster);
  std::ostringstream warnings;
  for (const char* variable : {static_cast<const char*>(nullptr), ""}) {
    const ClusterLinks off = clusterLinksFromVariable(variable, {"node1"}, &warnings);
    CHECK_FALSE(off.onCluster());
    CHECK_FALSE(off.missingHost);
  }
  CHECK(warnings.str().empty());

  const ClusterLinks on = clusterLinksFromVariable(path.c_str(), {"node1", "node2"}, &warnings);
  CHECK(on.file == std::optional<std::string>(path));
  CHECK(on.rates() == std::optional<std::vector<double>>({1e9, 1e8}));
  CHECK(warnings.str().empty());

  const std::string missing = dir / "missing.json";
  CHECK_THROWS_AS(clusterLinksFromVariable(missing.c_str(), {"node1"}, nullptr), UsageError);
  CHECK_THROWS_WITH(clusterLinksFromVariable(missing.c_str(), {"node1"}, nullptr),
                    Catch::Contains("DTBENCH_CLUSTER=" + missing) && Catch::Contains("cannot read cluster file") &&
                        Catch::Contains("unset it"));
  const std::string bad = write(dir, "bad.json", R"({"nodes": [{"name": "node1", "link_rate_bps": "fast"}]})");
  CHECK_THROWS_WITH(clusterLinksFromVariable(bad.c_str(), {"node1"}, nullptr),
                    Catch::Contains("DTBENCH_CLUSTER=" + bad) && Catch::Contains("nodes[0].link_rate_bps"));
}

TEST_CASE("DTBENCH_CLUSTER: a host that is no node is off the cluster with one warning", "[cluster_file]") {
  TempDir dir;
  const std::string path = write(dir, "cluster.json", kCluster);
  std::ostringstream warnings;
  const ClusterLinks off = clusterLinksFromVariable(path.c_str(), {"node1", "root-ns", "elsewhere"}, &warnings);
  CHECK_FALSE(off.onCluster());
  CHECK(off.missingHost == std::optional<std::string>("root-ns"));
  CHECK(warnings.str() == "dtbench: warning: host 'root-ns' is not a node of DTBENCH_CLUSTER=" + path +
                              "; running off the cluster (no link rates)\n");
  // Ranks other than 0 pass no stream and say nothing; the result is the same.
  CHECK(clusterLinksFromVariable(path.c_str(), {"node1", "root-ns"}, nullptr).missingHost ==
        std::optional<std::string>("root-ns"));
}

TEST_CASE("ranks that read different link rates are told apart, each rank with its rate", "[cluster_file]") {
  using dtbench::common::describeLinkRateDisagreement;
  CHECK(describeLinkRateDisagreement({}).empty());
  CHECK(describeLinkRateDisagreement({2e8, 2e8, 2e8}).empty());
  CHECK(describeLinkRateDisagreement({std::nullopt, std::nullopt}).empty());
  const std::string message = describeLinkRateDisagreement({2e8, 1e9, std::nullopt});
  CHECK_THAT(message, Catch::Contains("(rank 0: 200 Mbit/s; rank 1: 1 Gbit/s; rank 2: none)"));
  CHECK_THAT(message, Catch::Contains("every rank must see the same DTBENCH_CLUSTER"));
  CHECK(dtbench::common::rateText(2.5e9) == "2.5 Gbit/s");
  CHECK(dtbench::common::rateText(5e5) == "500000 bit/s");
}
