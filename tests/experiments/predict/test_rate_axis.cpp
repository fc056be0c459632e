// The axis of predict --vary (experiments/predict/rate_axis.h, rate_axis_tables.h): its parse, good and
// bad; the hardware it sets, exactly the one number; the crossings of two series, interpolated on the
// axis's scale; and the two tables on a hand-made step whose compressed and uncompressed steps cross.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "common/usage_error.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/rate_axis.h"
#include "experiments/predict/rate_axis_tables.h"
#include "experiments/predict/step_model.h"
#include "hand_step.h"

using namespace dtbench::predict;
using Catch::Matchers::Contains;
using dtbench::common::UsageError;
using dtbench::report::Cell;
using dtbench::report::Table;

namespace {

Hardware axisHardware() {
  return hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 2,
      "intra_node": {"bandwidth_gbit_s": 8, "latency_us": 5},
      "inter_node": {"bandwidth_gbit_s": 0.8, "latency_us": 50}, "compute_scale": 1.5})"),
                          "axis.json");
}

// Every key of `json` (one level into objects) and its value, as "key=value" text.
std::vector<std::string> fieldsOf(const nlohmann::json& json) {
  std::vector<std::string> fields;
  for (const auto& item : json.items())
    if (item.value().is_object())
      for (const auto& inner : item.value().items())
        fields.push_back(item.key() + "." + inner.key() + "=" + inner.value().dump());
    else
      fields.push_back(item.key() + "=" + item.value().dump());
  return fields;
}

}  // namespace

TEST_CASE("The axis of predict --vary: a key of the hardware file and its values, sorted", "[predict][rate_axis]") {
  const RateAxis axis = parseRateAxis("inter_node.bandwidth_gbit_s=100,1,25,0.5");
  CHECK(axis.key == "inter_node.bandwidth_gbit_s");
  CHECK(axis.values == std::vector<double>{0.5, 1, 25, 100});
  CHECK(axis.scale == AxisScale::kReciprocal);
  const RateAxis latency = parseRateAxis("intra_node.latency_us=0,2.5,1e3");
  CHECK(latency.values == std::vector<double>{0, 2.5, 1000});  // a latency of 0 is a hardware file's too
  CHECK(latency.scale == AxisScale::kLinear);
  CHECK(parseRateAxis("compute_scale=2").values == std::vector<double>{2});
  for (const std::string& key : rateAxisKeys()) CHECK(parseRateAxis(key + "=1").key == key);
  CHECK(rateAxisKeys().size() == 8);
}

