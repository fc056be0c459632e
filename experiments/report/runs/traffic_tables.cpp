#include "experiments/report/runs/traffic_tables.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "comm/traffic/traffic_recorder.h"
#include "experiments/report/runs/allreduce_model.h"
#include "experiments/report/runs/compressed_steps.h"
#include "run/run_segment.h"

namespace dtbench::report {
namespace {

bool hasTraffic(const RunData& run) { return trafficLaunch(run).worldSize > 1 && !run.traffic.empty(); }

// Per epoch of the run, the global steps before it (summary.json's finished epochs' steps); the epoch after
// the last finished one, which a run that did not complete was training, counts on from them.
std::map<int64_t, int64_t> stepsBeforeEpoch(const run::RunSummary& summary) {
  std::map<int64_t, int64_t> before;
  int64_t steps = 0;
  for (const run::EpochStats& e : summary.epochs) {
    before[e.epoch] = steps;
    steps += e.steps;
  }
  before[summary.epochs.empty() ? 1 : summary.epochs.back().epoch + 1] = steps;
  return before;
}

// The run as the launch whose traffic it holds saw it: that launch's world (config.json's hosts and devices
// only where it is the run's first world) and the run's batches.csv rows from the launch's first global step on.
RunData launchView(const RunData& run, const TrafficLaunch& launch) {
  RunData view;
  view.path = run.path;
  view.id = run.id;
  view.configRead = run.configRead;
  view.settings = run.settings;
  view.settings.comm.connection.worldSize = launch.worldSize;
  view.facts = run.facts;
  if (launch.worldSize != run.worldSize()) {
    view.facts.devices.clear();
    if (view.facts.world) view.facts.world->hosts.clear();
  }
  view.summary = run.summary;
  const std::map<int64_t, int64_t> before = stepsBeforeEpoch(run.summary);
  for (const run::StepRecord& row : run.batches) {
    const auto it = before.find(row.epoch);
    if (it == before.end()) continue;
    const int64_t step = it->second + row.step;
    if (step >= launch.firstStep && (!launch.lastStep || step <= *launch.lastStep)) view.batches.push_back(row);
  }
  return view;
}

// Table 3's byte model over `run`'s batches.csv rows of the ranks of its world, each step in the form it was
// sent (runs/compressed_steps.h); nullopt where the run has no model.
std::optional<int64_t> expectedBytes(const RunData& run) {
  AllreduceModel model, uncompressed;
  try {
    model = allreduceModel(run);
    uncompressed = allreduceModel(run, /*uncompressed=*/true);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!model.available) return std::nullopt;
  const int n = run.worldSize();
  int64_t expected = 0;
  for (const run::StepRecord& row : run.batches)
    if (row.rank >= 0 && row.rank < n)
      expected += (stepCompressed(run, row) ? model : uncompressed).sentPerStep[row.rank];
  return expected;
}

// Which steps a run's traffic is of, when not the whole run's: "steps 134.. only, the last launch's at N=2".
std::string launchText(const TrafficLaunch& launch) {
  return "steps " + std::to_string(launch.firstStep) + ".." +
         (launch.lastStep ? std::to_string(*launch.lastStep) : "") +
         " only, the last launch's at N=" + std::to_string(launch.worldSize);
}

}  // namespace

TrafficLaunch trafficLaunch(const RunData& run) {
  TrafficLaunch launch;
  launch.firstStep = std::max<int64_t>(1, run.summary.trafficFirstStep.value_or(1));
  launch.worldSize = run.worldSize();
  const std::vector<run::RunSegment>& segments = run.facts.segments;
  if (segments.size() > 1)
    launch.worldSize = static_cast<int>(segments[run::segmentOfStep(segments, launch.firstStep)].worldSize);
  if (const std::optional<int64_t> last = run.summary.trafficLastStep) {
    const std::map<int64_t, int64_t> before = stepsBeforeEpoch(run.summary);
    for (const run::StepRecord& row : run.batches)
      if (const auto it = before.find(row.epoch); it != before.end() && it->second + row.step > *last) {
        launch.lastStep = *last;  // rows after the launch's: a later launch that wrote no traffic
        break;
      }
  }
  return launch;
}

std::vector<std::vector<int64_t>> trafficMatrix(const RunData& run) {
  const int n = trafficLaunch(run).worldSize;
  std::vector<std::vector<int64_t>> matrix(n, std::vector<int64_t>(n, 0));
  for (const run::TrafficEntry& e : run.traffic)
    if (e.src >= 0 && e.src < n && e.dst >= 0 && e.dst < n) matrix[e.src][e.dst] += e.bytes;
  return matrix;
}

std::string trafficKind(const RunData& run) {
  std::set<std::string> kinds;
  for (const run::TrafficEntry& e : run.traffic) kinds.insert(e.kind);
  std::string text;
  for (const std::string& k : kinds) text += (text.empty() ? "" : " + ") + k;
  return text;
}

Table trafficTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "traffic";
  table.title = "Traffic";
  table.columns = {"id", "N", "kind", "flows", "peers_out_in", "total_bytes", "x_model_size", "expected_bytes",
                   "counted_bytes", "counted_over_expected", "links", "mean_link_GBps", "peak_link_GBps"};
  std::vector<std::string> launchNotes;
  for (const RunData& run : runs) {
    if (!hasTraffic(run)) continue;
    const TrafficLaunch launch = trafficLaunch(run);
    std::optional<RunData> view;  // the byte model's run: the whole run, or its last launch
    if (!launch.wholeRun()) {
      view = launchView(run, launch);
      launchNotes.push_back("- `" + run.id + "`: traffic.csv holds " + launchText(launch) +
                            " (the earlier launches' traffic is not kept): `N`, the matrix and `expected_bytes` are "
                            "that launch's.");
    }
    const RunData& modelled = view ? *view : run;
    const int n = launch.worldSize;
    const auto matrix = trafficMatrix(run);
    int64_t flows = 0, total = 0;
    std::string peers;
    for (int r = 0; r < n; ++r) {
      int out = 0, in = 0;
      for (int o = 0; o < n; ++o) {
        out += matrix[r][o] > 0;
        in += matrix[o][r] > 0;
        total += matrix[r][o];
      }
      flows += out;
      peers += (r ? " " : "") + std::to_string(r) + ":" + std::to_string(out) + "/" + std::to_string(in);
    }
    const double modelSize = static_cast<double>(run.facts.modelParameters) * 4.0;
    std::vector<Cell> cells = {Cell::of(run.id), Cell::integral(n), Cell::of(trafficKind(run)),
                               Cell::integral(flows), Cell::of(peers), Cell::integral(total),
                               modelSize > 0 ? Cell::ratio(static_cast<double>(total) / modelSize) : Cell::empty()};
    if (const std::optional<int64_t> expected = expectedBytes(modelled)) {
      cells.push_back(Cell::integral(*expected));
      cells.push_back(Cell::integral(total));
      cells.push_back(*expected > 0 ? Cell::ratio(static_cast<double>(total) / *expected) : Cell::empty());
    } else {
      cells.insert(cells.end(), {Cell::empty(), Cell::integral(total), Cell::empty()});
    }
    std::map<std::pair<int, int>, std::vector<int64_t>> bins;
    for (const run::TimelineEntry& e : run.timeline) bins[{e.src, e.dst}].push_back(e.bytes);
    double sum = 0, peak = 0;
    int64_t count = 0;
    for (const auto& [link, values] : bins)
      for (int64_t bytes : values) {
        const double rate = static_cast<double>(bytes) / comm::TrafficRecorder::kBinSeconds / 1e9;
        sum += rate;
        peak = std::max(peak, rate);
        ++count;
      }
    cells.push_back(Cell::integral(static_cast<int64_t>(bins.size())));
    cells.push_back(count ? Cell::rate(sum / static_cast<double>(count)) : Cell::empty());
    cells.push_back(count ? Cell::rate(peak) : Cell::empty());
    table.rows.push_back(std::move(cells));
  }
  table.notes = {
      "- From traffic.csv over the whole run: `kind` counted (dtbench moved the bytes) or modelled (a backend's own "
      "all-reduce, recorded by the ring formula); `flows` = directed rank pairs that carried bytes; `peers_out_in` = "
      "per rank r, `r:out/in` peers; `x_model_size` = total / (model_parameters × 4 bytes).",
      "- `expected_bytes` = the byte model of Table 3 per step, each step in the form it was sent (--compress "
      "powersgd's first --compress-start steps uncompressed), over every step each rank made (batches.csv rows); "
      "BatchNorm buffer broadcasts are not in traffic.csv. `mean_link_GBps`/`peak_link_GBps` over the 10 ms bins of "
      "traffic_timeline.csv that carried bytes, every link (`links` of them) together."};
  table.notes.insert(table.notes.end(), launchNotes.begin(), launchNotes.end());
  return table;
}

std::vector<Table> trafficMatrixTables(const std::vector<RunData>& runs) {
  std::vector<Table> tables;
  for (const RunData& run : runs) {
    if (!hasTraffic(run)) continue;
    const auto matrix = trafficMatrix(run);
    Table table;
    table.name = "traffic_matrix_" + run.id;
    for (char& c : table.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    const TrafficLaunch launch = trafficLaunch(run);
    table.title = "Traffic matrix: " + run.id + " (bytes, " + trafficKind(run) +
                  (launch.wholeRun() ? "" : "; " + launchText(launch)) + ")";
    table.columns = {"src \\ dst"};
    for (size_t d = 0; d < matrix.size(); ++d) table.columns.push_back(std::to_string(d));
    for (size_t s = 0; s < matrix.size(); ++s) {
      std::vector<Cell> cells = {Cell::integral(static_cast<int64_t>(s))};
      for (int64_t bytes : matrix[s]) cells.push_back(Cell::integral(bytes));
      table.rows.push_back(std::move(cells));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace dtbench::report
