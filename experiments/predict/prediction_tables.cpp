#include "experiments/predict/prediction_tables.h"

#include <cstdio>

#include "comm/backends/backend.h"
#include "comm/bucket_layout.h"
#include "comm/topology/ring.h"
#include "experiments/predict/prediction_band.h"
#include "experiments/predict/prediction_peak.h"
#include "experiments/predict/scaling_limits.h"
#include "experiments/report/runs/scaling_tables.h"
#include "experiments/report/runs/setup_label.h"
#include "run/compression.h"
#include "run/settings.h"

namespace dtbench::predict {
namespace {

using report::Cell;
using report::Table;

std::string setupOf(const StepPrediction& p, const MeasuredStep& run) {
  std::string s = report::setupLabel(p.backend, p.topology, p.sync, p.overlap, p.bucketMb,
                                     run.settings.sync.localBnStats);
  if (p.bucketLayout != comm::BucketLayout::kDdp)
    s += std::string(", ") + comm::bucketLayoutNames().name(p.bucketLayout) + " buckets";
  if (const run::CompressionRow& row = run::compressionRow(p.compress); row.compresses) {
    s += std::string(", compress ") + row.name;
    if (row.takesRank) s += " rank " + std::to_string(p.compressRank);
  } else if (p.elementBytes != run.parameters.front().elementBytes) {
    s += ", " + std::to_string(p.elementBytes) + "-byte gradients";
  }
  return s;
}

std::vector<Cell> configurationCells(const StepPrediction& p, const MeasuredStep& run) {
  return {Cell::of(run.settings.model), Cell::of(run.datasetLabel),
          Cell::of(setupOf(p, run)), Cell::integral(run.batchSize),
          Cell::integral(p.world), Cell::integral(p.nodes)};
}

Table assumedTable(const MeasuredStep& run, const Hardware& hw, const std::string& hardwarePath,
                   const StepPrediction& baseline) {
  using Kind = ComputeDevice::Kind;
  Table t;
  t.name = "assumed";
  t.title = "Assumed";
  t.columns = {"what", "assumed"};
  const auto add = [&](const std::string& k, const std::string& v) { t.rows.push_back({Cell::of(k), Cell::of(v)}); };
  std::string scale;
  if (hw.computeScale != 1) {
    char text[64];
    std::snprintf(text, sizeof text, " × compute_scale %g (the hardware file's)", hw.computeScale);
    scale = text;
  }
  const std::string device = run.device.known() ? run.device.label : "a device it does not name";
  add("compute", (run.described ? "described in " + run.path + ", for " : "measured in run " + run.path + " on ") +
                     device + scale + ", taken as each rank's on the hardware");
  const std::string ranks = hw.device.kind == Kind::kCpu  ? "CPU ranks (gpu none)"
                            : hw.device.kind == Kind::kGpu ? hw.device.label + " GPUs"
                                                           : "ranks of a device it does not name (no gpu field)";
  char text[160];
  std::snprintf(text, sizeof text, "; %d per node%s", hw.ranksPerNode,
                hw.nodes ? (", at most " + std::to_string(*hw.nodes) + " nodes").c_str() : "");
  add("hardware", hardwarePath + ": " + ranks + text);
  if (const std::optional<std::string> mismatch = deviceMismatch(run.device, hw.device))
    add("device check", "accepted with --accept-other-device: " + *mismatch);  // else refused before
  else if (!run.device.known() || !hw.device.known())
    add("device check", std::string("not checked: ") +
                            (!run.device.known() ? (run.described ? "the description names no gpu" : "the run recorded no device")
                                                 : "the hardware file names no gpu"));
  else if (run.device.kind == Kind::kUnnamedGpu)
    add("device check", "not checked: the run ran on a GPU (config.json's device cuda) but recorded no devices, so "
                        "not which GPU");
  else
    add("device check", "the same device: " + hw.device.label);
  const std::string backend = comm::name(baseline.backend);
  if (baseline.topology.native()) {
    const bool given = hw.nativeEfficiency.count(backend) > 0;
    std::string listed;
    for (const auto& [name, e] : hw.nativeEfficiency) listed += (listed.empty() ? "" : ", ") + name;
    std::snprintf(text, sizeof text, "%.4g", hw.efficiencyOf(backend));
    add("backend", backend + "'s own all-reduce (native), efficiency " + text +
                       (given ? ", the hardware file's"
                              : ", its model's default: the hardware file gives " +
                                    (listed.empty() ? std::string("none") : listed + " only")));
  } else {
    add("backend", backend + " carrying dtbench's " + baseline.topology.name() +
                       " schedule, modelled message by message (native efficiency not used)");
  }
  add("message overhead", messageOverheadAssumed(hw));
  add("straggler term", run.spread.known()
                            ? "each step waits for the slowest of N ranks, whose compute is drawn independently from "
                              "the input's per-rank compute samples (exact order statistic up to " +
                                  std::to_string(run.spread.samplesS.size()) +
                                  " ranks, an exponential tail fitted above; docs/predict.md, \"The spread of the "
                                  "ranks' compute\")"
                            : std::string("not modelled: ") +
                                  (run.described ? "the description has no compute_spread" : "fewer than 2 compute samples"));
  if (hw.gpuSpread) add("fleet spread", hw.gpuSpread->assumed());
  add("band", "T_lo_s..T_hi_s and efficiency_lo..efficiency_hi cover the input's own sampling uncertainty only: "
             "its mean compute (how many steps it averaged) and its straggler term (how well its per-rank samples "
             "fix the slowest of N). They do not cover the hardware file's numbers (bandwidths, latencies, "
             "compute_scale, a gpu_spread row, native efficiency), the network model's form, the costs not charged "
             "(rank 0's negotiation and other control-plane work, copies into the buckets, data loading), drift "
             "or warm-up the input's steps did not show, or systematic differences between the input's machine "
             "and the target (its device, cores, software): an input with no spread gives a band of the point "
             "value, which is no claim that the prediction is exact");
  if (const run::CompressionRow& row = run::compressionRow(baseline.compress); row.compresses) {
    std::string what = row.name;
    if (row.takesRank) what += " rank " + std::to_string(baseline.compressRank);
    if (row.takesStart) what += " (a compressed step, as every step after --compress-start)";
    std::snprintf(text, sizeof text, "%.4g ms", baseline.codecS * 1e3);
    const double ratio = baseline.gradBytes > 0 ? static_cast<double>(baseline.uncompressedGradBytes) /
                                                      static_cast<double>(baseline.gradBytes)
                                                : 0;
    char ratioText[32];
    std::snprintf(ratioText, sizeof ratioText, "%.4g", ratio);
    add("compression", what + ", ratio " + ratioText + "; encoding and decoding " +
                           (baseline.codecMeasured ? std::string(text) + " per step, measured in " + run.path +
                                                         (hw.computeScale != 1 ? " × compute_scale" : "")
                                                   : "taken as 0: " + run.path +
                                                         " did not measure this compression (train with it, or give "
                                                         "a description's compress_s)"));
  }
  return t;
}

}  // namespace

std::vector<Table> predictionTables(const MeasuredStep& run, const Hardware& hw, const std::string& hardwarePath,
                                    const std::vector<StepPrediction>& predictions, const StepPrediction& baseline) {
  Table t1;
  t1.name = "time_speedup";
  t1.title = "Table 1 — time and speedup (predicted)";
  t1.columns = report::configurationColumns();
  for (const char* c : {"runs", "epoch", "steps", "T_s", "T_lo_s", "T_hi_s", "basis", "speedup", "efficiency",
                        "efficiency_lo", "efficiency_hi", "N_T1_over_TN", "images_per_s", "GFLOP_s_per_rank", "MFU",
                        "of_gemm_probe"})
    t1.columns.push_back(c);
  const PredictionPeak peak = predictionPeak(run, hw);
  const std::optional<double> peakFlops = peak.speedOfLight ? peak.speedOfLight->peakFlopsPerS() : std::nullopt;
  const bool gpuPeak = peak.speedOfLight && peak.speedOfLight->onGpu();
  std::vector<int> aboveOne;  // worlds whose fraction exceeds 1
  Table t2;
  t2.name = "compute_comm";
  t2.title = "Table 2 — compute vs communication per epoch (predicted)";
  t2.columns = report::configurationColumns();
  for (const char* c : {"basis", "compute_s", "comm_total_s", "comm_exposed_s", "overlap_s", "exposed_share"})
    t2.columns.push_back(c);
  Table t3;
  t3.name = "bandwidth";
  t3.title = "Table 3 — bandwidth utilization (predicted)";
  t3.columns = report::configurationColumns();
  for (const char* c : {"basis", "dtype", "grad_bytes", "model_bytes", "comm_total_s", "algbw_GBps", "busbw_GBps",
                        "link_bound_busbw_GBps", "of_link_bound"})
    t3.columns.push_back(c);
  Table steps;
  steps.name = "step_breakdown";
  steps.title = "Per-step breakdown (predicted, seconds from the start of the step's compute)";
  steps.columns = {"N", "nodes", "what", "bytes", "launch_s", "start_s", "end_s", "duration_s", "straggler_s"};

  const double t1Base = baseline.epochS;
  std::vector<int64_t> bandWorlds = {baseline.world};
  for (const StepPrediction& p : predictions) bandWorlds.push_back(p.world);
  const InputUncertainty uncertainty = inputUncertainty(run, bandWorlds);
  for (const StepPrediction& p : predictions) {
    const PredictionBand band = predictionBand(p, baseline, uncertainty, hw.computeScale);
    const double k = static_cast<double>(p.stepsPerEpoch);
    std::vector<Cell> row = configurationCells(p, run);
    const double speedup = p.epochS > 0 ? t1Base / p.epochS : 0;
    for (const Cell& c : {Cell::empty(), Cell::empty(), Cell::integral(p.stepsPerEpoch), Cell::seconds(p.epochS),
                          Cell::seconds(band.epochS.lo), Cell::seconds(band.epochS.hi), Cell::of("predicted"),
                          Cell::ratio(speedup), Cell::ratio(speedup / p.world), Cell::ratio(band.efficiency.lo),
                          Cell::ratio(band.efficiency.hi), Cell::ratio(speedup * p.world), Cell::ratio(p.imagesPerS)})
      row.push_back(c);
    // One rank's arithmetic over the predicted step: its images per second × the training FLOPs of one.
    std::optional<double> achieved, fraction;
    if (peak.speedOfLight && p.world > 0) achieved = p.imagesPerS / p.world * peak.speedOfLight->flops.training();
    if (achieved && peakFlops) fraction = *achieved / *peakFlops;
    if (fraction && *fraction > 1) aboveOne.push_back(p.world);
    row.push_back(achieved ? Cell::ratio(*achieved / 1e9) : Cell::empty());
    row.push_back(gpuPeak && fraction ? Cell::ratio(*fraction) : Cell::empty());
    row.push_back(!gpuPeak && fraction ? Cell::ratio(*fraction) : Cell::empty());
    t1.rows.push_back(row);
    if (p.world < 2) continue;
    row = configurationCells(p, run);
    for (const Cell& c : {Cell::of("predicted"), Cell::seconds(p.computeS * k), Cell::seconds(p.commTotalS * k),
                          Cell::seconds(p.commExposedS * k), Cell::seconds((p.commTotalS - p.commExposedS) * k),
                          Cell::ratio(p.stepS > 0 ? p.commExposedS / p.stepS : 0)})
      row.push_back(c);
    t2.rows.push_back(row);
    row = configurationCells(p, run);
    const double algbw = p.commTotalS > 0 ? static_cast<double>(p.gradBytes) / p.commTotalS / 1e9 : 0;
    const double bound = p.linkBoundS > 0 ? static_cast<double>(p.gradBytes) * comm::ringBusFactor(p.world) / p.linkBoundS / 1e9 : 0;
    const double busbw = algbw * comm::ringBusFactor(p.world);
    row.push_back(Cell::of("predicted"));
    row.push_back(Cell::of(p.elementBytes == 4 ? "float32" : p.elementBytes == 2 ? "float16/bfloat16"
                                                                              : std::to_string(p.elementBytes) + " B"));
    row.push_back(Cell::integral(p.gradBytes));
    row.push_back(Cell::integral(static_cast<int64_t>(p.busiestRankBytes * k)));
    row.push_back(Cell::seconds(p.commTotalS * k));
    row.push_back(Cell::rate(algbw));
    row.push_back(Cell::rate(busbw));
    row.push_back(bound > 0 ? Cell::rate(bound) : Cell::empty());
    row.push_back(bound > 0 ? Cell::ratio(busbw / bound) : Cell::empty());
    t3.rows.push_back(row);
    for (const PredictedCollective& c : p.collectives)
      steps.rows.push_back({Cell::integral(p.world), Cell::integral(p.nodes), Cell::of(c.name), Cell::integral(c.bytes),
                            Cell::seconds(c.launchS), Cell::seconds(c.startS), Cell::seconds(c.endS),
                            Cell::seconds(c.seconds), Cell::empty()});
    const double backwardStart = p.backwardStartS();
    steps.rows.push_back({Cell::integral(p.world), Cell::integral(p.nodes), Cell::of("backward"), Cell::empty(),
                          Cell::seconds(backwardStart), Cell::seconds(backwardStart),
                          Cell::seconds(backwardStart + p.backwardS), Cell::seconds(p.backwardS), Cell::empty()});
    // The straggler term: what the spread of the ranks' compute costs this step (in the step's span).
    steps.rows.push_back({Cell::integral(p.world), Cell::integral(p.nodes), Cell::of("step"), Cell::empty(),
                          Cell::seconds(0), Cell::seconds(0), Cell::seconds(p.stepS), Cell::seconds(p.stepS),
                          Cell::seconds(p.stragglerS)});
  }
  t1.notes = {std::string("- Every row is a prediction (`basis` = predicted) from the ") +
                  (run.described ? "step described" : "measured run") + " below; `T_s` = steps × the "
              "predicted step (compute + exposed communication; data loading excluded, as in the report's T).",
              std::string("- `speedup` = predicted T(1) / predicted T(N) (T(1): the ") +
                  (run.described ? "described" : "measured") + " compute alone).",
              "- `T_lo_s`…`T_hi_s`, `efficiency_lo`…`efficiency_hi`: the band from the input's own sampling "
              "uncertainty: its mean compute's 95 % interval (Student's t over its steps) and the straggler term's "
              "(1.96 × a seeded bootstrap's standard error), each at its ends; the exposed communication as "
              "predicted (docs/predict.md, \"The band\"; the Assumed table says what it does not cover). The "
              "speedup's band is N × the efficiency's.",
              "- `GFLOP_s_per_rank` = the model's training FLOPs per image × one rank's predicted images per second; "
              "`MFU` = that ÷ the hardware file's GPU's dense datasheet peak (`gpu`), `of_gemm_probe` = that ÷ the run's "
              "measured CPU matrix-product rate (`gpu` none); docs/predict.md, \"FLOPs and MFU\".",
              "- Peak: " + peak.note + "."};
  if (!aboveOne.empty()) {
    std::string worlds;
    for (const int n : aboveOne) worlds += (worlds.empty() ? "N = " : ", ") + std::to_string(n);
    t1.notes.push_back("- " + worlds + ": above 1 of the peak, the step's arithmetic goes faster than the rate it is "
                       "measured against (on the CPU: the probe's matrix products do not represent the model's "
                       "kernels); shown as computed, never clipped.");
  }
  t2.notes = {"- `exposed_share` = comm_exposed / step; `compute_s` includes the straggler term (the step breakdown's "
              "`straggler_s`: the slowest of N ranks' compute less the input's)."};
  t3.notes = {"- `model_bytes`: the busiest rank's bytes per epoch as the Schedule moves them (native: the ring's); "
              "`link_bound_busbw_GBps`: Σ over the step's all-reduces of the busiest node link's bytes / inter-node "
              "bandwidth, as the report's link bound (empty on one node)."};

  Table inputs;
  inputs.name = "prediction_inputs";
  inputs.title = "Inputs of the prediction";
  inputs.columns = {"input", "value"};
  char text[256];
  const auto add = [&](const std::string& k, const std::string& v) { inputs.rows.push_back({Cell::of(k), Cell::of(v)}); };
  const run::RunConfig& s = run.settings;
  if (run.described) {
    add("step description", run.path + (run.description.empty() ? "" : " (" + run.description + ")"));
    std::snprintf(text, sizeof text, "%s %s, batch %d, %s/%s %s", s.model.c_str(), run.datasetLabel.c_str(),
                  run.batchSize, comm::name(s.comm.connection.backend), s.comm.topology.name().c_str(),
                  run::syncNames().name(s.sync.kind));
    add("described", text);
    std::snprintf(text, sizeof text, "compute %.6f s (h2d %.6f, forward %.6f, backward %.6f, optimizer %.6f)",
                  run.computeS, run.h2dS, run.forwardS, run.backwardS, run.optimizerS);
    add("described step", text);
    add("gradient ready times", "the description's, per parameter");
  } else {
    add("run", run.path);
    std::snprintf(text, sizeof text, "%s %s, world %d, batch %d, %s/%s %s, epoch %d, %lld steps averaged",
                  s.model.c_str(), run.datasetLabel.c_str(), run.worldSize, run.batchSize,
                  comm::name(s.comm.connection.backend), s.comm.topology.name().c_str(),
                  run::syncNames().name(s.sync.kind), run.epoch, static_cast<long long>(run.rows));
    add("measured", text);
    std::snprintf(text, sizeof text, "compute %.6f s (h2d %.6f, forward %.6f, backward %.6f, optimizer %.6f); the run's own "
                  "comm_exposed %.6f s", run.computeS, run.h2dS, run.forwardS, run.backwardS, run.optimizerS, run.measuredExposedS);
    add("measured step", text);
    if (run.worldSize > 1) {
      std::snprintf(text, sizeof text, "each step from the rank that ended backward last (the least comm_exposed_s): "
                    "another rank's row in %lld of %lld steps; rank 0 waited %.6f s a step for it",
                    static_cast<long long>(run.criticalRowsElsewhere), static_cast<long long>(run.rows), run.rank0WaitS);
      add("critical rank", text);
    }
    add("gradient ready times", run.readyMeasured ? "step_profile.json (measured per parameter)"
                                                  : "not recorded: spread over backward by bytes (config.json buckets)");
  }
  add("compute spread", run.spread.describe());
  add("band", uncertainty.describe());
  add("buffer broadcast", run.bufferElementsKnown ? std::to_string(run.bufferElements) + " elements"
                                                  : "not recorded: not modelled");
  add("hardware", hardwarePath + (hw.description.empty() ? "" : " (" + hw.description + ")"));
  std::snprintf(text, sizeof text, "%d ranks per node; intra-node %.3f Gbit/s, %.1f us (+%.3g us a message); inter-node "
                "%.3f Gbit/s, %.1f us (+%.3g us a message); compute scale %g", hw.ranksPerNode,
                hw.intra.bytesPerSecond * 8 / 1e9, hw.intra.latencyS * 1e6, hw.intra.messageOverheadS * 1e6,
                hw.inter.bytesPerSecond * 8 / 1e9, hw.inter.latencyS * 1e6, hw.inter.messageOverheadS * 1e6, hw.computeScale);
  add("links", text);
  if (!predictions.empty()) {
    const StepPrediction& p = predictions.front();
    std::snprintf(text, sizeof text,
                  "%s/%s %s, bucket %g MB (%s layout), overlap %s, segment %lld bytes, native efficiency %.4f",
                  comm::name(p.backend), p.topology.name().c_str(), run::syncNames().name(p.sync), p.bucketMb,
                  comm::bucketLayoutNames().name(p.bucketLayout), p.overlap ? "on" : "off",
                  static_cast<long long>(p.segmentBytes), hw.efficiencyOf(comm::name(p.backend)));
    add("predicted setup", text);
  }
  Table assumed = assumedTable(run, hw, hardwarePath, baseline);
  for (const StepPrediction& p : predictions)
    if (const std::optional<std::string> note = globalBatchNote(run, p.world))
      assumed.rows.push_back({Cell::of("epoch"), Cell::of(*note)});
  return {assumed, t1, t2, t3, steps, limitsTable(predictions, baseline), inputs};
}

}  // namespace dtbench::predict
