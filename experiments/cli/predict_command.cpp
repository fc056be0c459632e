#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/topology/registry.h"
#include "common/usage_error.h"
#include "dtbench/build_config.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/predict_options.h"
#include "experiments/cli/table_output.h"
#include "experiments/predict/calibration.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/prediction_figures.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_model.h"
#include "experiments/report/figures.h"
#include "experiments/report/report_table.h"

namespace dtbench::experiments {
namespace {

// Measured rows beside the model's predictions on `hardware`: the calibration's fit, or a validation.
report::Table comparisonTable(const std::vector<predict::CalibrationRow>& rows, const char* title) {
  report::Table table;
  table.name = "allreduce_model";
  table.title = title;
  table.columns = {"row", "class", "backend", "topology", "N", "nodes", "size", "measured_s", "predicted_s", "error"};
  double sum = 0, worst = 0, sumLarge = 0, worstLarge = 0;
  int large = 0;
  for (const predict::CalibrationRow& r : rows) {
    const double error = r.predictedS / r.measured.seconds - 1;
    table.rows.push_back({report::Cell::of(r.measured.source), report::Cell::of(r.linkClass),
                          report::Cell::of(r.measured.backend), report::Cell::of(r.measured.topology),
                          report::Cell::integral(r.measured.world), report::Cell::integral(r.measured.nodes),
                          report::Cell::integral(r.measured.bytes), report::Cell::seconds(r.measured.seconds),
                          report::Cell::seconds(r.predictedS), report::Cell::ratio(error)});
    sum += std::abs(error);
    worst = std::max(worst, std::abs(error));
    if (r.measured.bytes >= (1 << 20)) {
      ++large;
      sumLarge += std::abs(error);
      worstLarge = std::max(worstLarge, std::abs(error));
    }
  }
  char text[256];
  std::snprintf(text, sizeof text, "- Over %zu rows: mean |error| %.1f%%, worst %.1f%%; from 1 MiB (%d rows): "
                "mean %.1f%%, worst %.1f%%.", rows.size(), 100 * sum / std::max<size_t>(1, rows.size()),
                100 * worst, large, 100 * sumLarge / std::max(1, large), 100 * worstLarge);
  table.notes.push_back(text);
  table.notes.push_back("- `error` = predicted / measured − 1.");
  return table;
}

int allreduceCommand(const PredictOptions& o) {
  const predict::Hardware hardware = predict::loadHardware(o.hardwarePath);
  std::vector<predict::CalibrationRow> rows;
  for (const std::string& path : o.allreduce)
    for (const predict::AllreduceMeasurement& m : predict::readAllreduceCsv(path)) {
      if (m.world < 2 || m.bytes < m.elementBytes) continue;
      const std::string linkClass = m.topology == "native" ? "native" : m.nodes == 1 ? "intra" : "inter";
      rows.push_back({m, linkClass, predict::modelledSeconds(m, hardware)});
    }
  if (rows.empty()) throw common::UsageError("--allreduce: no row over 2 or more ranks to predict");
  printTables({comparisonTable(rows, "All-reduce: measured against predicted on the hardware file")}, o.tables, o.format);
  return 0;
}

int calibrateCommand(const PredictOptions& o) {
  std::vector<predict::AllreduceMeasurement> rows;
  for (const std::string& path : o.calibrate) {
    const auto more = predict::readAllreduceCsv(path);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  const predict::Calibration fit = predict::calibrate(rows);
  report::Table table = comparisonTable(fit.rows, "Calibration: measured all-reduces against the fitted model");
  table.name = "calibration";
  table.notes.back() = "- `error` = predicted / measured − 1, over the fitted rows themselves: the fit's error, not a "
                       "validation (predict other runs with --allreduce).";
  double sum = 0, worst = 0;
  for (const predict::CalibrationRow& r : fit.rows) {
    sum += std::abs(r.predictedS / r.measured.seconds - 1);
    worst = std::max(worst, std::abs(r.predictedS / r.measured.seconds - 1));
  }
  nlohmann::json hw = predict::toJson(fit.hardware);
  hw["description"] = "fitted by dtbench predict --calibrate";
  hw["calibration"] = {{"sources", o.calibrate},
                       {"rows", fit.rows.size()},
                       {"mean_abs_error", sum / std::max<size_t>(1, fit.rows.size())},
                       {"worst_abs_error", worst}};
  if (o.format == ReportFormat::kJson) {
    const nlohmann::json out = {{"tables", report::renderJson({table})}, {"hardware", hw}};
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    printTables({table}, {}, o.format);
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

}  // namespace

int runPredictCommand(const std::vector<std::string>& args) {
  const PredictOptions o = parsePredictOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  if (!o.calibrate.empty()) return calibrateCommand(o);
  if (!o.allreduce.empty()) return allreduceCommand(o);
  const predict::Hardware hardware = predict::loadHardware(o.hardwarePath);
  const predict::MeasuredStep run = predict::loadMeasuredStep(o.run);
  predict::WhatIf whatIf;
  if (!o.topology.empty()) whatIf.topology = comm::Topology::parse(o.topology).name();
  whatIf.backend = o.backend;
  whatIf.sync = o.sync;
  whatIf.bucketMb = o.bucketMb;
  if (o.noOverlap) whatIf.overlap = false;
  whatIf.elementBytes = o.elementBytes;
  whatIf.segmentBytes = o.segmentBytes;
  std::vector<predict::StepPrediction> predictions;
  for (int world : o.worlds) predictions.push_back(predict::predictStep(run, hardware, world, whatIf));
  const predict::StepPrediction baseline = predict::predictStep(run, hardware, 1, whatIf);
  printTables(predict::predictionTables(run, hardware, o.hardwarePath, predictions, baseline), o.tables, o.format);
  if (!o.plotsDir.empty()) {
    const nlohmann::json data = predict::predictionFigureData(run, predictions, baseline, o.measured);
    const std::vector<std::string> files = report::drawFigures(data, o.plotsDir, DTBENCH_PLOT_PYTHON);
    std::fprintf(stderr, "predict: %zu figure files in %s (data: figures.json, redraw: plots.py)\n", files.size(),
                 o.plotsDir.c_str());
  }
  return 0;
}

}  // namespace dtbench::experiments
