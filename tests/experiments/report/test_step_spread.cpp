// The step-time spread of one epoch (experiments/report/runs/step_spread.h) from hand-made batches.csv
// files, read back through run::readBatchesCsv; every expected value is worked out here by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/csv_file.h"
#include "experiments/report/runs/step_spread.h"
#include "run/step_record.h"

using dtbench::report::describeLastToFinish;
using dtbench::report::StepSpread;
using dtbench::report::stepSpread;
using Catch::Matchers::Contains;

namespace {

const char* const kSpreadHeader =
    "rank,epoch,step,samples,data_s,h2d_s,forward_s,backward_s,comm_total_s,comm_exposed_s,optimizer_s,step_s,"
    "bytes_sent,bytes_recv\n";

// The rows of a batches.csv holding `body` (after the header), read as the report reads them.
std::vector<dtbench::run::StepRecord> spreadFixtureRows(const std::string& name, const std::string& body) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtbench-step-spread-" + name);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "batches.csv").string();
  std::ofstream(path) << kSpreadHeader << body;
  auto rows = dtbench::run::readBatchesCsv(dtbench::common::CsvFile::read(path));
  std::filesystem::remove_all(dir);
  return rows;
}

std::vector<const dtbench::run::StepRecord*> pointersTo(const std::vector<dtbench::run::StepRecord>& rows) {
  std::vector<const dtbench::run::StepRecord*> pointers;
  for (const auto& row : rows) pointers.push_back(&row);
  return pointers;
}

// Three ranks, four steps. Columns: rank,epoch,step,samples,data,h2d,forward,backward,comm_total,comm_exposed,
// optimizer,step_s. Rank 1's step 4 is slow (1.6 s, backward 0.9); rank 2 waited 0.3 s for data in step 3.
const char* const kThreeRanks =
    "0,1,1,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
    "0,1,2,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
    "0,1,3,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
    "0,1,4,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
    "1,1,1,32,0,0,0.2,0.5,0,0,0,1.0,0,0\n"
    "1,1,2,32,0,0,0.2,0.5,0,0,0,1.0,0,0\n"
    "1,1,3,32,0,0,0.2,0.3,0,0,0,1.0,0,0\n"
    "1,1,4,32,0,0,0.2,0.9,0,0,0,1.6,0,0\n"
    "2,1,1,32,0,0,0.2,0.3,0,0,0,1.0,0,0\n"
    "2,1,2,32,0,0,0.2,0.3,0,0,0,1.0,0,0\n"
    "2,1,3,32,0.3,0,0.2,0.3,0,0,0,1.0,0,0\n"
    "2,1,4,32,0,0,0.2,0.3,0,0,0,1.0,0,0\n";

}  // namespace

