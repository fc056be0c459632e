#pragma once
// The tables of `dtbench predict --vary` (docs/predict.md, "A hardware number varied"): `rate_axis`,
// one row per world, value of the varied number and configuration (the predicted step, T and efficiency
// each with its band, speedup and what limits it), and `crossings`, per world and pair of configurations
// the value at which their predicted steps are equal (rate_axis.h, findCrossings), or that there is none
// in the range, and whether the band (prediction_band.h) leaves the order on either side of it certain.

#include <string>
#include <vector>

#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/prediction_band.h"
#include "experiments/predict/rate_axis.h"
#include "experiments/predict/step_model.h"
#include "experiments/report/report_table.h"

namespace dtbench::predict {

struct AxisPredictions {
  RateAxis axis;
  std::vector<int> worlds;
  std::vector<std::string> configurations;  // one label each, e.g. "compress fp16"
  // [configuration][value][world], in the orders of `configurations`, axis.values and `worlds`.
  std::vector<std::vector<std::vector<StepPrediction>>> steps;
  std::vector<std::vector<StepPrediction>> baselines;  // [configuration][value]: world 1, for the speedup
  // The band's inputs: the input's uncertainty at every world (the baseline's included), and the
  // hardware file as written, whose compute_scale at each value (withAxisValue) scales it. The
  // defaults: no uncertainty, a band of the point value.
  InputUncertainty uncertainty;
  Hardware hardware;
};

// One configuration compared along the axis: its label in the tables and its what-ifs.
struct AxisConfiguration {
  std::string label;
  WhatIf whatIf;
};

// Every configuration predicted from `run` at every world and at world 1, on `hardware` with axis.key
// set to each of axis.values, with the band's inputs.
AxisPredictions predictAlongAxis(const MeasuredStep& run, const Hardware& hardware, const RateAxis& axis,
                                 const std::vector<int>& worlds, const std::vector<AxisConfiguration>& configurations);

// The band of steps[c][v][w] (prediction_band.h's predictionBand against baselines[c][v]).
PredictionBand axisBand(const AxisPredictions& p, size_t configuration, size_t value, size_t world);

// {rate_axis, crossings}. Throws std::invalid_argument when the sizes of `p` do not agree.
std::vector<report::Table> rateAxisTables(const AxisPredictions& p);

}  // namespace dtbench::predict
