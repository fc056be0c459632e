#pragma once
// The command line of `dtbench predict` (predict_command.cpp), parsed once into one struct.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/bucket_layout.h"
#include "experiments/cli/report_options.h"
#include "experiments/predict/rate_axis.h"
#include "experiments/predict/step_model.h"
#include "experiments/predict/zoo_step.h"
#include "run/settings.h"

namespace dtbench::experiments {

struct PredictOptions {
  std::string run;                        // measured run directory
  std::string hardwarePath;               // --hardware
  std::vector<int> worlds;                // --world
  std::vector<std::string> calibrate;     // --calibrate CSV[,CSV...]
  std::vector<std::string> allreduce;     // --allreduce CSV[,CSV...]: measured rows to predict (with --hardware)
  std::string outputPath;                 // --output (calibration's hardware file, or a step description)
  std::string describe;                   // --describe RUN: write RUN's step description
  predict::ZooStepRequest zoo;            // --describe-model's flags; defaults: ZooStepRequest's
  std::optional<predict::ZooStepRequest> describeModel;  // --describe-model NAME: `zoo`
  // The what-if flags; those that are dtbench train's flags (--topology, --backend, --sync, --no-overlap,
  // --bucket-mb, --compress, --compress-rank) parsed and checked by train's rows (run/config_schema.h).
  predict::WhatIf whatIf;
  ReportFormat format = ReportFormat::kMarkdown;
  std::vector<std::string> tables;
  std::string plotsDir;                   // --plots
  std::vector<std::string> measured;      // --measured DIR[,DIR...]
  // --vary KEY=V1,V2,...: the prediction repeated with that hardware number at each value
  // (experiments/predict/rate_axis.h). With it --compress and --topology may list several values, each
  // a configuration compared along the axis; `compressions` and `topologies` hold them (one value: also
  // in whatIf.compress, whatIf.topology).
  std::optional<predict::RateAxis> vary;
  std::vector<dtbench::run::Compression> compressions;
  std::vector<std::string> topologies;
  bool acceptOtherDevice = false;         // --accept-other-device: a step of another device than the hardware's
  bool help = false;
  std::string helpText;
};

// "2,4,...,64": a list of world sizes; "..." continues the progression of the two before it (a ratio
// when the second is a whole multiple of the first, else a difference) up to the number after it.
// Throws common::UsageError naming --world.
std::vector<int> parseWorldList(const std::string& text);

// Throws common::UsageError naming the bad flag.
PredictOptions parsePredictOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
