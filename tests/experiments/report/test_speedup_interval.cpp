// Table 1's speedup and efficiency carry T's 95 % interval (experiments/report/runs/scaling_tables.h,
// docs/report.md "Intervals of the speedup and efficiency"): the propagation worked by hand, the golden
// fixture's extrapolated baseline through the whole report and its figures' data, and an interval wider than
// its value flagged under the table.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/figures.h"
#include "experiments/report/report.h"
#include "experiments/report/report_table.h"
#include "experiments/report/runs/scaling_tables.h"

using dtbench::report::Cell;
using dtbench::report::formatCell;
using dtbench::report::Precision;
using dtbench::report::ratioHalfWidth;
using dtbench::report::ScalingRow;
using dtbench::report::Table;

namespace {

size_t intervalColumn(const Table& table, const std::string& name) {
  for (size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c] == name) return c;
  FAIL("no column " << name);
  throw std::logic_error("not reached: FAIL throws");
}

// The row of `table` with this batch and world size.
const std::vector<Cell>& batchWorldRow(const Table& table, int64_t batch, int64_t world) {
  for (const std::vector<Cell>& row : table.rows)
    if (row[intervalColumn(table, "batch")].integer == batch && row[intervalColumn(table, "N")].integer == world)
      return row;
  FAIL("no row B=" << batch << " N=" << world);
  throw std::logic_error("not reached: FAIL throws");
}

std::string printedCell(const Table& table, const std::vector<Cell>& row, const std::string& column) {
  return formatCell(row[intervalColumn(table, column)], Precision::kShort);
}

std::unique_ptr<dtbench::report::Report> fixtureReport(std::optional<int> epoch) {
  dtbench::report::ReportSettings settings;
  settings.directories = {std::string(DTBENCH_REPORT_FIXTURE) + "/runs"};
  settings.epoch = epoch;
  return dtbench::report::buildReport(settings);
}

}  // namespace

TEST_CASE("a ratio's interval: relative half-widths in quadrature", "[report][interval]") {
  // 10 ± 1 over 5 ± 0.5: 2 × √(0.1² + 0.1²) = 0.2√2.
  CHECK(*ratioHalfWidth(10, 1.0, 5, 0.5) == Approx(0.2 * std::sqrt(2.0)));
  // An exact term adds nothing: 2 × 0.1 either way.
  CHECK(*ratioHalfWidth(10, std::nullopt, 5, 0.5) == Approx(0.2));
  CHECK(*ratioHalfWidth(10, 1.0, 5, std::nullopt) == Approx(0.2));
  // 3 ± 0.3 over 4 ± 0.8: 0.75 × √(0.1² + 0.2²) = 0.75 × 0.2236068 = 0.1677051.
  CHECK(*ratioHalfWidth(3, 0.3, 4, 0.8) == Approx(0.1677051).epsilon(1e-6));
  // Neither has an interval: nor has the ratio.
  CHECK_FALSE(ratioHalfWidth(10, std::nullopt, 5, std::nullopt));
  // A numerator of 0 (a relative width without end) still has its absolute one: 1 / 4.
  CHECK(*ratioHalfWidth(0, 1.0, 4, std::nullopt) == Approx(0.25));
  // A denominator's interval wider than itself: 7000 over 3500 ± 10000 s is 2 ± 2 × 10000/3500, wider than 2.
  CHECK(*ratioHalfWidth(7000, std::nullopt, 3500, 10000.0) == Approx(2 * 10000.0 / 3500));
}

