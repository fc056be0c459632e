// The axis of predict --vary (experiments/predict/rate_axis.h, rate_axis_tables.h): its parse, good and
// bad; the hardware it sets, exactly the one number; the crossings of two series, interpolated on the
// axis's scale; the two tables on a hand-made step whose compressed and uncompressed steps cross; the
// band of every row, Table 1's at the same value; and whether the band leaves a crossing certain.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/usage_error.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/prediction_band.h"
#include "experiments/predict/prediction_table_names.h"
#include "experiments/predict/prediction_tables.h"
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
  std::vector<AxisConfiguration> configurations;
  for (const auto compress : {dtbench::run::Compression::kNone, dtbench::run::Compression::kFp16}) {
    AxisConfiguration& c = configurations.emplace_back();
    c.label = std::string("compress ") + (compress == dtbench::run::Compression::kNone ? "none" : "fp16");
    c.whatIf.compress = compress;
  }
  const AxisPredictions p =
      predictAlongAxis(run, h, parseRateAxis("inter_node.bandwidth_gbit_s=0.1,1,10,100"), {4}, configurations);
  CHECK(p.configurations == std::vector<std::string>{"compress none", "compress fp16"});
  const std::vector<Table> tables = rateAxisTables(p);
  REQUIRE(tables.size() == 2);
  // The tables are predict's registered --vary tables, in their order.
  CHECK(std::vector<std::string>{tables[0].name, tables[1].name} == predictTableNames(PredictMode::kVary));
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
  // A description without samples: every band is its point value, and the crossing is certain, its band the
  // crossing itself.
  for (const std::vector<Cell>& r : axis.rows) {
    CHECK(r[8].value == r[7].value);  // T_lo_s, T_s
    CHECK(r[9].value == r[7].value);
    CHECK(r[12].value == Approx(r[11].value).epsilon(1e-12));  // efficiency_lo, efficiency
    CHECK(r[13].value == Approx(r[11].value).epsilon(1e-12));
  }
  CHECK(row[8].value == Approx(row[4].value));
  CHECK(row[9].value == Approx(row[4].value));
  CHECK(row[10].text == "yes");
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
  CHECK(tables[0].columns[10] == "speedup");
  CHECK(tables[0].rows[0][10].value == Approx(80 / (10 * 1.01)));  // speedup = T(1) / T(N)
  CHECK(tables[0].rows[0][11].value == Approx(80 / (10 * 1.01) / 8));
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
  // No band (no uncertainty given): every order is certain, and nothing is within a band.
  for (const std::vector<Cell>& r : crossings.rows) {
    CHECK(r[8].kind == Cell::Kind::kEmpty);
    CHECK(r[9].kind == Cell::Kind::kEmpty);
    CHECK(r[10].text == "yes");
  }
  // Sizes that do not agree are refused.
  p.steps[2].pop_back();
  CHECK_THROWS_AS(rateAxisTables(p), std::invalid_argument);
}

namespace {

// The column `name` of `table`'s row `r`.
const Cell& cellOf(const Table& table, size_t r, const std::string& name) {
  for (size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c] == name) return table.rows.at(r).at(c);
  FAIL("no column " + name);
  throw std::logic_error("unreachable");
}

// A step with spread: compute samples of the critical rank (the mean compute's interval) and per-rank
// samples of one rank (the straggler term's), one bucket ready at backward's end.
MeasuredStep spreadStep() {
  MeasuredStep run = handMeasuredStep({{"p0", 1 << 18, 4, 0.04}}, 10000);
  run.computeSamplesS = {0.066, 0.069, 0.07, 0.071, 0.074, 0.068, 0.072};
  run.spread = makeComputeSpread({0.065, 0.067, 0.069, 0.07, 0.07, 0.071, 0.073, 0.075}, 1);
  return run;
}

}  // namespace

TEST_CASE("Every row of rate_axis carries Table 1's band at the same value of the hardware number",
          "[predict][rate_axis][band]") {
  const MeasuredStep run = spreadStep();
  const Hardware h = axisHardware();  // compute_scale 1.5, two ranks a node
  // compute_scale varies the band's own scale; the inter-node bandwidth only the step it bands.
  for (const std::string& text :
       {std::string("compute_scale=0.5,1,2"), std::string("inter_node.bandwidth_gbit_s=0.1,1,10")}) {
    INFO(text);
    std::vector<AxisConfiguration> configurations(2);
    configurations[0].label = "topology ring";
    configurations[0].whatIf.topology = dtbench::comm::Topology::parse("ring");
    configurations[1].label = "topology native";
    configurations[1].whatIf.topology = dtbench::comm::Topology::parse("native");
    const std::vector<int> worlds = {2, 8};
    const AxisPredictions p = predictAlongAxis(run, h, parseRateAxis(text), worlds, configurations);
    const Table axis = rateAxisTables(p)[0];
    size_t r = 0;
    for (size_t w = 0; w < worlds.size(); ++w)
      for (size_t v = 0; v < p.axis.values.size(); ++v)
        for (size_t c = 0; c < configurations.size(); ++c, ++r) {
          INFO("N = " << worlds[w] << ", value " << p.axis.values[v] << ", " << configurations[c].label);
          const double t = cellOf(axis, r, "T_s").value, e = cellOf(axis, r, "efficiency").value;
          const double tLo = cellOf(axis, r, "T_lo_s").value, tHi = cellOf(axis, r, "T_hi_s").value;
          const double eLo = cellOf(axis, r, "efficiency_lo").value, eHi = cellOf(axis, r, "efficiency_hi").value;
          CHECK(tLo <= t);
          CHECK(t <= tHi);
          CHECK(tLo < tHi);  // the input has spread: a band wider than its point
          CHECK(eLo <= e * (1 + 1e-12));
          CHECK(e <= eHi * (1 + 1e-12));
          CHECK(eLo < eHi);
          // Table 1 of an ordinary prediction on the hardware with the number at that value.
          const Hardware varied = withAxisValue(h, p.axis.key, p.axis.values[v]);
          const StepPrediction step = predictStep(run, varied, worlds[w], configurations[c].whatIf);
          const StepPrediction one = predictStep(run, varied, 1, configurations[c].whatIf);
          const std::vector<Table> ordinary = predictionTables(run, varied, "axis.json", {step}, one);
          const Table& t1 = ordinary.at(1);
          REQUIRE(t1.name == "time_speedup");
          CHECK(t == cellOf(t1, 0, "T_s").value);
          CHECK(tLo == cellOf(t1, 0, "T_lo_s").value);
          CHECK(tHi == cellOf(t1, 0, "T_hi_s").value);
          CHECK(eLo == cellOf(t1, 0, "efficiency_lo").value);
          CHECK(eHi == cellOf(t1, 0, "efficiency_hi").value);
        }
    CHECK(r == axis.rows.size());
  }
}

