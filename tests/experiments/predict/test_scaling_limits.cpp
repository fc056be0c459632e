// What limits scaling (experiments/predict/scaling_limits.h): the predicted step split into compute,
// straggler, exposed bandwidth and latency, codec and control, which add up to the step at every world
// size, and the term the table names as the limit.
#include <catch2/catch.hpp>

#include "experiments/predict/compute_spread.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "hand_step.h"
#include "experiments/predict/scaling_limits.h"
#include "experiments/predict/step_model.h"

#include <string>
#include <vector>

using namespace dtbench::predict;
using dtbench::report::Cell;
using dtbench::report::Table;

namespace {

// Two parameters (2 MiB and 1 MiB of float32) ready at 30 and 10 ms of a 40 ms backward; compute 70 ms.
MeasuredStep limitsTwoParameters() {
  // 256,000 samples: whole batches at every world up to 256.
  return handMeasuredStep({{"p0", 524288, 4, 0.03, {}}, {"p1", 262144, 4, 0.01, {}}}, 256000);
}

// A model of 1,000 float32 elements, ready only at backward's end: its one all-reduce is all exposed.
MeasuredStep limitsTinyModel() {
  MeasuredStep run = limitsTwoParameters();
  run.parameters = {{"w", 1000, 4, 0.04, {}}};
  return run;
}

Hardware limitsHardware(int ranksPerNode, double bandwidth, double latency) {
  Hardware h;
  h.ranksPerNode = ranksPerNode;
  h.intra = {bandwidth * 4, latency / 4};
  h.inter = {bandwidth, latency};
  return h;
}

size_t limitsColumn(const Table& t, const std::string& name) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == name) return i;
  FAIL("no column " << name);
  return 0;
}

std::vector<StepPrediction> limitsPredictWorlds(const MeasuredStep& run, const Hardware& h, const std::vector<int>& worlds,
                                          const WhatIf& w) {
  std::vector<StepPrediction> out;
  for (int n : worlds) out.push_back(predictStep(run, h, n, w));
  return out;
}

// Every row: the terms in seconds add up to step_s, the shares to 100, and each share is its term over
// the step; the terms are the prediction's own.
void limitsCheckRowsAddUp(const Table& t, const std::vector<StepPrediction>& predictions) {
  REQUIRE(t.rows.size() == predictions.size());
  const std::vector<std::string> terms = {"compute", "straggler", "bandwidth", "latency", "codec", "control"};
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const StepPrediction& p = predictions[r];
    INFO("N = " << p.world);
    const std::vector<Cell>& row = t.rows[r];
    CHECK(row[limitsColumn(t, "N")].integer == p.world);
    CHECK(row[limitsColumn(t, "step_s")].value == p.stepS);
    double seconds = 0, shares = 0;
    for (const std::string& term : terms) {
      const double s = row[limitsColumn(t, term + "_s")].value;
      const double share = row[limitsColumn(t, term + "_pct")].value;
      CHECK(s >= 0);
      CHECK(share == Approx(100 * s / p.stepS).epsilon(1e-12).margin(1e-12));
      seconds += s;
      shares += share;
    }
    CHECK(seconds == Approx(p.stepS).epsilon(1e-12));
    CHECK(shares == Approx(100).epsilon(1e-12));
    const StepTerms parts = stepTerms(p);
    CHECK(parts.sumS() == Approx(p.stepS).epsilon(1e-12));
    CHECK(parts.computeS + parts.stragglerS == Approx(p.computeS).epsilon(1e-12));
    CHECK(parts.bandwidthS + parts.latencyS + parts.codecS == Approx(p.commExposedS).epsilon(1e-9).margin(1e-15));
    CHECK(row[limitsColumn(t, "control_s")].value == 0);
  }
}

}  // namespace