TEST_CASE("the fixture's extrapolated baseline gives its series' speedup an interval", "[report][interval]") {
  const auto report = fixtureReport(std::nullopt);
  const Table& t1 = report->table("time_speedup");
  // Epoch 2 (fixture/EXPECTED.md): T(1) at B = 64 is 1.740 ± 0.179690 (2 of 4 steps), T(2) = 0.930 measured.
  // speedup = 1.740/0.930 = 1.870968 ± 1.870968 × 0.179690/1.740 = 0.193215; efficiency ± 0.096608.
  const std::vector<Cell>& b64n2 = batchWorldRow(t1, 64, 2);
  CHECK(b64n2[intervalColumn(t1, "speedup")].value == Approx(1.870968).epsilon(1e-6));
  CHECK(b64n2[intervalColumn(t1, "speedup_pm")].value == Approx(0.193215).epsilon(1e-5));
  CHECK(b64n2[intervalColumn(t1, "efficiency_pm")].value == Approx(0.096608).epsilon(1e-5));
  // Markdown: each to its interval's second significant digit, as T and T_pm_s are.
  CHECK(printedCell(t1, b64n2, "speedup") == "1.87");
  CHECK(printedCell(t1, b64n2, "speedup_pm") == "0.19");
  CHECK(printedCell(t1, b64n2, "efficiency") == "0.935");
  CHECK(printedCell(t1, b64n2, "efficiency_pm") == "0.097");
  // The baseline's own row: T has its interval, T(1)/T(1) is 1 exactly.
  const std::vector<Cell>& b64n1 = batchWorldRow(t1, 64, 1);
  CHECK(printedCell(t1, b64n1, "T_pm_s") == "0.18");
  CHECK(b64n1[intervalColumn(t1, "speedup")].value == 1.0);
  CHECK(b64n1[intervalColumn(t1, "speedup_pm")].kind == Cell::Kind::kEmpty);
  CHECK(b64n1[intervalColumn(t1, "efficiency_pm")].kind == Cell::Kind::kEmpty);
  // Measured rows of a measured baseline have none, and print as they always did.
  for (const int64_t world : {1, 2}) {
    const std::vector<Cell>& row = batchWorldRow(t1, 32, world);
    CHECK(row[intervalColumn(t1, "speedup_pm")].kind == Cell::Kind::kEmpty);
    CHECK(row[intervalColumn(t1, "efficiency_pm")].kind == Cell::Kind::kEmpty);
    CHECK_FALSE(row[intervalColumn(t1, "speedup")].shortDecimals);
  }
  CHECK(printedCell(t1, batchWorldRow(t1, 32, 2), "speedup") == "1.53");
  for (const std::vector<Cell>& row : t1.rows)
    CHECK(row[intervalColumn(t1, "check")].text.find("interval") == std::string::npos);

  // The figures' data: the same interval on the B = 64 series' N = 2 point, none elsewhere.
  const nlohmann::json figures =
      dtbench::report::figureData(report->runs, report->selection, report->scaling, std::nullopt);
  int withInterval = 0;
  for (const nlohmann::json& series : figures.at("speedup"))
    for (const nlohmann::json& point : series.at("points")) {
      const bool expected = series.at("batch") == 64 && point.at("N") == 2;
      CHECK(point.contains("speedup_pm") == expected);
      if (expected) {
        CHECK(point.at("speedup_pm").get<double>() == Approx(0.193215).epsilon(1e-5));
        ++withInterval;
      }
    }
  CHECK(withInterval == 1);
  for (const nlohmann::json& bar : figures.at("compute_comm")) CHECK_FALSE(bar.contains("T_pm_s"));  // measured
}

TEST_CASE("with --epoch 1 the warm-up step widens the speedup's interval", "[report][interval]") {
  const auto report = fixtureReport(1);
  const Table& t1 = report->table("time_speedup");
  // T(1) = 1.920 ± 4 · 12.706 · 0.040 · √(1/2) = 1.437520, T(2) = 1.000: speedup 1.920 ± 1.437520 (the
  // baseline's relative width, 0.748708, times 1.920), efficiency 0.960 ± 0.718760.
  const std::vector<Cell>& row = batchWorldRow(t1, 64, 2);
  CHECK(row[intervalColumn(t1, "speedup_pm")].value == Approx(1.437520).epsilon(1e-5));
  CHECK(row[intervalColumn(t1, "efficiency_pm")].value == Approx(0.718760).epsilon(1e-5));
  CHECK(printedCell(t1, row, "speedup") == "1.9");
  CHECK(printedCell(t1, row, "speedup_pm") == "1.4");
  CHECK(printedCell(t1, row, "efficiency") == "0.96");
  CHECK(printedCell(t1, row, "efficiency_pm") == "0.72");
  CHECK(row[intervalColumn(t1, "check")].text.empty());  // 1.44 < 1.92: not wider than the value
}

