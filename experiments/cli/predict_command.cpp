#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/backends/backend.h"
#include "comm/topology/registry.h"
#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/predict_options.h"
#include "experiments/cli/table_output.h"
#include "experiments/predict/calibration.h"
#include "experiments/predict/calibration_tables.h"
#include "experiments/predict/compute_device.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/limits_figure.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/prediction_figures.h"
#include "experiments/predict/prediction_table_names.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/rate_axis_tables.h"
#include "experiments/predict/step_description.h"
#include "experiments/predict/step_model.h"
#include "experiments/predict/zoo_step.h"
#include "experiments/report/figures.h"
#include "experiments/report/report_table.h"
#include "run/settings.h"

namespace dtbench::experiments {
namespace {

// `tables` as --table and --format ask, each checked to be a table of `mode` in predict's list of tables
// (prediction_table_names.h), so that --table's list, its help and its check are the whole of them.
void printPredictTables(const std::vector<report::Table>& tables, predict::PredictMode mode, const PredictOptions& o) {
  const std::vector<std::string> names = predict::predictTableNames(mode);
  for (const report::Table& table : tables)
    if (std::find(names.begin(), names.end(), table.name) == names.end())
      throw std::logic_error("predict's table '" + table.name +
                             "' is missing from predictTableNames() (experiments/predict/prediction_table_names.cpp)");
  printTables(tables, o.tables, o.format);
}

int allreduceCommand(const PredictOptions& o) {
  const predict::Hardware hardware = predict::loadHardware(o.hardwarePath);
  std::vector<predict::CalibrationRow> rows;
  for (const std::string& path : o.allreduce)
    for (const predict::AllreduceMeasurement& m : predict::readAllreduceCsv(path, "--allreduce")) {
      const std::string linkClass = predict::linkClassOf(m);
      if (!linkClass.empty()) rows.push_back({m, linkClass, predict::modelledSeconds(m, hardware)});
    }
  if (rows.empty()) throw common::UsageError("--allreduce: no row over 2 or more ranks to predict");
  printPredictTables({predict::comparisonTable(rows, predict::summarize(rows),
                                               "All-reduce: measured against predicted on the hardware file")},
                     predict::PredictMode::kAllreduce, o);
  return 0;
}

int calibrateCommand(const PredictOptions& o) {
  std::vector<predict::AllreduceMeasurement> rows;
  for (const std::string& path : o.calibrate) {
    const auto more = predict::readAllreduceCsv(path, "--calibrate");
    rows.insert(rows.end(), more.begin(), more.end());
  }
  const predict::Calibration fit = predict::calibrate(rows);
  const predict::ErrorSummary errors = predict::summarize(fit.rows);
  report::Table table = predict::comparisonTable(fit.rows, errors, "Calibration: measured all-reduces against the fitted model");
  table.name = "calibration";
  table.notes.back() = "- `error` = predicted / measured − 1, over the fitted rows themselves: the fit's error, not a "
                       "validation (predict other runs with --allreduce).";
  nlohmann::json hw = predict::toJson(fit.hardware);
  hw["description"] = "fitted by dtbench predict --calibrate";
  hw["calibration"] = {{"sources", o.calibrate},
                       {"rows", fit.rows.size()},
                       {"mean_abs_error", errors.mean},
                       {"worst_abs_error", errors.worst}};
  if (o.format == ReportFormat::kJson) {
    const nlohmann::json out = {{"tables", report::renderJson({table})}, {"hardware", hw}};
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    printPredictTables({table}, predict::PredictMode::kCalibrate, o);
    if (o.outputPath.empty()) std::printf("\nHardware file:\n%s\n", hw.dump(2).c_str());
  }
  if (!o.outputPath.empty()) {
    std::ofstream out(o.outputPath);
    out << hw.dump(2) << '\n';
    if (!out) throw std::runtime_error("--output: cannot write " + o.outputPath);
    std::fprintf(stderr, "predict: hardware file written to %s\n", o.outputPath.c_str());
  }
  return 0;
}

int describeCommand(const PredictOptions& o) {
  nlohmann::json description;
  if (!o.describe.empty()) {
    const predict::MeasuredStep step = predict::loadStep(o.describe);
    description = step.described ? predict::describeStep(step, step.description)
                                 : predict::describeStep(step, "the measured step of run " + o.describe);
    predict::checkDescriptionReads(description, "--describe " + o.describe);
  } else {
    description = predict::describeZooStep(*o.describeModel);
    predict::checkDescriptionReads(description, "--describe-model " + o.describeModel->model);
  }
  if (o.outputPath.empty()) {
    std::printf("%s\n", description.dump(1).c_str());
    return 0;
  }
  std::ofstream out(o.outputPath);
  out << description.dump(1) << '\n';
  if (!out) throw std::runtime_error("--output: cannot write " + o.outputPath);
  std::fprintf(stderr, "predict: step description written to %s\n", o.outputPath.c_str());
  return 0;
}

// --vary: every configuration (each value listed in --compress × each in --topology, the other what-if
// flags on all) predicted at every world on the hardware with the varied number at each value.
int varyCommand(const PredictOptions& o, const predict::MeasuredStep& run, const predict::Hardware& hardware,
                const predict::WhatIf& common) {
  // None listed: one configuration with the run's (nullopt, "").
  std::vector<std::optional<run::Compression>> compressions(o.compressions.begin(), o.compressions.end());
  if (compressions.empty()) compressions.push_back(std::nullopt);
  const std::vector<std::string> topologies = o.topologies.empty() ? std::vector<std::string>{""} : o.topologies;
  std::vector<predict::AxisConfiguration> configurations;
  for (const std::string& topology : topologies)
    for (const std::optional<run::Compression>& compress : compressions) {
      predict::AxisConfiguration& c = configurations.emplace_back();
      c.whatIf = common;
      if (!topology.empty()) {
        c.whatIf.topology = comm::Topology::parse(topology);
        c.label = "topology " + topology;
      }
      if (compress) {
        c.whatIf.compress = compress;
        c.label += (c.label.empty() ? "" : ", ") + std::string("compress ") + run::compressionNames().name(*compress);
      }
      if (c.label.empty()) c.label = "the run's";
    }
  const predict::AxisPredictions axis = predict::predictAlongAxis(run, hardware, *o.vary, o.worlds, configurations);
  for (const int world : o.worlds)
    if (const std::optional<std::string> note = predict::globalBatchNote(run, world))
      std::fprintf(stderr, "predict: %s\n", note->c_str());
  printPredictTables(predict::rateAxisTables(axis), predict::PredictMode::kVary, o);
  return 0;
}

}  // namespace

int runPredictCommand(const std::vector<std::string>& args) {
  const PredictOptions o = parsePredictOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  if (!o.calibrate.empty()) return calibrateCommand(o);
  if (!o.allreduce.empty()) return allreduceCommand(o);
  if (!o.describe.empty() || o.describeModel) return describeCommand(o);
  const predict::Hardware hardware = predict::loadHardware(o.hardwarePath);
  const predict::MeasuredStep run = predict::loadStep(o.run);
  if (const std::optional<std::string> mismatch = predict::deviceMismatch(run.device, hardware.device);
      mismatch && !o.acceptOtherDevice)
    throw common::UsageError(
        "dtbench predict: " + o.run + ": " + *mismatch + " (" + o.hardwarePath + "'s gpu), so its compute is not " +
        "theirs. Predict from the step on that device: a run measured there, a step description of it (dtbench " +
        "predict --describe-model MODEL --gpu " + hardware.device.gpuField() + " --forward-ms F --backward-ms B ...; " +
        "experiments/predict/steps/ holds measured ones), or take this compute as theirs, scaled by the file's " +
        "compute_scale, with --accept-other-device");
  const predict::WhatIf& whatIf = o.whatIf;
  if (o.vary) return varyCommand(o, run, hardware, whatIf);
  std::vector<predict::StepPrediction> predictions;
  for (int world : o.worlds) {
    predictions.push_back(predict::predictStep(run, hardware, world, whatIf));
    // Said where a CSV table, which carries no notes, would hide it (also in the Assumed table).
    if (const std::optional<std::string> note = predict::globalBatchNote(run, world))
      std::fprintf(stderr, "predict: %s\n", note->c_str());
  }
  const predict::StepPrediction baseline = predict::predictStep(run, hardware, 1, whatIf);
  printPredictTables(predict::predictionTables(run, hardware, o.hardwarePath, predictions, baseline),
                     predict::PredictMode::kPrediction, o);
  if (!o.plotsDir.empty()) {
    std::vector<std::string> leftOut;
    const nlohmann::json data = predict::predictionFigureData(
        run, std::filesystem::path(o.hardwarePath).stem().string(), predictions, baseline, o.measured, leftOut);
    for (const std::string& line : leftOut) std::fprintf(stderr, "predict: --measured: not drawn: %s\n", line.c_str());
    const std::vector<std::string> files = report::drawFigures(data, o.plotsDir, DTBENCH_PLOT_PYTHON);
    const std::vector<std::string> limits = predict::drawLimitsFigure(o.plotsDir, DTBENCH_PLOT_PYTHON, files);
    std::fprintf(stderr, "predict: %zu figure files in %s (data: figures.json, redraw: plots.py, limits_plot.py)\n",
                 files.size() + limits.size(), o.plotsDir.c_str());
  }
  return 0;
}

}  // namespace dtbench::experiments
