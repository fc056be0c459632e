// The nodes a run used (experiments/report/runs/placement.h) and the link bound of Table 3
// (experiments/report/runs/step_link_bound.h), hand-worked: in memory, and over the run directories of
// cluster_fixture/ (two runs on the emulated cluster's shaped links) through the whole report.
#include <catch2/catch.hpp>

#include "experiments/report/runs/allreduce_model.h"
#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/placement.h"
#include "experiments/report/report.h"
#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/step_link_bound.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using dtbench::report::allreduceModel;
using dtbench::report::Cell;
using dtbench::report::placementOf;
using dtbench::report::RunData;
using dtbench::report::stepLinkBound;
using dtbench::report::Table;

namespace {

// TCP payload bytes per second of a link shaped to R bit/s: R/8 × 1448/1514.
constexpr double kPayload1Gbit = 119550858.65257595;    // 1e9 / 8 × 1448 / 1514
constexpr double kPayloadHalfGbit = 59775429.32628798;  // 5e8 / 8 × 1448 / 1514

nlohmann::json configWith(const nlohmann::json& extra) {
  nlohmann::json config = {{"model", "lenet"},  {"dataset", "synthetic"}, {"batch_size", 32},     {"world_size", 2},
                           {"backend", "gloo"}, {"topology", "ring"},      {"sync", "ssgd"},       {"hosts", {"node1", "node2"}},
                           {"hosts_emulated", false}, {"ranks_per_host", 0}, {"bucket_elements", {62007}},
                           {"bucket_dtypes", {"float32"}}, {"link_rate_bps", {{"node1", 1e9}, {"node2", 1e9}}}};
  if (!extra.is_null()) config.update(extra);
  return config;
}

RunData linkRunWith(const nlohmann::json& extra) {
  RunData run;
  dtbench::report::readConfig(run, configWith(extra));
  return run;
}

double boundOf(const RunData& run) {
  const auto bound = stepLinkBound(run, allreduceModel(run));
  INFO(bound.why);
  REQUIRE(bound.available);
  return bound.busbwBytesPerSecond;
}

std::string whyNot(const RunData& run) {
  const auto bound = stepLinkBound(run, allreduceModel(run));
  CHECK_FALSE(bound.available);
  return bound.why;
}

size_t columnOf(const Table& table, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  REQUIRE(it != table.columns.end());
  return static_cast<size_t>(it - table.columns.begin());
}

// The row of `table` whose column `key` holds the text `value`.
const std::vector<Cell>& rowWith(const Table& table, const std::string& key, const std::string& value) {
  const size_t column = columnOf(table, key);
  for (const auto& row : table.rows)
    if (row[column].text == value) return row;
  FAIL("no row with " << key << " = " << value << " in " << table.name);
  throw std::logic_error("not reached: FAIL throws");
}

}  // namespace

TEST_CASE("nodes are the distinct real hosts and emulated hosts are marked apart", "[report][nodes]") {
  const auto two = placementOf(linkRunWith({{"world_size", 4}, {"hosts", {"node1", "node1", "node2", "node2"}}}));
  CHECK(two.nodes == 2);
  CHECK(two.ranksPerNode == std::vector<int>{2, 2});
  CHECK(two.text() == "2 nodes × 2 ranks");
  const auto uneven = placementOf(linkRunWith({{"world_size", 4}, {"hosts", {"b", "a", "b", "b"}}}));
  CHECK(uneven.ranksPerNode == std::vector<int>{3, 1});  // nodes in the order of their lowest rank
  CHECK(uneven.text() == "2 nodes × 1–3 ranks");
  const auto one = placementOf(linkRunWith({{"hosts", {"vm", "vm"}}}));
  CHECK(one.nodes == 1);
  CHECK(one.text().empty());
  // --ranks-per-host 2 on one machine: 1 node, 2 emulated hosts.
  const auto emulated = placementOf(
      linkRunWith({{"world_size", 4}, {"hosts", {"vm", "vm", "vm", "vm"}}, {"hosts_emulated", true}, {"ranks_per_host", 2}}));
  CHECK(emulated.nodes == 1);
  CHECK(emulated.emulatedHosts == 2);
  CHECK(emulated.text() == "2 emulated hosts × 2 ranks");
  const auto odd = placementOf(
      linkRunWith({{"world_size", 5}, {"hosts", {"vm", "vm", "vm", "vm", "vm"}}, {"hosts_emulated", true},
               {"ranks_per_host", 2}}));
  CHECK(odd.text() == "3 emulated hosts × 1–2 ranks");
  // One rank lists no hosts and runs on one node; a run of several ranks without hosts is unknown.
  RunData single;
  dtbench::report::readConfig(single, {{"world_size", 1}});
  CHECK(placementOf(single).nodes == 1);
  RunData old;
  dtbench::report::readConfig(old, {{"world_size", 2}});
  CHECK(placementOf(old).nodes == 0);
}

