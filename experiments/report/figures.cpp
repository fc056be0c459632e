#include "experiments/report/figures.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

#include "comm/traffic/traffic_recorder.h"
#include "experiments/report/output_set.h"
#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_epoch.h"
#include "experiments/report/runs/run_segments.h"
#include "experiments/report/runs/run_tables.h"
#include "experiments/report/runs/traffic_tables.h"
#include "experiments/report/wire/wire_figures.h"

namespace dtbench::report {
namespace fs = std::filesystem;
namespace {

// A figure's series and bars are told apart as the tables tell their rows apart: by the whole configuration
// (model, dataset, device, mode with its differing settings, setup with its own), never by a part of it.
std::string seriesModel(const Configuration& c) {
  std::string text = c.model + " " + c.dataset;
  if (c.device != "cpu" || c.mode != "ddp") text += " (" + c.device + ", " + c.mode + ")";
  return text;
}

// A resized run's curve a segment a stretch: each segment's label and the index of its first point in
// "batches" (train_history.log's Batch rows, whose Step is the run's global step), so that no line joins two
// worlds without saying so.
nlohmann::json curveSegments(const RunData& run) {
  const std::vector<run::RunSegment>& segments = run.facts.segments;
  nlohmann::json out = nlohmann::json::array();
  int64_t index = 0;
  size_t next = 0;  // the next segment to start
  for (const run::HistoryRow& row : run.history) {
    if (row.type == run::HistoryRowType::kEpoch) continue;
    while (next < segments.size() && row.step >= segments[next].firstGlobalStep) {
      const run::RunSegment& s = segments[next];
      ++next;
      out.push_back({{"label", "segment " + std::to_string(next) + "/" + std::to_string(segments.size()) + ": N=" +
                                   std::to_string(s.worldSize) + " x B=" + std::to_string(s.batchSize)},
                     {"first_batch", index}});
    }
    ++index;
  }
  return out;
}

nlohmann::json curvesOf(const RunData& run) {
  // Cumulative bytes of every rank after each (epoch, step), in training order.
  std::map<std::pair<int, int64_t>, int64_t> perStep;
  for (const run::StepRecord& row : run.batches) perStep[{row.epoch, row.step}] += row.bytesSent;
  std::vector<int64_t> cumulative;
  std::map<int, int64_t> throughEpoch;
  int64_t total = 0;
  for (const auto& [key, bytes] : perStep) {
    total += bytes;
    cumulative.push_back(total);
    throughEpoch[key.first] = total;
  }
  nlohmann::json batches = {{"t_s", nlohmann::json::array()}, {"bytes", nlohmann::json::array()},
                            {"loss", nlohmann::json::array()}, {"accuracy", nlohmann::json::array()}};
  nlohmann::json epochs = {{"t_s", nlohmann::json::array()}, {"bytes", nlohmann::json::array()},
                           {"test_accuracy", nlohmann::json::array()}};
  if (run.history.empty()) return nullptr;
  const double start = run.history.front().timestamp;
  size_t batchIndex = 0;
  for (const run::HistoryRow& row : run.history) {
    if (row.type == run::HistoryRowType::kEpoch) {
      epochs["t_s"].push_back(row.timestamp - start);
      epochs["bytes"].push_back(throughEpoch.count(row.epoch) ? throughEpoch[row.epoch] : total);
      epochs["test_accuracy"].push_back(std::isfinite(row.accuracy) ? nlohmann::json(row.accuracy) : nullptr);
    } else {
      batches["t_s"].push_back(row.timestamp - start);
      batches["bytes"].push_back(batchIndex < cumulative.size() ? cumulative[batchIndex] : total);
      batches["loss"].push_back(row.loss);
      batches["accuracy"].push_back(row.accuracy);
      ++batchIndex;
    }
  }
  nlohmann::json curves = {{"id", run.id}, {"batches", batches}, {"epochs", epochs}};
  if (run.facts.segments.size() > 1) curves["segments"] = curveSegments(run);
  return curves;
}

// Every link's 10 ms bins as a series from the run's first bin, bins without bytes filled with 0.
nlohmann::json linkThroughputOf(const RunData& run) {
  constexpr double kBinSeconds = comm::TrafficRecorder::kBinSeconds;
  double first = run.timeline.front().startS;
  for (const run::TimelineEntry& e : run.timeline) first = std::min(first, e.startS);
  std::map<std::pair<int, int>, std::map<int64_t, int64_t>> bins;
  for (const run::TimelineEntry& e : run.timeline)
    bins[{e.src, e.dst}][std::llround((e.startS - first) / kBinSeconds)] += e.bytes;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& [link, series] : bins) {
    nlohmann::json t = nlohmann::json::array(), rate = nlohmann::json::array();
    for (int64_t bin = series.begin()->first; bin <= series.rbegin()->first + 1; ++bin) {
      auto it = series.find(bin);
      t.push_back(static_cast<double>(bin) * kBinSeconds);
      rate.push_back(it == series.end() ? 0.0 : static_cast<double>(it->second) / kBinSeconds / 1e9);
    }
    links.push_back({{"src", link.first}, {"dst", link.second}, {"t_s", t}, {"GBps", rate}});
  }
  return {{"id", run.id}, {"links", links}};
}

}  // namespace

