#pragma once
// The wire figures' data (docs/report.md, "Figures"): per run with wire/, the host x host byte
// matrix captured and counted, every link's 10 ms throughput over a window of a few training steps,
// and the temporal flow plot's rows. plots.py draws wire_heatmap_<id>, wire_throughput_<id>,
// wire_flows_<id> and, across runs, wire_batch_size_effect from it.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "experiments/report/runs/run_data.h"
#include "experiments/report/wire/wire_series.h"

namespace dtbench::report {

// The window the throughput figures show, in whole ms: kWindowSteps consecutive training steps in
// the middle of those that lie wholly inside the capture (a step ends at its train_history.log
// Batch row's timestamp and starts rank 0's step_s earlier, from batches.csv), or without such a
// step the middle second of the capture, clipped to it.
constexpr int kWindowSteps = 3;
struct StepWindow {
  int64_t startMs = 0, endMs = 0;
  bool fromSteps = false;
};
StepWindow throughputWindow(const RunData& run, const CaptureWindow& capture);

// The run's entry of figures.json's "wire" list; null without wire data or link bins.
nlohmann::json wireFigureData(const RunData& run);

}  // namespace dtbench::report
