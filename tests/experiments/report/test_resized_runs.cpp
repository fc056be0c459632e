// A run resized by --resume (4 ranks of 3, then 2 of 6 from global step 3: resized_fixture/runs) in the
// tables one segment a row (experiments/report/runs/run_segments.h): each its own N and batch, its T from
// its own steps only, marked as a segment, never a repeat or a baseline.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_segments.h"
#include "experiments/report/runs/run_selection.h"
#include "experiments/report/runs/scaling_tables.h"

namespace report = dtbench::report;

namespace {

const std::string kResized = std::string(DTBENCH_REPORT_RESIZED_FIXTURE) + "/runs/lenet-resized-4to2";
const std::string kBaseline = std::string(DTBENCH_REPORT_RESIZED_FIXTURE) + "/runs/lenet-b6-n1";

const report::ScalingRow* rowOf(const std::vector<report::ScalingRow>& rows, int world, int batch) {
  for (const report::ScalingRow& r : rows)
    if (r.configuration.world == world && r.configuration.batch == batch) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("a resized run reads its segments, and its rows of every world are no damage", "[report][resized]") {
  const report::RunData run = report::loadRun(kResized);
  CAPTURE(run.problems);
  REQUIRE(run.problems.empty());  // ranks 2 and 3 beyond the last world are the first segment's
  REQUIRE(run.facts.segments.size() == 2);
  CHECK(run.resized == "N=4 x B=3 from step 1, N=2 x B=6 from step 3");
  CHECK(run.facts.segments[1].resizeLatencyS() == Approx(7.5));
  CHECK(run.summary.segments.size() == 2);
  CHECK(run.largestWorldSize() == 4);
}

TEST_CASE("each segment is a run of its world, with its own steps only", "[report][resized]") {
  const report::RunData run = report::loadRun(kResized);
  const std::vector<report::RunData> segments = report::segmentRuns(run);
  REQUIRE(segments.size() == 2);
  const report::RunData& first = segments[0];
  CHECK(first.worldSize() == 4);
  CHECK(first.batchSize() == 3);
  CHECK(first.segmentOf == &run);
  CHECK(first.segmentLabel == "segment 1/2 of lenet-resized-4to2, global batch 12");
  CHECK(first.batches.size() == 8);  // 4 ranks x epoch 1's steps 1 and 2
  for (const auto& row : first.batches) CHECK((row.epoch == 1 && row.step <= 2));
  REQUIRE(first.summary.epochs.size() == 1);
  CHECK(first.summary.epochs[0].steps == 2);
  CHECK(first.summary.epochs[0].fullEpochSteps == 4);  // 48 samples over 4 ranks of 3
  const report::RunData& second = segments[1];
  CHECK(second.worldSize() == 2);
  CHECK(second.batchSize() == 6);
  CHECK(second.batches.size() == 12);  // 2 ranks x (epoch 1's steps 3, 4 and epoch 2's 4)
  for (const auto& row : second.batches) CHECK(row.rank < 2);
  REQUIRE(second.summary.epochs.size() == 2);
  CHECK(second.summary.epochs[0].steps == 2);
  CHECK(second.summary.epochs[1].steps == 4);
  // Held from its first to its last step's history row: the segments do not overlap in time.
  REQUIRE(first.summary.finishedAt);
  REQUIRE(second.summary.startedAt);
  CHECK(*first.summary.finishedAt < *second.summary.startedAt);
  CHECK(report::wholeEpochSteps(48, 4, 3, false) == 4);
  CHECK(report::wholeEpochSteps(50, 4, 3, true) == 4);   // 12 a rank, 4 batches
  CHECK(report::wholeEpochSteps(50, 4, 3, false) == 5);  // 13 a rank, padded
}

TEST_CASE("Table 1 shows a resized run one segment a row, T never mixed", "[report][resized]") {
  const std::vector<report::RunData> runs = report::loadRuns({kResized, kBaseline});
  SECTION("the last epoch each segment trained") {
    const report::RunSelection selection = report::selectRuns(runs, std::nullopt);
    CHECK(selection.leftOut.empty());
    REQUIRE(selection.usable.size() == 3);  // two segments and the baseline
    const std::vector<report::ScalingRow> rows = report::scalingRows(selection);
    // Segment 1: epoch 1's steps 1-2 at 4 ranks, extrapolated to the epoch's 4: rank 3's 2 x 0.7 x 2.
    const report::ScalingRow* four = rowOf(rows, 4, 3);
    REQUIRE(four);
    CHECK(four->first().epoch.epoch == 1);
    CHECK(four->first().epoch.steps == 2);
    CHECK(four->first().epoch.extrapolated);
    CHECK(four->epochTimeS == Approx(2.8));
    CHECK(four->configuration.segment == "segment 1/2 of lenet-resized-4to2, global batch 12");
    CHECK_FALSE(four->baselineS);  // no single-rank run of batch 3
    // Segment 2: epoch 2 whole at 2 ranks: rank 1's 4 x 1.0; against the baseline of batch 6, T(1) = 8.0.
    const report::ScalingRow* two = nullptr;
    for (const report::ScalingRow& r : rows)
      if (r.configuration.world == 2) two = &r;
    REQUIRE(two);
    CHECK(two->configuration.batch == 6);
    CHECK(two->first().epoch.epoch == 2);
    CHECK_FALSE(two->first().epoch.extrapolated);
    CHECK(two->epochTimeS == Approx(4.0));
    REQUIRE(two->baselineS);
    CHECK(*two->baselineS == Approx(8.0));
    CHECK(two->configuration.setup.find("segment 2/2 of lenet-resized-4to2, global batch 12") != std::string::npos);
    // The table says so in its setup column, and prints T per segment.
    const report::Table table = report::timeSpeedupTable(rows);
    const auto column = [&table](const std::string& name) {
      return static_cast<size_t>(std::find(table.columns.begin(), table.columns.end(), name) - table.columns.begin());
    };
    int segmentRows = 0;
    for (const std::vector<report::Cell>& cells : table.rows) {
      const std::string setup = cells[column("setup")].text;
      const int64_t n = cells[column("N")].integer;
      // The single-rank baseline is repeated in every series it serves, the segments' too.
      if (setup.find("segment") == std::string::npos || n == 1) continue;
      ++segmentRows;
      CHECK(cells[column("T_s")].value == Approx(n == 4 ? 2.8 : 4.0));
    }
    CHECK(segmentRows == 2);
  }
  SECTION("--epoch 1: the epoch both segments trained, each from its own two steps") {
    const report::RunSelection selection = report::selectRuns(runs, 1);
    const std::vector<report::ScalingRow> rows = report::scalingRows(selection);
    const report::ScalingRow* four = rowOf(rows, 4, 3);
    const report::ScalingRow* two = rowOf(rows, 2, 6);
    REQUIRE(four);
    REQUIRE(two);
    CHECK(four->epochTimeS == Approx(2.8));
    // Steps 3 and 4 of 4 at 2 ranks: rank 1's 2 x 0.9, x 2. Mixed with segment 1's rows, rank 0 would have
    // four rows and ranks 2, 3 two: the epoch would not read at all.
    CHECK(two->first().epoch.steps == 2);
    CHECK(two->epochTimeS == Approx(3.6));
  }
  SECTION("--epoch 2: the first segment trained none of it and is left out, saying so") {
    const report::RunSelection selection = report::selectRuns(runs, 2);
    REQUIRE(selection.leftOut.size() == 1);
    CHECK(selection.leftOut[0].run->segmentLabel == "segment 1/2 of lenet-resized-4to2, global batch 12");
    CHECK(selection.leftOut[0].reason.find("trained no step of epoch 2") != std::string::npos);
    CHECK(rowOf(report::scalingRows(selection), 2, 6));
  }
}

TEST_CASE("a resized run that did not complete is left out whole, with its status", "[report][resized]") {
  std::vector<report::RunData> runs{report::loadRun(kResized)};
  runs[0].summary.status = dtbench::run::RunOutcome::kInterrupted;
  const report::RunSelection selection = report::selectRuns(runs, std::nullopt);
  CHECK(selection.usable.empty());
  REQUIRE(selection.leftOut.size() == 1);
  CHECK(selection.leftOut[0].run == &runs[0]);
  CHECK(selection.leftOut[0].reason.find("status interrupted") == 0);
}