TEST_CASE("the placement is part of the grouping key and of the configuration line", "[report][nodes]") {
  using dtbench::report::configurationOf;
  const auto local = configurationOf(linkRunWith({{"world_size", 4}, {"hosts", {"vm", "vm", "vm", "vm"}},
                                              {"link_rate_bps", nullptr}}));
  const auto placed = configurationOf(linkRunWith({{"world_size", 4}, {"hosts", {"node1", "node1", "node2", "node2"}},
                                               {"link_rate_bps", nullptr}}));
  CHECK(local.nodes == 1);
  CHECK(placed.nodes == 2);
  CHECK_FALSE(local == placed);        // not repeats of each other
  CHECK(local.series() == placed.series());  // but one series
  CHECK(describe(local) == "lenet synthetic B=32 N=4 gloo/ring ssgd");
  CHECK(describe(placed) == "lenet synthetic B=32 N=4 gloo/ring ssgd, 2 nodes × 2 ranks");
  // Link rates make setups of their own.
  CHECK(configurationOf(linkRunWith({})).setup == "gloo/ring ssgd, links 1 Gbps");
  CHECK(configurationOf(linkRunWith({{"link_rate_bps", {{"node1", 1e9}, {"node2", 2.5e8}}}})).setup ==
        "gloo/ring ssgd, links 0.25/1 Gbps");
  CHECK(configurationOf(linkRunWith({{"link_rate_bps", {{"node1", 1e9}, {"node2", nullptr}}}})).setup ==
        "gloo/ring ssgd, links 1 Gbps/unshaped");
}

TEST_CASE("the link bound of a ring with one rank per node is the slowest link's payload rate", "[report][link]") {
  // Each rank sends S and receives S per step across the links: T = S / p, busbw bytes S·2(2−1)/2 = S.
  CHECK(boundOf(linkRunWith({})) == Approx(kPayload1Gbit).epsilon(1e-12));
  CHECK(boundOf(linkRunWith({{"link_rate_bps", {{"node1", 1e9}, {"node2", 5e8}}}})) ==
        Approx(kPayloadHalfGbit).epsilon(1e-12));
  // native is held to a ring over the hosts: with one rank per node, the ring's bound.
  CHECK(boundOf(linkRunWith({{"topology", "native"}})) == Approx(kPayload1Gbit).epsilon(1e-12));
}

TEST_CASE("the link bound counts the schedule's chunk rounding and sums over buckets", "[report][link]") {
  // Ring over 3 nodes, 10 float32 elements: chunks of 3, 3 and 4 elements. Rank 2 sends chunks 2, 1
  // (reduce-scatter) and 0, 2 (all-gather): 4 + 3 + 3 + 4 = 14 elements, 56 bytes over node3's link,
  // the busiest. busbw bytes = 40 × 2·2/3 = 53.33, so the bound is 53.33/56 × p = 113,857,960.6 B/s.
  const RunData three = linkRunWith({{"world_size", 3},
                                 {"hosts", {"node1", "node2", "node3"}},
                                 {"bucket_elements", {10}},
                                 {"link_rate_bps", {{"node1", 1e9}, {"node2", 1e9}, {"node3", 1e9}}}});
  CHECK(boundOf(three) == Approx(113857960.62150091).epsilon(1e-12));
  CHECK(stepLinkBound(three, allreduceModel(three)).minSeconds == Approx(56 / kPayload1Gbit).epsilon(1e-12));
  // Two buckets: T is the sum of each one's least time, S the sum of their bytes. Star over 4 ranks on
  // 2 nodes x 2 ranks, node2 at 0.5 Gbit/s: node2's link carries 2·S_b each way, so T = 2S / p(0.5)
  // and the bound is 1.5 S / T = 0.75 × p(0.5) whatever the buckets.
  const RunData star = linkRunWith({{"world_size", 4},
                                {"topology", "star"},
                                {"hosts", {"node1", "node1", "node2", "node2"}},
                                {"bucket_elements", {62007, 1000}},
                                {"bucket_dtypes", {"float32", "float16"}},
                                {"link_rate_bps", {{"node1", 1e9}, {"node2", 5e8}}}});
  CHECK(boundOf(star) == Approx(0.75 * kPayloadHalfGbit).epsilon(1e-12));
  CHECK(stepLinkBound(star, allreduceModel(star)).minSeconds ==
        Approx(2.0 * (62007 * 4 + 1000 * 2) / kPayloadHalfGbit).epsilon(1e-12));
}

TEST_CASE("emulated hosts keep the run's schedule and charge its bytes to the real hosts' links", "[report][link]") {
  // hierarchical over 4 ranks on 2 nodes x 2 ranks at 1 Gbit/s, 1000 float32 elements (S = 4000 B).
  // Over the real hosts: ranks 1 and 3 hand their tensor to leaders 0 and 2 inside their node, the
  // leaders' ring moves S each way across the link: T = S / p, bound = 1.5 S / T = 1.5 p.
  const nlohmann::json placed = {{"world_size", 4},
                                 {"topology", "hierarchical"},
                                 {"hosts", {"node1", "node1", "node2", "node2"}},
                                 {"bucket_elements", {1000}}};
  CHECK(boundOf(linkRunWith(placed)) == Approx(1.5 * kPayload1Gbit).epsilon(1e-12));
  // --ranks-per-host 1: the run's schedule is the ring over 4 one-rank emulated hosts; its edges
  // 1->2 and 3->0 cross the links, each carrying 6 chunks of 250 elements = 1.5 S: bound = p.
  nlohmann::json emulated = placed;
  emulated.update({{"hosts_emulated", true}, {"ranks_per_host", 1}});
  CHECK(boundOf(linkRunWith(emulated)) == Approx(kPayload1Gbit).epsilon(1e-12));
}

