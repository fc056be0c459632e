#include "experiments/report/runs/cost_tables.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "experiments/report/runs/batch_times.h"
#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/run_epoch.h"
#include "experiments/report/runs/run_selection.h"

namespace dtbench::report {
namespace {

double trainSamples(const ScalingRow& row) {
  return static_cast<double>(row.first().run->facts.trainSamples);
}

// Rank-hours of the epoch: N ranks × wall_s.
double rankHours(const ScalingRow& row) { return row.configuration.world * row.wallS / 3600.0; }

// GPU-hours, for rows that ran on GPUs only (one per rank; --mode dp: every GPU its one rank drove): a CPU
// run holds no GPU, and pricing its rank-hours as GPU-hours would cost it as one.
std::optional<double> gpuHours(const ScalingRow& row) {
  if (row.first().run->settings.device != run::DeviceKind::kCuda) return std::nullopt;
  const double gpus = static_cast<double>(row.first().run->facts.dpDevices.value_or(row.configuration.world));
  return gpus * row.wallS / 3600.0;
}

std::optional<double> costPerMillion(const ScalingRow& row, std::optional<double> price) {
  const double samples = trainSamples(row);
  const std::optional<double> hours = gpuHours(row);
  if (!price || !hours || samples <= 0) return std::nullopt;
  return *hours * *price / samples * 1e6;
}

// N·B / max_r step_s for every step of one run.
std::vector<double> stepThroughput(const UsableRun& run) {
  std::vector<double> values;
  const double images = static_cast<double>(run.configuration.world) * run.configuration.batch;
  for (double s : run.epoch.slowestStepS)
    if (s > 0) values.push_back(images / s);
  return values;
}

}  // namespace

Table costTable(const std::vector<ScalingRow>& rows, std::optional<double> gpuHourPrice) {
  Table table;
  table.name = "cost";
  table.title = "Cost and throughput";
  table.columns = configurationColumns();
  for (const char* c : {"wall_s", "rank_hours", "gpu_hours", "cost_per_epoch", "cost_per_million_images",
                        "images_per_s_p10", "images_per_s_p50", "images_per_s_p90"})
    table.columns.push_back(c);
  bool cpuRows = false;
  for (const ScalingRow& row : rows) {
    std::vector<Cell> cells = configurationCells(row);
    const std::optional<double> hours = gpuHours(row);
    cpuRows = cpuRows || !hours;
    cells.push_back(Cell::seconds(row.wallS));
    cells.push_back(Cell::rate(rankHours(row)));
    cells.push_back(hours ? Cell::rate(*hours) : Cell::empty());
    if (gpuHourPrice && hours)
      cells.push_back(Cell::rate(*hours * *gpuHourPrice));
    else
      cells.push_back(Cell::empty());
    const std::optional<double> perMillion = costPerMillion(row, gpuHourPrice);
    cells.push_back(perMillion ? Cell::ratio(*perMillion) : Cell::empty());
    bool measured = true;
    for (const UsableRun* r : row.repeats) measured = measured && !stepThroughput(*r).empty();
    if (!measured) {
      cells.insert(cells.end(), 3, Cell::empty());
    } else {
      for (double q : {0.1, 0.5, 0.9})
        cells.push_back(Cell::ratio(medianOver(row.repeats, [q](const UsableRun& r) {
          return quantile(stepThroughput(r), q);
        })));
    }
    table.rows.push_back(std::move(cells));
  }
  table.notes = {"- `wall_s` = the largest over ranks of Σ step_s (data wait included), scaled to the full epoch when "
                 "extrapolated; `rank_hours` = N × wall_s / 3600 per epoch; `gpu_hours` = GPUs × wall_s / 3600, for "
                 "runs on GPUs only (one per rank; --mode dp: the GPUs its rank drove)."};
  if (cpuRows)
    table.notes.push_back("- Rows that ran on the CPU have no `gpu_hours` and are not costed at a GPU-hour price: "
                          "their ranks held CPU cores, not GPUs.");
  if (gpuHourPrice)
    table.notes.push_back("- At " + formatCell(Cell::ratio(*gpuHourPrice), Precision::kLong) +
                          " per GPU-hour: `cost_per_epoch` = gpu_hours × price; `cost_per_million_images` = "
                          "cost_per_epoch / train_samples × 10^6.");
  else
    table.notes.push_back("- Pass --gpu-hour-price P for the cost columns.");
  table.notes.push_back("- Throughput spread: p10/p50/p90 over the epoch's steps of N·B / (the slowest rank's step_s), "
                        "images/s (repeats: the median of each run's quantile).");
  return table;
}

Table bestConfigurationTable(const std::vector<ScalingRow>& rows, std::optional<double> gpuHourPrice) {
  Table table;
  table.name = "best";
  table.title = "Best configuration per world size";
  table.columns = {"N", "fastest", "fastest_images_per_s", "cheapest", "cheapest_cost_per_million_images"};
  std::map<int, const ScalingRow*> fastest, cheapest;
  auto rate = [](const ScalingRow& r) { return r.wallS > 0 ? trainSamples(r) / r.wallS : 0; };
  for (const ScalingRow& row : rows) {
    // Baseline rows repeat in every series with equal values: the strict comparisons keep the first.
    const int n = row.configuration.world;
    if (!fastest.count(n) || rate(row) > rate(*fastest[n])) fastest[n] = &row;
    const std::optional<double> cost = costPerMillion(row, gpuHourPrice);
    if (cost && (!cheapest.count(n) || *cost < *costPerMillion(*cheapest[n], gpuHourPrice))) cheapest[n] = &row;
  }
  auto name = [](const ScalingRow& r) {
    const Configuration& c = r.configuration;
    return c.model + " " + c.dataset + " B=" + std::to_string(c.batch) +
           (c.world > 1 ? " " + c.setup : std::string()) + (c.placement.empty() ? "" : ", " + c.placement);
  };
  for (const auto& [n, best] : fastest) {
    std::vector<Cell> cells = {Cell::integral(n), Cell::of(name(*best)), Cell::ratio(rate(*best))};
    if (cheapest.count(n)) {
      cells.push_back(Cell::of(name(*cheapest[n])));
      cells.push_back(Cell::ratio(*costPerMillion(*cheapest[n], gpuHourPrice)));
    } else {
      cells.insert(cells.end(), 2, Cell::empty());
    }
    table.rows.push_back(std::move(cells));
  }
  table.notes = {"- Fastest: the most training images per second of epoch wall time (train_samples / wall_s); "
                 "cheapest: the least cost per million images (with --gpu-hour-price)."};
  return table;
}

}  // namespace dtbench::report