TEST_CASE("step spread of three ranks by hand", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("three", kThreeRanks);
  const StepSpread s = stepSpread(pointersTo(rows), 3, "batches.csv");
  CHECK(s.ranks == 3);
  CHECK(s.steps == 4);
  CHECK(s.noRankSpread.empty());

  // step_s: eleven rows of 1.0 and one of 1.6. Mean 12.6/12 = 1.05; Σ(x − mean)² = 11·0.05² + 0.55² = 0.33;
  // s = √(0.33/11); CV = 100·s/1.05 = 16.4957 %. Sorted, p50 = (x[5] + x[6])/2 = 1.0; p99: h = 11·0.99 = 10.89,
  // 1.0 + 0.89·(1.6 − 1.0) = 1.534. max/p50 = 1.6.
  CHECK(s.step.overall.p50 == Approx(1.0));
  CHECK(s.step.overall.p99 == Approx(1.534));
  REQUIRE(s.step.overall.cvPct);
  CHECK(*s.step.overall.cvPct == Approx(100 * std::sqrt(0.33 / 11) / 1.05));
  CHECK(*s.step.overall.cvPct == Approx(16.4957).epsilon(1e-5));
  CHECK(*s.step.overall.maxOverP50 == Approx(1.6));
  // Across ranks: steps 1–3 all 1.0 (gap 0, CV 0), step 4 {1.0, 1.6, 1.0}: gap 0.6, mean 1.2,
  // s = √((0.04 + 0.16 + 0.04)/2) = √0.12, CV 28.87 %. Medians over {0, 0, 0, x}: 0.
  REQUIRE(s.step.gapP50S);
  CHECK(*s.step.gapP50S == Approx(0.0).margin(1e-12));
  CHECK(*s.step.gapMaxS == Approx(0.6));
  CHECK(*s.step.rankCvPctP50 == Approx(0.0).margin(1e-12));

  // compute = forward + backward: rank 0 0.6 ×4; rank 1 0.7, 0.7, 0.5, 1.1; rank 2 0.5 ×4. Sorted: 0.5 ×5,
  // 0.6 ×4, 0.7 ×2, 1.1: p50 = 0.6, p99 = 0.7 + 0.89·0.4 = 1.056. Gaps per step 0.2, 0.2, 0.1, 0.6:
  // median 0.2, max 0.6. Mean 7.4/12.
  REQUIRE(s.compute);
  CHECK(s.compute->overall.p50 == Approx(0.6));
  CHECK(s.compute->overall.p99 == Approx(1.056));
  const double mean = 7.4 / 12;
  const double squares = 5 * std::pow(0.5 - mean, 2) + 4 * std::pow(0.6 - mean, 2) + 2 * std::pow(0.7 - mean, 2) +
                         std::pow(1.1 - mean, 2);
  CHECK(*s.compute->overall.cvPct == Approx(100 * std::sqrt(squares / 11) / mean));
  CHECK(*s.compute->gapP50S == Approx(0.2));
  CHECK(*s.compute->gapMaxS == Approx(0.6));

  // End of backward (data + h2d + forward + backward): step 1 and 2: 0.6, 0.7, 0.5 -> rank 1; step 3: 0.6,
  // 0.5, 0.3 + 0.5 = 0.8 -> rank 2 (its data wait counts); step 4: 0.6, 1.1, 0.5 -> rank 1.
  CHECK(s.lastToFinish == std::vector<int64_t>{0, 3, 1});
  CHECK(s.tiedSteps == 0);
  REQUIRE(s.stragglerRank);
  CHECK(*s.stragglerRank == 1);
  CHECK(*s.stragglerShare == Approx(0.75));
  CHECK(describeLastToFinish(s) == "r1 3, r2 1");
  // nccl-tests' flags on step_s: CV 16.50 % > 5 % and a step 1.6× the median > 1.5×.
  CHECK(s.step.overall.noisyText() == "CV 16.50% > 5%; max 1.60x p50 > 1.5x");
}

TEST_CASE("the worked example of step_spread.h holds", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("worked",
                                      "0,1,1,8,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
                                      "0,1,2,8,0,0,0.3,0.5,0,0,0,1.2,0,0\n"
                                      "1,1,1,8,0,0,0.3,0.4,0,0,0,1.0,0,0\n"
                                      "1,1,2,8,0,0,0.2,0.4,0,0,0,1.4,0,0\n");
  const StepSpread s = stepSpread(pointersTo(rows), 2, "batches.csv");
  CHECK(*s.step.gapP50S == Approx(0.1));
  CHECK(*s.step.gapMaxS == Approx(0.2));
  CHECK(*s.compute->gapP50S == Approx(0.15));  // gaps 0.1 and 0.2
  CHECK(s.lastToFinish == std::vector<int64_t>{1, 1});
  CHECK(*s.stragglerRank == 0);
  CHECK(*s.stragglerShare == Approx(0.5));
  // Two ranks' CV in step 2: {1.2, 1.4}, mean 1.3, s = 0.1·√2 (n − 1 = 1); step 1: 0. Median (0 + x)/2.
  CHECK(*s.step.rankCvPctP50 == Approx(100 * 0.1 * std::sqrt(2.0) / 1.3 / 2));
}