TEST_CASE("A crossing is certain where the two steps differ by more than the band's reach on both sides",
          "[predict][rate_axis][band]") {
  // Steps by hand along the latency: a = x, b = 3.2, c = x + 0.35 seconds at x = 1..5; the band moves every
  // step by ± half (the mean compute's half-width, the compute well above it, no straggler term).
  const auto crossingsWith = [](double half) {
    AxisPredictions p;
    p.axis = parseRateAxis("inter_node.latency_us=1,2,3,4,5");
    p.worlds = {8};
    p.configurations = {"a", "b", "c"};
    p.uncertainty.computeHalfWidthS = half;
    for (int configuration = 0; configuration < 3; ++configuration) {
      auto& steps = p.steps.emplace_back();
      auto& baselines = p.baselines.emplace_back();
      for (const double x : p.axis.values) {
        StepPrediction s;
        s.world = 8;
        s.nodes = 4;
        s.stepsPerEpoch = 10;
        s.computeS = 10;
        s.stepS = configuration == 0 ? x : configuration == 1 ? 3.2 : x + 0.35;
        s.epochS = 10 * s.stepS;
        steps.push_back({s});
        StepPrediction one = s;
        one.world = one.nodes = 1;
        one.stepS = 8;
        one.epochS = 80;
        baselines.push_back(one);
      }
    }
    const std::vector<Table> tables = rateAxisTables(p);
    // The axis's band: T ± 10 × half.
    CHECK(cellOf(tables[0], 0, "T_lo_s").value == Approx(10 * (1 - half)));
    CHECK(cellOf(tables[0], 0, "T_hi_s").value == Approx(10 * (1 + half)));
    return tables[1];
  };
  SECTION("a narrow band: the order at the neighbouring values is certain") {
    const Table t = crossingsWith(0.1);
    REQUIRE(t.rows.size() == 3);  // a-b (at 3.2), a-c (none), b-c (at 2.85)
    CHECK(cellOf(t, 0, "inter_node.latency_us").value == Approx(3.2));
    CHECK(cellOf(t, 0, "band_from").value == Approx(3.1));  // where b − a = 0.1
    CHECK(cellOf(t, 0, "band_to").value == Approx(3.3));    // where a − b = 0.1
    CHECK(cellOf(t, 0, "certain").text == "yes");
    CHECK(cellOf(t, 1, "where").text == "no crossing in the range 1 to 5");
    CHECK(cellOf(t, 1, "band_from").kind == Cell::Kind::kEmpty);  // 0.35 apart everywhere: outside the band
    CHECK(cellOf(t, 1, "certain").text == "yes");
    CHECK(cellOf(t, 2, "inter_node.latency_us").value == Approx(2.85));
    CHECK(cellOf(t, 2, "band_from").value == Approx(2.75));
    CHECK(cellOf(t, 2, "band_to").value == Approx(2.95));
    CHECK(cellOf(t, 2, "certain").text == "yes");
  }
  SECTION("a wide band: the crossing may lie beyond its neighbouring values") {
    const Table t = crossingsWith(0.5);
    REQUIRE(t.rows.size() == 3);
    CHECK(cellOf(t, 0, "inter_node.latency_us").value == Approx(3.2));  // the point crossing does not move
    CHECK(cellOf(t, 0, "band_from").value == Approx(2.7));
    CHECK(cellOf(t, 0, "band_to").value == Approx(3.7));
    CHECK(cellOf(t, 0, "certain").text == "no");  // 0.2 apart at 3: within the band's 0.5
    // a and c are 0.35 apart everywhere: within the band over the whole range.
    CHECK(cellOf(t, 1, "band_from").kind == Cell::Kind::kEmpty);
    CHECK(cellOf(t, 1, "band_to").kind == Cell::Kind::kEmpty);
    CHECK(cellOf(t, 1, "certain").text == "no");
    CHECK(cellOf(t, 2, "band_from").value == Approx(2.35));
    CHECK(cellOf(t, 2, "band_to").value == Approx(3.35));
    CHECK(cellOf(t, 2, "certain").text == "no");
  }
  SECTION("no band: the crossing itself") {
    const Table t = crossingsWith(0);
    CHECK(cellOf(t, 0, "band_from").value == Approx(3.2));
    CHECK(cellOf(t, 0, "band_to").value == Approx(3.2));
    CHECK(cellOf(t, 0, "certain").text == "yes");
  }
}