TEST_CASE("The axis of predict --vary refuses what the hardware file would, naming what to give",
          "[predict][rate_axis]") {
  // An unknown key (the spelling of another tool) lists every key it takes.
  try {
    parseRateAxis("inter_node.bandwidth_gbps=1,10");
    FAIL("an unknown key was taken");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("no hardware number 'inter_node.bandwidth_gbps'"));
    for (const std::string& key : rateAxisKeys()) CHECK_THAT(what, Contains(key));
  }
  CHECK_THROWS_WITH(parseRateAxis("ranks_per_node=2,4"), Contains("no hardware number 'ranks_per_node'"));
  CHECK_THROWS_WITH(parseRateAxis("=1,2"), Contains("no key"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us"), Contains("gives no values"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us="), Contains("gives no values"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=1,,2"), Contains("empty entry"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=1,2,"), Contains("empty entry"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=1,fast"), Contains("'fast' is not a number"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=10us"), Contains("'10us' is not a number"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=nan"), Contains("is not a number"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.latency_us=-1"), Contains("takes a number from 0"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.bandwidth_gbit_s=-5,10"), Contains("takes a number above 0"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.bandwidth_gbit_s=0,10"), Contains("takes a number above 0"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.bandwidth_gbit_s=1e7"), Contains("at most 1e+06"));
  CHECK_THROWS_WITH(parseRateAxis("inter_node.bandwidth_gbit_s=10,1,10"), Contains("names 10 twice"));
  std::string many = "compute_scale=1";
  for (int i = 2; i <= 64; ++i) many += "," + std::to_string(i);
  CHECK(parseRateAxis(many).values.size() == 64);
  CHECK_THROWS_WITH(parseRateAxis(many + ",65"), Contains("more than 64 values"));
}

TEST_CASE("A value on the axis changes that number of the hardware and nothing else", "[predict][rate_axis]") {
  const Hardware h = axisHardware();
  const std::vector<std::pair<std::string, double>> cases = {{"inter_node.bandwidth_gbit_s", 25},
                                                             {"inter_node.latency_us", 7},
                                                             {"inter_node.message_overhead_us", 3},
                                                             {"intra_node.bandwidth_gbit_s", 400},
                                                             {"intra_node.latency_us", 0},
                                                             {"intra_node.message_overhead_us", 0.5},
                                                             {"compute_scale", 0.25},
                                                             {"link_rate_bps", 1e9}};
  REQUIRE(cases.size() == rateAxisKeys().size());
  for (const auto& [key, value] : cases) {
    INFO(key);
    const nlohmann::json before = toJson(h), after = toJson(withAxisValue(h, key, value));
    // The number reads back as set...
    const size_t dot = key.find('.');
    const nlohmann::json& field =
        dot == std::string::npos ? after.at(key) : after.at(key.substr(0, dot)).at(key.substr(dot + 1));
    CHECK(field.get<double>() == Approx(value).margin(1e-12));
    // ...and every other field is as it was.
    nlohmann::json expected = before;
    if (dot == std::string::npos)
      expected[key] = field;
    else
      expected[key.substr(0, dot)][key.substr(dot + 1)] = field;
    CHECK(fieldsOf(after) == fieldsOf(expected));
  }
  // The in-memory numbers, in the model's units.
  CHECK(withAxisValue(h, "inter_node.bandwidth_gbit_s", 100).inter.bytesPerSecond == Approx(100e9 / 8));
  CHECK(withAxisValue(h, "inter_node.bandwidth_gbit_s", 100).intra.bytesPerSecond == h.intra.bytesPerSecond);
  CHECK(withAxisValue(h, "intra_node.latency_us", 2).intra.latencyS == Approx(2e-6));
  CHECK(withAxisValue(h, "intra_node.latency_us", 2).inter.latencyS == h.inter.latencyS);
  CHECK_FALSE(h.intraOverheadGiven);
  CHECK(withAxisValue(h, "intra_node.message_overhead_us", 0).intraOverheadGiven);
  CHECK_THROWS_AS(withAxisValue(h, "nodes", 4), std::invalid_argument);
}

TEST_CASE("Crossings: interpolated on the axis's scale, equal points and runs, none", "[predict][rate_axis]") {
  SECTION("a straight-line pair crossing between two values, linearly") {
    const std::vector<double> x{1, 2, 3, 4}, a{1, 2, 3, 4}, b{2.5, 2.5, 2.5, 2.5};
    const std::vector<Crossing> c = findCrossings(x, a, b, AxisScale::kLinear);
    REQUIRE(c.size() == 1);
    CHECK(c[0].interpolated);
    CHECK(c[0].at == Approx(2.5));
    CHECK(c[0].from == 2);
    CHECK(c[0].to == 3);
    CHECK(c[0].below == -1);  // a faster below
    CHECK(c[0].above == 1);
  }
  SECTION("steps of the form c + S / bandwidth cross exactly in 1 / bandwidth") {
    // a = 1 + 8/x (uncompressed), b = 2 + 4/x (half the bytes, a codec of 1): equal at x = 4, sampled
    // geometrically around it.
    const std::vector<double> x{1, 2, 8, 16};
    std::vector<double> a, b;
    for (const double v : x) {
      a.push_back(1 + 8 / v);
      b.push_back(2 + 4 / v);
    }
    const std::vector<Crossing> c = findCrossings(x, a, b, AxisScale::kReciprocal);
    REQUIRE(c.size() == 1);
    CHECK(c[0].at == Approx(4).epsilon(1e-12));
    CHECK(c[0].below == 1);  // b (compressed) faster at low bandwidth
    CHECK(c[0].above == -1);
    // The same samples interpolated linearly in x miss it: 2 + 6 × 1/1.5 = 6.
    CHECK(findCrossings(x, a, b, AxisScale::kLinear)[0].at == Approx(6));
  }
  SECTION("no sign change: no crossing") {
    const std::vector<double> x{1, 10, 100};
    CHECK(findCrossings(x, {3, 2, 1}, {1, 0.5, 0.1}, AxisScale::kReciprocal).empty());
    CHECK(findCrossings(x, {1, 2, 3}, {1.5, 2.5, 3.5}, AxisScale::kLinear).empty());
  }
  SECTION("equal at one value, and equal from a value on") {
    const std::vector<double> x{1, 2, 3, 4, 5};
    const std::vector<Crossing> point = findCrossings(x, {1, 2, 3, 4, 5}, {3, 3, 3, 3, 3}, AxisScale::kLinear);
    REQUIRE(point.size() == 1);
    CHECK_FALSE(point[0].interpolated);
    CHECK(point[0].at == 3);
    CHECK(point[0].from == 3);
    CHECK(point[0].to == 3);
    CHECK(point[0].below == -1);
    CHECK(point[0].above == 1);
    // A step whose communication is hidden either way is the same step (within 1e-9).
    const std::vector<Crossing> run =
        findCrossings(x, {5, 3, 2, 2, 2}, {4, 4, 2, 2 * (1 + 1e-12), 2}, AxisScale::kReciprocal);
    REQUIRE(run.size() == 2);
    CHECK(run[0].interpolated);
    CHECK(run[0].at == Approx(1 / 0.75));  // in 1/x: 1 + (0.5 − 1) × 1/2 = 0.75
    CHECK_FALSE(run[1].interpolated);
    CHECK(run[1].from == 3);
    CHECK(run[1].to == 5);
    CHECK(run[1].below == -1);
    CHECK(run[1].above == 0);
    const std::vector<Crossing> all = findCrossings({1, 2}, {1, 1}, {1, 1}, AxisScale::kLinear);
    REQUIRE(all.size() == 1);
    CHECK(all[0].from == 1);
    CHECK(all[0].to == 2);
    CHECK(all[0].below == 0);
    CHECK(all[0].above == 0);
  }
  CHECK_THROWS_AS(findCrossings({1, 2}, {1}, {1, 2}, AxisScale::kLinear), std::invalid_argument);
}

namespace {

// One float32 parameter of 4 MiB, ready only at backward's end (its all-reduce all exposed); compute
// 50 ms; the step's own compression fp16 with 20 ms of encoding and decoding.
MeasuredStep axisStep() {
  MeasuredStep run = handMeasuredStep({{"p0", 1 << 20, 4, 0.02, "float32", {}}}, 10000);
  run.settings.sync.compress = dtbench::run::Compression::kFp16;
  run.described = true;
  run.compressS = 0.02;
  run.backwardS = 0.02;
  run.computeS = 0.05;
  return run;
}

}  // namespace

TEST_CASE("The rate_axis and crossings tables of fp16 against none along the inter-node bandwidth",
          "[predict][rate_axis]") {
  const MeasuredStep run = axisStep();
  const Hardware h = hardwareFromJson(nlohmann::json::parse(R"({"ranks_per_node": 1,
      "intra_node": {"bandwidth_gbit_s": 100, "latency_us": 1},
      "inter_node": {"bandwidth_gbit_s": 1, "latency_us": 1, "message_overhead_us": 0}})"),
                                      "axis.json");
  AxisPredictions p;
  p.axis = parseRateAxis("inter_node.bandwidth_gbit_s=0.1,1,10,100");
  p.worlds = {4};
  p.configurations = {"compress none", "compress fp16"};
  for (const auto compress : {dtbench::run::Compression::kNone, dtbench::run::Compression::kFp16}) {
    WhatIf w;
    w.compress = compress;
    auto& steps = p.steps.emplace_back();
    auto& baselines = p.baselines.emplace_back();
    for (const double v : p.axis.values) {
      const Hardware varied = withAxisValue(h, p.axis.key, v);
      steps.push_back({predictStep(run, varied, 4, w)});
      baselines.push_back(predictStep(run, varied, 1, w));
    }
  }
  const std::vector<Table> tables = rateAxisTables(p);
  REQUIRE(tables.size() == 2);
  const Table& axis = tables[0];
  CHECK(axis.name == "rate_axis");
  CHECK(axis.columns[3] == "inter_node.bandwidth_gbit_s");
  REQUIRE(axis.rows.size() == 8);  // 1 world × 4 values × 2 configurations
  for (size_t r = 0; r < axis.rows.size(); ++r) {
    const std::vector<Cell>& row = axis.rows[r];
    CHECK(row[0].integer == 4);
    CHECK(row[2].text == p.configurations[r % 2]);
    CHECK(row[3].value == p.axis.values[r / 2]);
    CHECK(row[4].value == p.steps[r % 2][r / 2][0].stepS);
  }
  // Compression pays at low bandwidth (half the bytes) and costs its 20 ms codec at high bandwidth.
  const double slowNone = p.steps[0][0][0].stepS, slowFp16 = p.steps[1][0][0].stepS;
  const double fastNone = p.steps[0][3][0].stepS, fastFp16 = p.steps[1][3][0].stepS;
  REQUIRE(slowFp16 < slowNone);
  REQUIRE(fastFp16 > fastNone);
  const Table& crossings = tables[1];
  CHECK(crossings.name == "crossings");
  REQUIRE(crossings.rows.size() == 1);
  const std::vector<Cell>& row = crossings.rows[0];
  CHECK(row[2].text == "compress none");
  CHECK(row[3].text == "compress fp16");
  CHECK(row[6].text == "compress fp16");  // faster below the crossing
  CHECK(row[7].text == "compress none");
  CHECK(row[4].value > 0.1);
  CHECK(row[4].value < 100);
  // The crossing is where the two steps' difference, a straight line in 1/bandwidth between the
  // bracketing values, is 0.
  size_t k = 0;
  while (!(p.axis.values[k] < row[4].value && row[4].value < p.axis.values[k + 1])) ++k;
  CHECK(row[5].text == std::string("between ") + (k == 0 ? "0.1 and 1" : k == 1 ? "1 and 10" : "10 and 100"));
  const double d0 = p.steps[0][k][0].stepS - p.steps[1][k][0].stepS;
  const double d1 = p.steps[0][k + 1][0].stepS - p.steps[1][k + 1][0].stepS;
  const double u = 1 / p.axis.values[k] + (1 / p.axis.values[k + 1] - 1 / p.axis.values[k]) * d0 / (d0 - d1);
  CHECK(row[4].value == Approx(1 / u));
}