TEST_CASE("there is no link bound off shaped links or on one host", "[report][link]") {
  CHECK(whyNot(linkRunWith({{"link_rate_bps", nullptr}})).empty());  // off the cluster: nothing to say
  nlohmann::json withoutKey = configWith({});
  withoutKey.erase("link_rate_bps");
  RunData noKey;
  dtbench::report::readConfig(noKey, withoutKey);
  CHECK(whyNot(noKey).empty());
  CHECK_THAT(whyNot(linkRunWith({{"hosts", {"node1", "node1"}}})), Catch::Contains("all ranks ran on one host (node1)"));
  CHECK_THAT(whyNot(linkRunWith({{"link_rate_bps", {{"node1", 1e9}, {"node2", nullptr}}}})),
             Catch::Contains("host node2 has no link rate in link_rate_bps (null)"));
  CHECK_THAT(whyNot(linkRunWith({{"link_rate_bps", {{"node1", 1e9}}}})),
             Catch::Contains("host node2 has no link rate in link_rate_bps (missing)"));
  // Emulated hosts on one machine: no link at all.
  CHECK_THAT(whyNot(linkRunWith({{"hosts", {"vm", "vm"}}, {"hosts_emulated", true}, {"ranks_per_host", 1}})),
             Catch::Contains("all ranks ran on one host (vm)"));
  CHECK_THAT(whyNot(linkRunWith({{"sync", "pairavg"}})), Catch::Contains("pair averaging"));
}

TEST_CASE("Table 3 holds the link bound and Table 1 the nodes of the cluster fixture's runs", "[report][link]") {
  dtbench::report::ReportSettings settings;
  settings.directories = {std::string(DTBENCH_REPORT_CLUSTER_FIXTURE) + "/runs"};
  const auto report = dtbench::report::buildReport(settings);
  REQUIRE(report->selection.leftOut.empty());

  const Table& bandwidth = report->table("bandwidth");
  const auto& star = rowWith(bandwidth, "setup", "gloo/star ssgd, links 0.5/1 Gbps");
  // Measured: rank 0 (the hub, busiest) spent 2 × 0.05 s in all-reduces of S = 62007 × 4 + 1000 × 2 =
  // 250028 bytes per step: algbw = 2S / 0.1 s = 5.00056 MB/s, busbw = 1.5 × algbw = 7.50084 MB/s.
  CHECK(star[columnOf(bandwidth, "nodes")].integer == 2);
  CHECK(star[columnOf(bandwidth, "grad_bytes")].integer == 250028);
  CHECK(star[columnOf(bandwidth, "busbw_GBps")].value == Approx(0.00750084).epsilon(1e-9));
  // Bound: 0.75 × 59,775,429.3 B/s = 0.0448316 GB/s; of it: 0.00750084 / 0.0448316 = 0.16731.
  CHECK(star[columnOf(bandwidth, "link_bound_busbw_GBps")].kind == Cell::Kind::kRate);
  CHECK(star[columnOf(bandwidth, "link_bound_busbw_GBps")].value == Approx(0.0448315720).epsilon(1e-9));
  CHECK(star[columnOf(bandwidth, "of_link_bound")].value == Approx(0.16731155).epsilon(1e-7));
  // A host whose link is not shaped: no bound, and a remark says why.
  const auto& unshaped = rowWith(bandwidth, "setup", "gloo/ring ssgd, links 1 Gbps/unshaped");
  CHECK(unshaped[columnOf(bandwidth, "link_bound_busbw_GBps")].kind == Cell::Kind::kEmpty);
  CHECK(unshaped[columnOf(bandwidth, "of_link_bound")].kind == Cell::Kind::kEmpty);
  CHECK(std::find(bandwidth.notes.begin(), bandwidth.notes.end(),
                  "- ring-nodes2-unshaped: no link bound: host node3 has no link rate in link_rate_bps (null).") !=
        bandwidth.notes.end());

  const Table& times = report->table("time_speedup");
  CHECK(rowWith(times, "setup", "gloo/star ssgd, links 0.5/1 Gbps")[columnOf(times, "nodes")].integer == 2);
  const Table& jobs = report->table("jobs");
  CHECK(rowWith(jobs, "id", "star-nodes2")[columnOf(jobs, "configuration")].text ==
        "lenet synthetic B=32 N=4 gloo/star ssgd, links 0.5/1 Gbps, 2 nodes × 2 ranks");
}