TEST_CASE("The terms add up to the predicted step at every world size, whatever the setup", "[predict][limits]") {
  MeasuredStep run = limitsTwoParameters();
  run.spread = makeComputeSpread({0.066, 0.068, 0.069, 0.07, 0.071, 0.072, 0.074, 0.08}, 1);
  run.bufferElementsKnown = true;
  run.bufferElements = 20000;
  const std::vector<int> worlds = {1, 2, 4, 8, 16, 32, 64};
  struct Case {
    std::string name;
    WhatIf whatIf;
  };
  std::vector<Case> cases(7);
  cases[0].name = "gloo ring";
  cases[1].name = "nccl native";
  cases[1].whatIf.backend = dtbench::comm::Backend::kNccl;
  cases[1].whatIf.topology = dtbench::comm::Topology::parse("native");
  cases[2].name = "tree, no overlap";
  cases[2].whatIf.topology = dtbench::comm::Topology::parse("tree");
  cases[2].whatIf.overlap = false;
  cases[3].name = "hierarchical, segments of 64 KiB";
  cases[3].whatIf.topology = dtbench::comm::Topology::parse("hierarchical");
  cases[3].whatIf.segmentBytes = 1 << 16;
  cases[4].name = "pair averaging";
  cases[4].whatIf.sync = dtbench::run::Sync::kPairavg;
  cases[5].name = "fp16 compression with its measured codec, no overlap";
  cases[5].whatIf.compress = dtbench::run::Compression::kFp16;
  cases[5].whatIf.overlap = false;
  cases[6].name = "clique, small buckets";
  cases[6].whatIf.topology = dtbench::comm::Topology::parse("clique");
  cases[6].whatIf.bucketMb = 1;
  for (const Case& c : cases) {
    INFO(c.name);
    MeasuredStep step = run;
    if (c.whatIf.compress) {
      step.settings.sync.compress = *c.whatIf.compress;
      step.compressS = 0.004;
    }
    for (const Hardware& h : {limitsHardware(4, 1e9, 2e-5), limitsHardware(1, 1e8, 1e-4)}) {
      const std::vector<StepPrediction> predictions = limitsPredictWorlds(step, h, worlds, c.whatIf);
      const Table t = limitsTable(predictions, predictions.front());
      CHECK(t.name == "limits");
      limitsCheckRowsAddUp(t, predictions);
      if (c.whatIf.compress) {
        // Without overlap one bucket runs after backward, then its encoding and decoding: all exposed.
        for (size_t r = 1; r < predictions.size(); ++r) CHECK(predictions[r].exposedCodecS == Approx(0.004).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("A tiny model over many ranks: latency grows with N and is named the limit", "[predict][limits]") {
  // 4 KB a step over links of 100 GB/s and 20 us: each of the ring's 2(N - 1) steps costs a latency
  // (two with Gloo's notice) and next to no bytes.
  const MeasuredStep run = limitsTinyModel();
  const Hardware h = limitsHardware(1, 1e11, 2e-5);
  const std::vector<int> worlds = {2, 4, 8, 16, 32, 64, 128, 256};
  const std::vector<StepPrediction> predictions = limitsPredictWorlds(run, h, worlds, {});
  const StepPrediction baseline = predictStep(run, h, 1, {});
  const Table t = limitsTable(predictions, baseline);
  limitsCheckRowsAddUp(t, predictions);
  double previous = 0;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    INFO("N = " << worlds[r]);
    const double share = t.rows[r][limitsColumn(t, "latency_pct")].value;
    CHECK(share > previous);
    previous = share;
    CHECK(t.rows[r][limitsColumn(t, "limit")].text == "latency");
    CHECK(t.rows[r][limitsColumn(t, "latency_s")].value > 100 * t.rows[r][limitsColumn(t, "bandwidth_s")].value);
    // Gloo's ring: at least a latency for each of its 2(N - 1) steps, all of them after backward.
    CHECK(predictions[r].exposedLatencyS >= 2 * (worlds[r] - 1) * 2e-5 * (1 - 1e-9));
    // No spread measured: no straggler term.
    CHECK(t.rows[r][limitsColumn(t, "straggler_s")].value == 0);
    CHECK(t.rows[r][limitsColumn(t, "straggler_pct")].value == 0);
  }
  CHECK(t.rows.back()[limitsColumn(t, "latency_pct")].value > 20);
  // Efficiency is what the latency takes from compute: every N here runs whole batches.
  for (size_t r = 0; r < t.rows.size(); ++r)
    CHECK(t.rows[r][limitsColumn(t, "efficiency")].value ==
          Approx(t.rows[r][limitsColumn(t, "compute_pct")].value / 100).epsilon(1e-9));
}

TEST_CASE("A large model on slow links is bandwidth-limited, and a spread makes a straggler term", "[predict][limits]") {
  MeasuredStep run = limitsTwoParameters();
  const Hardware h = limitsHardware(1, 1e8, 1e-6);
  const std::vector<StepPrediction> plain = limitsPredictWorlds(run, h, {1, 2, 4, 8}, {});
  const Table t = limitsTable(plain, plain.front());
  limitsCheckRowsAddUp(t, plain);
  CHECK(t.rows[0][limitsColumn(t, "limit")].text == "none");  // one rank: compute alone
  CHECK(t.rows[0][limitsColumn(t, "compute_pct")].value == Approx(100));
  for (size_t r = 1; r < t.rows.size(); ++r) {
    CHECK(t.rows[r][limitsColumn(t, "limit")].text == "bandwidth");
    CHECK(t.rows[r][limitsColumn(t, "straggler_s")].value == 0);
  }
  // With the ranks' compute spread, the slowest of N costs more as N grows; compute stays the mean's.
  run.spread = makeComputeSpread({0.05, 0.06, 0.07, 0.08, 0.09}, 1);
  const std::vector<StepPrediction> spread = limitsPredictWorlds(run, h, {1, 2, 4, 8}, {});
  const Table s = limitsTable(spread, spread.front());
  limitsCheckRowsAddUp(s, spread);
  double previous = 0;
  for (size_t r = 1; r < s.rows.size(); ++r) {
    const double straggler = s.rows[r][limitsColumn(s, "straggler_s")].value;
    CHECK(straggler == Approx(run.spread.stragglerS(spread[r].world)).epsilon(1e-12));
    CHECK(straggler > previous);
    previous = straggler;
    CHECK(s.rows[r][limitsColumn(s, "compute_s")].value == Approx(0.07).epsilon(1e-12));
  }
}

TEST_CASE("The limiting term is the largest after compute, none where all are 0", "[predict][limits]") {
  StepTerms t;
  t.computeS = 1;
  CHECK(limitingTerm(t) == "none");
  t.latencyS = 0.1;
  t.bandwidthS = 0.2;
  CHECK(limitingTerm(t) == "bandwidth");
  t.stragglerS = 0.3;
  CHECK(limitingTerm(t) == "straggler");
  t.codecS = 0.4;
  CHECK(limitingTerm(t) == "codec");
  t.latencyS = 0.4;  // a tie: the first in the table's order
  CHECK(limitingTerm(t) == "latency");
}

TEST_CASE("The figure's entries carry every term of each world size", "[predict][limits]") {
  const MeasuredStep run = limitsTinyModel();
  const std::vector<StepPrediction> predictions = limitsPredictWorlds(run, limitsHardware(1, 1e11, 2e-5), {1, 8}, {});
  const nlohmann::json entries = limitsFigureEntries(predictions);
  REQUIRE(entries.size() == 2);
  CHECK(entries[1]["label"] == "N=8");
  CHECK(entries[1]["limit"] == "latency");
  double sum = 0;
  for (const char* key : {"compute_s", "straggler_s", "bandwidth_s", "latency_s", "codec_s", "control_s"})
    sum += entries[1][key].get<double>();
  CHECK(sum == Approx(entries[1]["step_s"].get<double>()).epsilon(1e-12));
}
