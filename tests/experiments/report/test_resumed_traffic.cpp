// The traffic section of dtbench report for a resumed run: traffic.csv holds the last launch's bytes only
// (summary.json's traffic_first_step, docs/run-directory.md), so the traffic table and matrix take that
// launch's world and the byte model over its steps only. The run is resized_fixture's (4 ranks of 3, then 2 of
// 6 from global step 3, two epochs of 4 steps, --topology ring), given in memory the counted traffic of a ring
// of 2 over the steps the launch trained: 62,007 float32 elements (one bucket) a step, each rank sending the
// other one chunk in the reduce-scatter and one in the all-gather, 248,028 bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/traffic_tables.h"
#include "run/run_summary.h"

namespace report = dtbench::report;

namespace {

const std::string kResumedTrafficRun = std::string(DTBENCH_REPORT_RESIZED_FIXTURE) + "/runs/lenet-resized-4to2";
const std::string kNeverResumedRun = std::string(DTBENCH_REPORT_FIXTURE) + "/runs/lenet-b32-n2";
constexpr int64_t kRingOf2StepBytes = 62007 * 4;  // what each of 2 ranks sends a step

const report::Cell& trafficCell(const report::Table& table, size_t row, const std::string& column) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), column);
  REQUIRE(it != table.columns.end());
  REQUIRE(row < table.rows.size());
  return table.rows[row][static_cast<size_t>(it - table.columns.begin())];
}

// The resized fixture whose traffic.csv is that of 2 ranks over global steps `firstStep` to `lastStep`
// (summary.json's traffic_last_step where given; the run's rows go on to step 8).
report::RunData resumedAt(int64_t firstStep, std::optional<int64_t> lastStep = std::nullopt) {
  report::RunData run = report::loadRun(kResumedTrafficRun);
  REQUIRE(run.problems.empty());
  run.summary.trafficFirstStep = firstStep;
  run.summary.trafficLastStep = lastStep;
  const int64_t steps = lastStep.value_or(8) - firstStep + 1;
  run.traffic = {{0, 1, steps * kRingOf2StepBytes, "counted"}, {1, 0, steps * kRingOf2StepBytes, "counted"}};
  return run;
}

}  // namespace

TEST_CASE("the traffic table of a resized run is its last launch's: that world, those steps",
          "[report][resized][traffic]") {
  const std::vector<report::RunData> runs = {resumedAt(3)};
  const report::TrafficLaunch launch = report::trafficLaunch(runs[0]);
  CHECK(launch.firstStep == 3);
  CHECK(launch.worldSize == 2);
  const report::Table table = report::trafficTable(runs);
  REQUIRE(table.rows.size() == 1);
  CHECK(trafficCell(table, 0, "id").text == "lenet-resized-4to2");
  CHECK(trafficCell(table, 0, "N").integer == 2);
  CHECK(trafficCell(table, 0, "peers_out_in").text == "0:1/1 1:1/1");
  // Steps 3..8, 2 ranks each: 12 steps of a rank, not the 4-rank model over every row of the run.
  CHECK(trafficCell(table, 0, "expected_bytes").integer == 12 * kRingOf2StepBytes);
  CHECK(trafficCell(table, 0, "counted_bytes").integer == 12 * kRingOf2StepBytes);
  CHECK(trafficCell(table, 0, "counted_over_expected").value == Approx(1.0));
  CHECK(table.notes.back() ==
        "- `lenet-resized-4to2`: traffic.csv holds steps 3.. only, the last launch's at N=2 (the earlier launches' "
        "traffic is not kept): `N`, the matrix and `expected_bytes` are that launch's.");
  const std::vector<report::Table> matrices = report::trafficMatrixTables(runs);
  REQUIRE(matrices.size() == 1);
  CHECK(matrices[0].title ==
        "Traffic matrix: lenet-resized-4to2 (bytes, counted; steps 3.. only, the last launch's at N=2)");
  CHECK(matrices[0].columns == std::vector<std::string>{"src \\ dst", "0", "1"});
  REQUIRE(matrices[0].rows.size() == 2);
  CHECK(matrices[0].rows[0][2].integer == 6 * kRingOf2StepBytes);
}

