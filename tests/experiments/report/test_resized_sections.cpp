// The per-run sections of dtbench report for a run resized by --resume (resized_fixture/runs: 4 ranks of 3,
// then 2 of 6 from global step 3, of an epoch of 4 steps): the batch-time table and the figures' batch times
// take it one segment at a time, never one world's rows with another's; its loss curve marks where each
// segment starts; the job table lists it once, saying it was resized, with each segment's ranks for the
// time that segment held them (docs/report.md, "Resized runs").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/figures.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_segments.h"
#include "experiments/report/runs/run_selection.h"
#include "experiments/report/runs/run_tables.h"
#include "experiments/report/runs/scaling_tables.h"

namespace report = dtbench::report;

namespace {

const std::string kResizedSectionsRun = std::string(DTBENCH_REPORT_RESIZED_FIXTURE) + "/runs/lenet-resized-4to2";
const std::string kResizedSectionsBaseline = std::string(DTBENCH_REPORT_RESIZED_FIXTURE) + "/runs/lenet-b6-n1";

size_t sectionColumn(const report::Table& table, const std::string& name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  REQUIRE(it != table.columns.end());
  return static_cast<size_t>(it - table.columns.begin());
}

// The table's rows as "id N epoch batches", in order.
std::vector<std::string> sectionBatchTimeRows(const report::Table& table) {
  std::vector<std::string> rows;
  for (const std::vector<report::Cell>& cells : table.rows) {
    const auto number = [&](const char* column) { return std::to_string(cells[sectionColumn(table, column)].integer); };
    rows.push_back(cells[sectionColumn(table, "id")].text + " N=" + number("N") + " epoch " + number("epoch") + ", " +
                   number("batches") + " batches");
  }
  return rows;
}

}  // namespace

TEST_CASE("the batch-time table shows a resized run one segment a row", "[report][resized]") {
  const std::vector<report::RunData> runs = report::loadRuns({kResizedSectionsRun});
  SECTION("each segment's last epoch: its own world's rows only") {
    const report::RunSelection selection = report::selectRuns(runs, std::nullopt);
    CHECK(sectionBatchTimeRows(report::batchTimesTable(runs, selection, std::nullopt)) ==
          std::vector<std::string>{"lenet-resized-4to2 segment 1/2 N=4 epoch 1, 8 batches",
                                   "lenet-resized-4to2 segment 2/2 N=2 epoch 2, 8 batches"});
  }
  SECTION("--epoch 1, which both trained: 4 ranks x 2 steps and 2 ranks x 2 steps, never 12 rows at N=4") {
    const report::RunSelection selection = report::selectRuns(runs, 1);
    CHECK(sectionBatchTimeRows(report::batchTimesTable(runs, selection, 1)) ==
          std::vector<std::string>{"lenet-resized-4to2 segment 1/2 N=4 epoch 1, 8 batches",
                                   "lenet-resized-4to2 segment 2/2 N=2 epoch 1, 4 batches"});
  }
  SECTION("a resized run left out of the tables (interrupted in epoch 2) is split the same way") {
    std::vector<report::RunData> cut = runs;
    cut[0].summary.status = dtbench::run::RunOutcome::kInterrupted;
    cut[0].summary.epochs.pop_back();  // epoch 2 unfinished: its rows count on from epoch 1's steps
    const report::RunSelection selection = report::selectRuns(cut, std::nullopt);
    REQUIRE(selection.usable.empty());
    CHECK(sectionBatchTimeRows(report::batchTimesTable(cut, selection, std::nullopt)) ==
          std::vector<std::string>{"lenet-resized-4to2 segment 1/2 N=4 epoch 1, 8 batches",
                                   "lenet-resized-4to2 segment 2/2 N=2 epoch 2, 8 batches"});
  }
}

TEST_CASE("the figures draw a resized run's batch times and curve a segment at a time", "[report][resized]") {
  const std::vector<report::RunData> runs = report::loadRuns({kResizedSectionsRun, kResizedSectionsBaseline});
  const report::RunSelection selection = report::selectRuns(runs, std::nullopt);
  const nlohmann::json data = report::figureData(runs, selection, report::scalingRows(selection), std::nullopt);
  std::vector<std::string> ids;
  for (const nlohmann::json& entry : data["batch_times"])
    ids.push_back(entry["id"].get<std::string>() + ": " + std::to_string(entry["step_s"].size()));
  CHECK(ids == std::vector<std::string>{"lenet-b6-n1: 4", "lenet-resized-4to2 segment 1/2: 8",
                                        "lenet-resized-4to2 segment 2/2: 8"});
  // The curve stays the run's (one time axis, bytes counted on), its batches split where segment 2 starts:
  // train_history.log's third Batch row is global step 3.
  const auto curve = std::find_if(data["curves"].begin(), data["curves"].end(),
                                  [](const nlohmann::json& c) { return c["id"] == "lenet-resized-4to2"; });
  REQUIRE(curve != data["curves"].end());
  CHECK((*curve)["batches"]["loss"].size() == 8);
  CHECK((*curve)["segments"] == nlohmann::json::parse(R"([{"label": "segment 1/2: N=4 x B=3", "first_batch": 0},
                                                          {"label": "segment 2/2: N=2 x B=6", "first_batch": 2}])"));
  const auto plain = std::find_if(data["curves"].begin(), data["curves"].end(),
                                  [](const nlohmann::json& c) { return c["id"] == "lenet-b6-n1"; });
  REQUIRE(plain != data["curves"].end());
  CHECK_FALSE(plain->contains("segments"));
}

TEST_CASE("the job table lists a resized run once, saying so, with each segment's ranks for its time",
          "[report][resized]") {
  std::vector<report::RunData> runs = report::loadRuns({kResizedSectionsRun});
  // started_at 0 (relative), segment 2's previous_step_at 2.0 and first_step_at 9.5, resumed_at 8.0, finished_at
  // 16.1: segment 1 held 4 ranks 2.0 s, segment 2 held 2 ranks 8.1 s; not 4 ranks for all 16.1 s (64.4).
  const std::vector<double> held = report::segmentHeldSeconds(runs[0], *runs[0].summary.finishedAt);
  REQUIRE(held.size() == 2);
  CHECK(held[0] == Approx(2.0));
  CHECK(held[1] == Approx(8.1));
  runs[0].settings.device = dtbench::run::DeviceKind::kCuda;
  const report::Table table = report::jobTable(runs);
  REQUIRE(table.rows.size() == 1);
  const std::vector<report::Cell>& row = table.rows[0];
  CHECK(row[sectionColumn(table, "id")].text == "lenet-resized-4to2");
  CHECK(row[sectionColumn(table, "ranks")].integer == 4);
  const std::string configuration = row[sectionColumn(table, "configuration")].text;
  CHECK(configuration.find(", resized: N=4 x B=3 from step 1, N=2 x B=6 from step 3") != std::string::npos);
  CHECK(row[sectionColumn(table, "duration_s")].value == Approx(16.1));
  CHECK(row[sectionColumn(table, "gpu_seconds")].value == Approx(4 * 2.0 + 2 * 8.1));
}