TEST_CASE("an interval wider than its value is flagged under Table 1", "[report][interval]") {
  // A baseline extrapolated from a few uneven steps: T(1) = 7000 ± 20000 s; T(2) = 3500 s measured.
  dtbench::report::RunData run;
  dtbench::report::UsableRun usable;
  usable.run = &run;
  usable.epoch.epoch = 2;
  usable.epoch.steps = 3;
  usable.epoch.fullSteps = 390;
  usable.epoch.extrapolated = true;
  usable.epoch.ranks.resize(1);
  const auto rowWith = [&](int world, double seconds, std::optional<double> half) {
    ScalingRow row;
    row.configuration.model = "lenet";
    row.configuration.dataset = "synthetic";
    row.configuration.device = "cpu";
    row.configuration.mode = "ddp";
    row.configuration.setup = "gloo/ring ssgd";
    row.configuration.batch = 64;
    row.configuration.world = world;
    row.configuration.nodes = 1;
    row.repeats = {&usable};
    row.epochTimeS = seconds;
    row.epochTimeHalfWidthS = half;
    row.baselineS = 7000;
    row.baselineHalfWidthS = 20000;
    row.isBaseline = world == 1;
    return row;
  };
  const Table t1 = dtbench::report::timeSpeedupTable({rowWith(1, 7000, 20000.0), rowWith(2, 3500, std::nullopt)});
  // speedup 2 ± 2 × 20000/7000 = 5.714286, efficiency 1 ± 2.857143.
  const std::vector<Cell>& n2 = batchWorldRow(t1, 64, 2);
  CHECK(n2[intervalColumn(t1, "speedup_pm")].value == Approx(40000.0 / 7000));
  CHECK(printedCell(t1, n2, "speedup") == "2.0");
  CHECK(printedCell(t1, n2, "speedup_pm") == "5.7");
  CHECK(printedCell(t1, n2, "efficiency") == "1.0");
  CHECK(printedCell(t1, n2, "efficiency_pm") == "2.9");
  CHECK(n2[intervalColumn(t1, "check")].text == "interval > value");
  const std::vector<Cell>& n1 = batchWorldRow(t1, 64, 1);
  CHECK(printedCell(t1, n1, "T_s") == "7000");
  CHECK(printedCell(t1, n1, "T_pm_s") == "20000");
  CHECK(n1[intervalColumn(t1, "check")].text == "interval > value");
  // One note names both rows as printed, with the terms' relative widths (20000/7000 = 290 %).
  int notes = 0;
  for (const std::string& note : t1.notes)
    if (note.rfind("- `interval > value`: ", 0) == 0) {
      ++notes;
      CHECK(note.find("lenet B=64 N=1: T_s 7000 ± 20000 s; lenet B=64 N=2: speedup 2.0 ± 5.7 (T(1) ± 290 %, T(N) "
                      "no interval).") != std::string::npos);
      CHECK(note.find("Measure more steps") != std::string::npos);
    }
  CHECK(notes == 1);

  // A narrower interval is not flagged: T(1) = 7000 ± 700.
  ScalingRow narrow = rowWith(2, 3500, std::nullopt);
  narrow.baselineHalfWidthS = 700;
  const Table calm = dtbench::report::timeSpeedupTable({narrow});
  CHECK(batchWorldRow(calm, 64, 2)[intervalColumn(calm, "speedup_pm")].value == Approx(0.2));
  CHECK(batchWorldRow(calm, 64, 2)[intervalColumn(calm, "check")].text.empty());
  for (const std::string& note : calm.notes) CHECK(note.find("`interval > value`:") == std::string::npos);
}