TEST_CASE("a resume at the same world inside a segment counts only the steps since it", "[report][resized][traffic]") {
  // Global step 6 is epoch 2's step 2 (epoch 1 had 4 steps): steps 6, 7, 8 of 2 ranks.
  const std::vector<report::RunData> runs = {resumedAt(6)};
  const report::Table table = report::trafficTable(runs);
  REQUIRE(table.rows.size() == 1);
  CHECK(trafficCell(table, 0, "N").integer == 2);
  CHECK(trafficCell(table, 0, "expected_bytes").integer == 6 * kRingOf2StepBytes);
  CHECK(trafficCell(table, 0, "counted_over_expected").value == Approx(1.0));
}

TEST_CASE("a later launch that wrote no traffic: only the steps up to traffic_last_step are covered",
          "[report][resized][traffic]") {
  SECTION("traffic of steps 3..6, rows on to step 8 (a launch from step 7 that failed)") {
    const std::vector<report::RunData> runs = {resumedAt(3, 6)};
    CHECK(report::trafficLaunch(runs[0]).lastStep == 6);
    const report::Table table = report::trafficTable(runs);
    REQUIRE(table.rows.size() == 1);
    CHECK(trafficCell(table, 0, "expected_bytes").integer == 8 * kRingOf2StepBytes);
    CHECK(trafficCell(table, 0, "counted_over_expected").value == Approx(1.0));
    CHECK(table.notes.back().find("steps 3..6 only, the last launch's at N=2") != std::string::npos);
  }
  SECTION("traffic_last_step at the run's last row cuts nothing") {
    const std::vector<report::RunData> runs = {resumedAt(3, 8)};
    CHECK_FALSE(report::trafficLaunch(runs[0]).lastStep);
    CHECK(report::renderMarkdown({report::trafficTable(runs)}) ==
          report::renderMarkdown({report::trafficTable({resumedAt(3)})}));
  }
}

TEST_CASE("a run directory without traffic_first_step reads as traffic of the whole run", "[report][traffic]") {
  SECTION("a resized run written before the key: the first world, every row") {
    report::RunData run = resumedAt(3);
    run.summary.trafficFirstStep.reset();
    const report::Table table = report::trafficTable({run});
    REQUIRE(table.rows.size() == 1);
    CHECK(trafficCell(table, 0, "N").integer == 4);
    CHECK(trafficCell(table, 0, "expected_bytes").integer > 12 * kRingOf2StepBytes);
    CHECK(table.notes.size() == 2);  // no launch named
  }
  SECTION("a run never resumed: the key at its first step changes nothing") {
    report::RunData run = report::loadRun(kNeverResumedRun);
    REQUIRE(run.problems.empty());
    REQUIRE_FALSE(run.traffic.empty());
    REQUIRE_FALSE(run.summary.trafficFirstStep);
    const std::vector<report::Table> before = {report::trafficTable({run}), report::trafficMatrixTables({run})[0]};
    run.summary.trafficFirstStep = 1;
    const std::vector<report::Table> after = {report::trafficTable({run}), report::trafficMatrixTables({run})[0]};
    CHECK(report::renderMarkdown(after) == report::renderMarkdown(before));
    CHECK(report::renderJson(after) == report::renderJson(before));
  }
}

TEST_CASE("summary.json's traffic_first_step and traffic_last_step are written and read back, global steps from 1",
          "[report][traffic]") {
  dtbench::run::RunSummary summary;
  summary.trafficFirstStep = 134;
  const nlohmann::json written = dtbench::run::summaryJson(summary);
  CHECK(written.at("traffic_first_step") == 134);
  std::vector<std::string> problems;
  CHECK(dtbench::run::readSummaryJson(written, problems).trafficFirstStep == 134);
  CHECK(problems.empty());
  CHECK_FALSE(dtbench::run::summaryJson(dtbench::run::RunSummary{}).contains("traffic_first_step"));
  nlohmann::json zero = written;
  zero["traffic_first_step"] = 0;
  CHECK_FALSE(dtbench::run::readSummaryJson(zero, problems).trafficFirstStep);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("traffic_first_step") != std::string::npos);
  summary.trafficLastStep = 140;
  problems.clear();
  CHECK(dtbench::run::readSummaryJson(dtbench::run::summaryJson(summary), problems).trafficLastStep == 140);
  CHECK(problems.empty());
}
