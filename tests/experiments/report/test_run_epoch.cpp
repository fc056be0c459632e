// An epoch cut short and extrapolated (experiments/report/runs/run_epoch.h): T's 95 % interval from the
// spread of its measured steps, worked by hand, and how the Markdown table rounds T to it.
#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>

#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_epoch.h"

using dtbench::report::Cell;
using dtbench::report::RankSums;
using dtbench::report::RunEpoch;

namespace {

// One rank whose measured steps (step_s − data_s) are `steps`, out of `full`.
RunEpoch epochOf(std::initializer_list<double> steps, int64_t full) {
  RunEpoch e;
  RankSums r;
  for (const double s : steps) {
    ++r.steps;
    r.trainS += s;
    r.trainSquares += s * s;
  }
  e.ranks = {r};
  e.steps = r.steps;
  e.fullSteps = full;
  e.extrapolated = full > e.steps;
  e.scale = static_cast<double>(full) / static_cast<double>(e.steps);
  return e;
}

}  // namespace

TEST_CASE("an extrapolated T has a 95 % interval from the spread of its measured steps", "[report][epoch]") {
  // Steps 1, 2, 3, 4 s of 100: mean 2.5, s = 1.2910, t(3) = 3.182, factor sqrt(0.96).
  const RunEpoch e = epochOf({1, 2, 3, 4}, 100);
  CHECK(e.epochTimeS() == Approx(250));
  REQUIRE(e.extrapolationHalfWidthS());
  CHECK(*e.extrapolationHalfWidthS() == Approx(100 * 3.182 * std::sqrt(5.0 / 3.0) / 2 * std::sqrt(0.96)));
  // Equal steps have no spread; a whole epoch is measured; one step has no spread to estimate.
  CHECK(*epochOf({2, 2, 2}, 30).extrapolationHalfWidthS() == Approx(0).margin(1e-12));
  CHECK_FALSE(epochOf({1, 2, 3, 4}, 4).extrapolationHalfWidthS());
  CHECK_FALSE(epochOf({2}, 30).extrapolationHalfWidthS());
  // Beyond the table, the expansion: 101 steps give t(100) = 1.984.
  std::initializer_list<double> many = {1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1,
                                        3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3,
                                        1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1,
                                        3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 2};
  const RunEpoch wide = epochOf(many, 1000000);
  const double n = 101, mean = 202.0 / n;  // 50 ones, 50 threes and a 2
  const double s = std::sqrt((50 * 1 + 50 * 9 + 4 - n * mean * mean) / (n - 1));
  CHECK(*wide.extrapolationHalfWidthS() == Approx(1e6 * 1.984 * s / std::sqrt(n) * std::sqrt(1 - n / 1e6)).epsilon(1e-3));
}

TEST_CASE("Markdown prints a rounded cell to the digits it supports, CSV keeps them all", "[report][epoch]") {
  using dtbench::report::formatCell;
  using dtbench::report::Precision;
  CHECK(formatCell(Cell::seconds(1563.1234).roundedTo(-1), Precision::kShort) == "1560");
  CHECK(formatCell(Cell::seconds(37.24).roundedTo(0), Precision::kShort) == "37");
  CHECK(formatCell(Cell::seconds(0.0123456).roundedTo(3), Precision::kShort) == "0.012");
  CHECK(formatCell(Cell::seconds(1563.1234).roundedTo(-1), Precision::kLong) == "1563.123400");
  CHECK(formatCell(Cell::seconds(1563.1234), Precision::kShort) == "1563.123");
}