TEST_CASE("The crossings table says where two configurations never cross or are the same step",
          "[predict][rate_axis]") {
  // Steps given by hand: "a" always faster than "b"; "b" and "c" the same step at every value.
  AxisPredictions p;
  p.axis = parseRateAxis("inter_node.latency_us=1,10,100");
  p.worlds = {8};
  p.configurations = {"a", "b", "c"};
  for (const double offset : {0.0, 1.0, 1.0}) {
    auto& steps = p.steps.emplace_back();
    auto& baselines = p.baselines.emplace_back();
    for (const double v : p.axis.values) {
      StepPrediction s;
      s.world = 8;
      s.nodes = 2;
      s.stepS = 1 + offset + v / 100;
      s.epochS = 10 * s.stepS;
      steps.push_back({s});
      StepPrediction one = s;
      one.world = one.nodes = 1;
      one.epochS = 80;
      baselines.push_back(one);
    }
  }
  const std::vector<Table> tables = rateAxisTables(p);
  REQUIRE(tables[0].rows.size() == 9);
  CHECK(tables[0].rows[0][8].value == Approx(80 / (10 * 1.01)));  // speedup = T(1) / T(N)
  CHECK(tables[0].rows[0][9].value == Approx(80 / (10 * 1.01) / 8));
  const Table& crossings = tables[1];
  REQUIRE(crossings.rows.size() == 3);  // a-b, a-c, b-c
  for (size_t r = 0; r < 2; ++r) {
    CHECK(crossings.rows[r][4].kind == Cell::Kind::kEmpty);
    CHECK(crossings.rows[r][5].text == "no crossing in the range 1 to 100");
    CHECK(crossings.rows[r][6].text == "a");
    CHECK(crossings.rows[r][7].text == "a");
  }
  CHECK(crossings.rows[2][2].text == "b");
  CHECK(crossings.rows[2][3].text == "c");
  CHECK(crossings.rows[2][4].kind == Cell::Kind::kEmpty);
  CHECK(crossings.rows[2][5].text == "equal over the whole range 1 to 100");
  CHECK(crossings.rows[2][6].kind == Cell::Kind::kEmpty);
  // Sizes that do not agree are refused.
  p.steps[2].pop_back();
  CHECK_THROWS_AS(rateAxisTables(p), std::invalid_argument);
}
