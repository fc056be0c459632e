// The stragglers table (experiments/report/runs/stragglers_table.h): one row per usable run, a single
// rank's rank-to-rank columns empty with the reason, never 0.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_selection.h"
#include "experiments/report/runs/stragglers_table.h"

using dtbench::report::Cell;
using dtbench::report::RunData;
using dtbench::report::RunSelection;
using dtbench::report::stragglersTable;
using dtbench::report::Table;
using dtbench::report::UsableRun;
using Catch::Matchers::Contains;

namespace {

dtbench::run::StepRecord stragglerRow(int64_t rank, int64_t epoch, int64_t step, double forward, double backward,
                                      double stepS) {
  dtbench::run::StepRecord row;
  row.rank = rank;
  row.epoch = epoch;
  row.step = step;
  row.samples = 8;
  row.forwardS = forward;
  row.backwardS = backward;
  row.stepS = stepS;
  return row;
}

const Cell& stragglerCell(const Table& table, size_t row, const std::string& column) {
  for (size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c] == column) return table.rows.at(row).at(c);
  FAIL("no column " << column);
  throw;
}

}  // namespace

TEST_CASE("stragglers table: two ranks and one rank", "[report][stragglers]") {
  RunData two;
  two.id = "two";
  two.path = "runs/two";
  two.settings.comm.connection.worldSize = 2;
  // Epoch 1 is left out by the chosen epoch 2. Epoch 2: rank 1 ends backward last in both steps.
  two.batches = {stragglerRow(0, 1, 1, 0.1, 0.1, 5.0),   stragglerRow(1, 1, 1, 0.1, 0.1, 5.0),
                 stragglerRow(0, 2, 1, 0.2, 0.4, 1.0),   stragglerRow(0, 2, 2, 0.2, 0.4, 1.0),
                 stragglerRow(1, 2, 1, 0.2, 0.5, 1.0),   stragglerRow(1, 2, 2, 0.2, 0.6, 1.2)};
  RunData one;
  one.id = "one";
  one.path = "runs/one";
  one.settings.comm.connection.worldSize = 1;
  one.batches = {stragglerRow(0, 2, 1, 0.2, 0.4, 1.0), stragglerRow(0, 2, 2, 0.2, 0.4, 1.0)};

  RunSelection selection;
  UsableRun u2, u1;
  u2.run = &two;
  u2.epoch.epoch = 2;
  u1.run = &one;
  u1.epoch.epoch = 2;
  selection.usable = {u2, u1};
  const Table table = stragglersTable(selection);
  CHECK(table.name == "stragglers");
  REQUIRE(table.rows.size() == 2);

  CHECK(stragglerCell(table, 0, "id").text == "two");
  CHECK(stragglerCell(table, 0, "steps").integer == 2);
  CHECK(stragglerCell(table, 0, "straggler_rank").integer == 1);
  CHECK(stragglerCell(table, 0, "straggler_share").value == Approx(1.0));
  CHECK(stragglerCell(table, 0, "last_to_finish_backward").text == "r1 2");
  // step_s gaps: step 1 0, step 2 0.2 (median 0.1); compute gaps 0.1 and 0.2 (median 0.15).
  CHECK(stragglerCell(table, 0, "step_gap_p50_s").value == Approx(0.1));
  CHECK(stragglerCell(table, 0, "step_gap_max_s").value == Approx(0.2));
  CHECK(stragglerCell(table, 0, "compute_gap_p50_s").value == Approx(0.15));
  // step_s {1, 1, 1, 1.2}: mean 1.05, s = √((3·0.05² + 0.15²)/3) = 0.1, CV 9.52 %; max/p50 1.2: noisy by CV only.
  CHECK(stragglerCell(table, 0, "step_cv_pct").value == Approx(100 * 0.1 / 1.05));
  CHECK(stragglerCell(table, 0, "noisy").text == "CV 9.52% > 5%");

  CHECK(stragglerCell(table, 1, "id").text == "one");
  for (const char* column : {"step_rank_cv_pct", "step_gap_p50_s", "step_gap_max_s", "compute_rank_cv_pct",
                             "compute_gap_p50_s", "compute_gap_max_s", "straggler_rank", "straggler_share"})
    CHECK(stragglerCell(table, 1, column).kind == Cell::Kind::kEmpty);
  CHECK(stragglerCell(table, 1, "last_to_finish_backward").text == "n/a: one rank");
  CHECK(stragglerCell(table, 1, "step_p50_s").value == Approx(1.0));
  CHECK(stragglerCell(table, 1, "noisy").text == "no");
  bool saysWhy = false;
  for (const std::string& note : table.notes) saysWhy = saysWhy || note.find("one rank has no rank-to-rank") != std::string::npos;
  CHECK(saysWhy);
}
