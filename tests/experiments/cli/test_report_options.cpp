#include "catch_torch.h"
#include "common/usage_error.h"
#include "option_test_helpers.h"
#include "experiments/cli/report_options.h"
#include "experiments/report/report.h"

#include <cctype>
#include <string>
#include <vector>

using dtbench::common::UsageError;
using dtbench::experiments::parseReportOptions;
using dtbench::experiments::ReportFormat;
using dtbench::experiments::ReportOptions;

namespace {

std::string reportErrorOf(const std::vector<std::string>& args) {
  return dtbench::test::usageErrorOf([](const auto& a) { return parseReportOptions(a); }, args);
}

}  // namespace

TEST_CASE("report's defaults are the options' own, and --help shows them and every table", "[cli][report]") {
  const ReportOptions defaults;
  const ReportOptions o = parseReportOptions({"runs"});
  CHECK(o.directories == std::vector<std::string>{"runs"});
  CHECK(o.format == defaults.format);
  CHECK(o.tables.empty());
  CHECK_FALSE(o.epoch.has_value());
  CHECK_FALSE(o.gpuHourPrice.has_value());
  CHECK_FALSE(o.targetAccuracy.has_value());
  CHECK(o.ceilingPath.empty());
  const std::string help = dtbench::test::asWords(parseReportOptions({"--help"}).helpText);
  CHECK_THAT(help, Catch::Contains("(default: md)"));
  // --table's list is the report's table registry, every name of it.
  for (const dtbench::report::TableName& table : dtbench::report::reportTableNames())
    CHECK_THAT(help, Catch::Contains(table.name));
  CHECK_THAT(help, Catch::Contains("traffic_matrix_<run id>"));
}

TEST_CASE("report's flags go through their rows", "[cli][report]") {
  const ReportOptions given =
      parseReportOptions({"a", "b", "--format", "csv", "--table", "time_speedup,traffic_matrix_r1,trace_skipped",
                          "--epoch", "2", "--gpu-hour-price", "1.5", "--target-accuracy", "0.9", "--sacct", "s1",
                          "--sacct", "s2", "--csv-dir", "out"});
  CHECK(given.directories == std::vector<std::string>{"a", "b"});
  CHECK(given.format == ReportFormat::kCsv);
  CHECK(given.tables.size() == 3);
  CHECK(given.epoch == 2);
  CHECK(given.gpuHourPrice == 1.5);
  CHECK(given.targetAccuracy == 0.9);
  CHECK(given.sacctFiles == std::vector<std::string>{"s1", "s2"});
  CHECK(given.csvDir == "out");
  CHECK(parseReportOptions({"--trace", "t.csv"}).directories.empty());  // a trace alone is enough
  CHECK_THAT(reportErrorOf({"runs", "--table", "bogus"}),
             Catch::Contains("--table: no table 'bogus'") && Catch::Contains("time_speedup"));
  CHECK_THAT(reportErrorOf({"runs", "--format", "xml"}), Catch::Contains("--format must be md, csv or json"));
  CHECK(reportErrorOf({"runs", "--epoch", "0"}) == "--epoch counts from 1, got 0");
  CHECK(reportErrorOf({"runs", "--gpu-hour-price", "0"}) == "--gpu-hour-price must be positive");
  CHECK_THAT(reportErrorOf({"runs", "--target-accuracy", "90"}), Catch::Contains("--target-accuracy is a fraction"));
  CHECK_THAT(reportErrorOf({"runs", "--trace-columns", "a=b"}), Catch::Contains("name one with --trace"));
  CHECK_THAT(reportErrorOf({}), Catch::Contains("name at least one run directory"));
}