nlohmann::json figureData(const std::vector<RunData>& runs, const RunSelection& selection,
                          const std::vector<ScalingRow>& rows, std::optional<int> epoch) {
  nlohmann::json data = {{"speedup", nlohmann::json::array()},    {"compute_comm", nlohmann::json::array()},
                         {"traffic", nlohmann::json::array()},    {"batch_times", nlohmann::json::array()},
                         {"curves", nlohmann::json::array()},     {"throughput", nlohmann::json::array()},
                         {"link_throughput", nlohmann::json::array()}, {"wire", nlohmann::json::array()}};
  std::map<std::tuple<std::string, std::string, int>, nlohmann::json> series;
  std::set<const RunData*> throughputRuns;
  for (const ScalingRow& row : rows) {
    const Configuration& c = row.configuration;
    if (const std::optional<double> speedup = row.speedup()) {
      const std::string setup = c.setup.empty() ? "single rank" : c.setup;
      nlohmann::json& s = series[{seriesModel(c), setup, c.batch}];
      if (s.is_null()) s = {{"model", seriesModel(c)}, {"setup", setup}, {"batch", c.batch},
                            {"points", nlohmann::json::array()}};
      nlohmann::json point = {{"N", c.world}, {"speedup", *speedup}, {"extrapolated", row.extrapolated()}};
      // Table 1's speedup_pm: drawn as an error bar; a point without one is drawn as before.
      if (const std::optional<double> half = row.speedupHalfWidth()) point["speedup_pm"] = *half;
      s["points"].push_back(point);
    }
    if (c.world > 1 && row.first().run->worldSize() > 1) {  // --mode dp runs have no collectives of dtbench's
      nlohmann::json bar = {{"label", describe(c)},
                            {"compute_s", row.computeS},
                            {"comm_exposed_s", row.commExposedS},
                            {"overlap_s", row.commTotalS - row.commExposedS},
                            {"T_s", row.epochTimeS}};
      if (row.epochTimeHalfWidthS) bar["T_pm_s"] = *row.epochTimeHalfWidthS;  // Table 1's, an error bar on T
      if (row.baselineS) bar["est_compute_s"] = *row.baselineS / c.world;
      data["compute_comm"].push_back(bar);
    }
    // A baseline serves every series of its model: one bar, without the setup it was listed under.
    if (!throughputRuns.insert(row.first().run).second) continue;
    Configuration own = c;
    if (c.world == 1) own.setup.clear();
    nlohmann::json throughput = nlohmann::json::array();
    for (double s : row.first().epoch.slowestStepS)
      if (s > 0) throughput.push_back(static_cast<double>(c.world) * c.batch / s);
    data["throughput"].push_back({{"label", describe(own)}, {"images_per_s", throughput}});
  }
  for (auto& [key, s] : series)
    if (s["points"].size() > 1) data["speedup"].push_back(s);
  // Batch times a segment at a time: a resized run's rows of one epoch come from several worlds.
  const RunViews views = runViews(runs, selection);
  for (const RunData* view : views.runs) {
    nlohmann::json steps = nlohmann::json::array();
    for (const run::StepRecord* row : batchRowsOf(*view, selection, epoch)) steps.push_back(std::max(0.0, row->stepS));
    if (!steps.empty()) data["batch_times"].push_back({{"id", view->id}, {"step_s", steps}});
  }
  for (const RunData& run : runs) {
    if (run.worldSize() > 1 && !run.traffic.empty())
      data["traffic"].push_back({{"id", run.id}, {"kind", trafficKind(run)}, {"matrix", trafficMatrix(run)}});
    if (!run.timeline.empty()) data["link_throughput"].push_back(linkThroughputOf(run));
    nlohmann::json wire = wireFigureData(run);
    if (!wire.is_null()) data["wire"].push_back(wire);
    nlohmann::json curves = curvesOf(run);
    if (!curves.is_null()) data["curves"].push_back(curves);
  }
  return data;
}

std::vector<std::string> runFigureScript(const std::string& python, const std::string& script,
                                         const std::string& directory, const std::string& hint) {
  const auto quoted = [](const std::string& text) {
    std::string q = "'";
    for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string figuresJson = (fs::path(directory) / "figures.json").string();
  const std::string command = quoted(python) + " " + quoted(script) + " " + quoted(figuresJson) + " " + quoted(directory);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("--plots: cannot run " + python);
  std::vector<std::string> files;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string path = line;
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
    if (!path.empty()) files.push_back(path);
  }
  const int status = pclose(pipe);
  if (status != 0)
    throw std::runtime_error("--plots: " + python + " " + fs::path(script).filename().string() + " failed (exit " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "; its message is above). " +
                             hint + "The data is in " + figuresJson);
  return files;
}

std::vector<std::string> drawFigures(const nlohmann::json& data, const std::string& directory,
                                     const std::string& python) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw std::runtime_error("--plots: cannot create " + directory + ": " + error.message());
  const fs::path dir(directory);
  {
    std::ofstream json(dir / "figures.json");
    json << data.dump(1) << '\n';
    std::ofstream script(dir / "plots.py");
    script << plotsScript();
    if (!json || !script) throw std::runtime_error("--plots: cannot write into " + directory);
  }
  if (python.empty() || !fs::exists(python))
    throw std::runtime_error("--plots needs Debian's python3 with matplotlib (apt-get install python3-matplotlib); "
                             "the figures' data is in " + (dir / "figures.json").string());
  const std::vector<std::string> files =
      runFigureScript(python, (dir / "plots.py").string(), directory, "Is python3-matplotlib installed? ");
  OutputSet written(directory);
  for (const std::string& file : files) written.add(file);
  for (const char* name : {"figures.json", "plots.py"}) written.add(name);
  written.commit();
  return files;
}

}  // namespace dtbench::report