TEST_CASE("one rank has no rank-to-rank spread and no straggler", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("single",
                                      "0,2,1,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
                                      "0,2,2,32,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
                                      "0,2,3,32,0,0,0.2,0.4,0,0,0,2.0,0,0\n");
  const StepSpread s = stepSpread(pointersTo(rows), 1, "batches.csv");
  CHECK(s.noRankSpread == "one rank");
  CHECK(s.noStraggler == "one rank");
  CHECK_FALSE(s.step.gapP50S);
  CHECK_FALSE(s.step.gapMaxS);
  CHECK_FALSE(s.step.rankCvPctP50);
  CHECK_FALSE(s.compute->gapMaxS);
  CHECK_FALSE(s.stragglerRank);
  CHECK_FALSE(s.stragglerShare);
  CHECK(s.lastToFinish.empty());
  // Across steps it still has a spread: {1, 1, 2}: mean 4/3, s = √((2·(1/3)² + (2/3)²)/2) = √(1/3), max/p50 = 2.
  CHECK(*s.step.overall.cvPct == Approx(100 * std::sqrt(1.0 / 3) / (4.0 / 3)));
  CHECK(*s.step.overall.maxOverP50 == Approx(2.0));
}

TEST_CASE("steps where ranks tie for last count for none", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("tied",
                                      "0,1,1,8,0,0,0.25,0.5,0,0,0,1.0,0,0\n"
                                      "0,1,2,8,0,0,0.25,0.5,0,0,0,1.0,0,0\n"
                                      "1,1,1,8,0,0,0.25,0.5,0,0,0,1.0,0,0\n"
                                      "1,1,2,8,0,0,0.25,0.75,0,0,0,1.0,0,0\n");
  const StepSpread s = stepSpread(pointersTo(rows), 2, "batches.csv");
  CHECK(s.tiedSteps == 1);
  CHECK(s.lastToFinish == std::vector<int64_t>{0, 1});
  CHECK(*s.stragglerRank == 1);
  CHECK(*s.stragglerShare == Approx(0.5));  // 1 of 2 steps
  CHECK(describeLastToFinish(s) == "r1 1, tied 1");
  CHECK(s.step.overall.noisyText() == "no");  // every step 1.0: CV 0, max = p50
}

TEST_CASE("ends of backward equal in decimals are a tie", "[report][step_spread]") {
  // 0.005 + 0.088 + 0.131 and 0.010 + 0.086 + 0.128 are both 0.224 s, but not in binary floating point.
  const auto rows = spreadFixtureRows("decimal-tie",
                                      "0,1,1,8,0.005,0,0.088,0.131,0,0,0,0.3,0,0\n"
                                      "1,1,1,8,0.010,0,0.086,0.128,0,0,0,0.3,0,0\n");
  const StepSpread s = stepSpread(pointersTo(rows), 2, "batches.csv");
  CHECK(s.tiedSteps == 1);
  CHECK(s.lastToFinish == std::vector<int64_t>{0, 0});
  CHECK_FALSE(s.stragglerRank);
  CHECK(s.noStraggler == "every step tied");
}

TEST_CASE("untimed phases leave the compute and the straggler out", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("untimed",
                                      "0,1,1,8,0,,,,0,0,,1.0,0,0\n"
                                      "1,1,1,8,0,,,,0,0,,1.5,0,0\n");
  const StepSpread s = stepSpread(pointersTo(rows), 2, "batches.csv");
  CHECK_FALSE(s.compute);
  CHECK(s.noStraggler == "phases not timed");
  CHECK(*s.step.gapMaxS == Approx(0.5));
}

TEST_CASE("a rank without a step another rank has is named", "[report][step_spread]") {
  const auto rows = spreadFixtureRows("missing",
                                      "0,1,1,8,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
                                      "0,1,2,8,0,0,0.2,0.4,0,0,0,1.0,0,0\n"
                                      "1,1,1,8,0,0,0.2,0.4,0,0,0,1.0,0,0\n");
  CHECK_THROWS_WITH(stepSpread(pointersTo(rows), 2, "runs/x/batches.csv"),
                    Contains("runs/x/batches.csv") && Contains("step 2 has no row for rank 1"));
  CHECK_THROWS_WITH(stepSpread(pointersTo(rows), 1, "runs/x/batches.csv"), Contains("outside the world of 1"));
  CHECK_THROWS_AS(stepSpread({}, 2, "runs/x/batches.csv"), std::invalid_argument);
}
