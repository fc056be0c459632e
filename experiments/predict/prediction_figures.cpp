#include "experiments/predict/prediction_figures.h"

#include <stdexcept>

#include "common/usage_error.h"
#include "experiments/predict/scaling_limits.h"
#include "experiments/report/figures.h"
#include "experiments/report/report.h"
#include "experiments/report/runs/setup_label.h"

namespace dtbench::predict {

nlohmann::json predictionFigureData(const MeasuredStep& run, const std::string& hardware,
                                    const std::vector<StepPrediction>& predictions, const StepPrediction& baseline,
                                    const std::vector<std::string>& measured, std::vector<std::string>& leftOut) {
  nlohmann::json data = {{"speedup", nlohmann::json::array()},
                         {"compute_comm", nlohmann::json::array()},
                         {"title_suffix", "predicted on " + hardware}};
  if (predictions.empty()) return data;
  const StepPrediction& first = predictions.front();
  const std::string setup = report::setupLabel(first.backend, first.topology, first.sync, first.overlap,
                                               first.bucketMb, run.settings.sync.localBnStats) +
                            " (predicted on " + hardware + ")";
  nlohmann::json points = nlohmann::json::array();
  for (const StepPrediction& p : predictions) {
    points.push_back({{"N", p.world}, {"speedup", p.epochS > 0 ? baseline.epochS / p.epochS : 0.0}});
    const double k = static_cast<double>(p.stepsPerEpoch);
    data["compute_comm"].push_back({{"label", "N=" + std::to_string(p.world) + " predicted on " + hardware},
                                    {"compute_s", p.computeS * k},
                                    {"comm_exposed_s", p.commExposedS * k},
                                    {"overlap_s", (p.commTotalS - p.commExposedS) * k},
                                    {"T_s", p.epochS}});
  }
  data["speedup"].push_back({{"setup", setup}, {"model", run.settings.model}, {"batch", run.batchSize}, {"points", points}});
  data["limits"] = limitsFigureEntries(predictions);
  if (measured.empty()) return data;
  report::ReportSettings settings;
  settings.directories = measured;
  std::unique_ptr<report::Report> built;
  try {
    built = report::buildReport(settings);
  } catch (const std::invalid_argument& e) {
    throw common::UsageError(std::string("--measured: ") + e.what());
  }
  for (const report::LeftOutRun& r : built->selection.leftOut)
    leftOut.push_back("run " + r.run->id + ": " + r.reason);
  const nlohmann::json theirs = report::figureData(built->runs, built->selection, built->scaling, std::nullopt);
  for (const nlohmann::json& s : theirs.value("speedup", nlohmann::json::array())) {
    if (s.at("model") == run.settings.model && s.at("batch") == run.batchSize) {
      nlohmann::json series = s;
      series["setup"] = s.at("setup").get<std::string>() + " (measured)";
      data["speedup"].push_back(series);
    } else {
      leftOut.push_back("the measured series " + s.at("model").get<std::string>() + " " + s.at("setup").get<std::string>() +
                        " B=" + std::to_string(s.at("batch").get<int64_t>()) + ": another model or batch than the " +
                        "predicted step's (" + run.settings.model + " B=" + std::to_string(run.batchSize) +
                        "), so its speedup is not comparable");
    }
  }
  for (const nlohmann::json& c : theirs.value("compute_comm", nlohmann::json::array())) {
    nlohmann::json bar = c;
    bar["label"] = c.at("label").get<std::string>() + " measured";
    data["compute_comm"].push_back(bar);
  }
  return data;
}

}  // namespace dtbench::predict
