#include "experiments/report/runs/run_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/clock.h"
#include "experiments/report/runs/batch_times.h"
#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_epoch.h"
#include "experiments/report/runs/run_segments.h"

namespace dtbench::report {
namespace {

const UsableRun* usableOf(const RunData& run, const RunSelection& selection) {
  for (const UsableRun& u : selection.usable)
    if (u.run == &run) return &u;
  return nullptr;
}

double orNaN(const std::optional<double>& seconds) { return seconds.value_or(std::nan("")); }

Cell secondsOrEmpty(double value) { return std::isfinite(value) ? Cell::seconds(value) : Cell::empty(); }

}  // namespace

Table leftOutTable(const RunSelection& selection) {
  Table table;
  table.name = "excluded";
  table.title = "Runs left out of the tables";
  table.columns = {"id", "status", "reason"};
  for (const LeftOutRun& left : selection.leftOut)
    table.rows.push_back({Cell::of(left.run->id), Cell::of(left.run->status()), Cell::of(left.reason)});
  table.notes = {"- A run enters Tables 1–3 only when its files are intact (regular files, every value in range, no "
                 "row twice), it completed, and batches.csv holds the chosen epoch for every rank with as many rows "
                 "as summary.json's steps; partial or damaged runs are never mixed in."};
  return table;
}

std::vector<const run::StepRecord*> batchRowsOf(const RunData& run, const RunSelection& selection, std::optional<int> epoch,
                                         int* chosenEpoch) {
  int wanted = 0;
  if (const UsableRun* usable = usableOf(run, selection))
    wanted = usable->epoch.epoch;
  else if (epoch)
    wanted = *epoch;
  else
    for (const run::StepRecord& row : run.batches) wanted = std::max(wanted, static_cast<int>(row.epoch));
  std::vector<const run::StepRecord*> rows;
  for (const run::StepRecord& row : run.batches)
    if (row.epoch == wanted) rows.push_back(&row);
  if (chosenEpoch) *chosenEpoch = wanted;
  return rows;
}

Table batchTimesTable(const std::vector<RunData>& runs, const RunSelection& selection, std::optional<int> epoch) {
  Table table;
  table.name = "batch_times";
  table.title = "Batch times";
  table.columns = {"id", "status", "N", "epoch", "batches", "step_p50_s", "step_p90_s", "step_p99_s", "step_max_s",
                   "data_p50_s", "data_p90_s", "data_p99_s", "data_max_s", "slowest10_share", "periodic_stall"};
  const RunViews views = runViews(runs, selection);  // a resized run a segment a row: one world's batches each
  for (const RunData* view : views.runs) {
    const RunData& run = *view;
    int chosen = 0;
    const std::vector<const run::StepRecord*> rows = batchRowsOf(run, selection, epoch, &chosen);
    if (rows.empty()) continue;
    std::vector<double> step, data, rank0;
    for (const run::StepRecord* row : rows) {
      step.push_back(std::max(0.0, row->stepS));
      data.push_back(std::max(0.0, row->dataS));
      if (row->rank == 0) rank0.push_back(std::max(0.0, row->stepS));
    }
    const Quantiles s = quantiles(step), d = quantiles(data);
    const std::optional<PeriodicStall> stall = detectPeriodicStall(rank0);
    table.rows.push_back({Cell::of(run.id), Cell::of(run.status()), Cell::integral(run.worldSize()),
                          Cell::integral(chosen), Cell::integral(static_cast<int64_t>(rows.size())),
                          Cell::seconds(s.p50), Cell::seconds(s.p90), Cell::seconds(s.p99), Cell::seconds(s.max),
                          Cell::seconds(d.p50), Cell::seconds(d.p90), Cell::seconds(d.p99), Cell::seconds(d.max),
                          Cell::ratio(slowestTenthShare(step)), Cell::of(stall ? describe(*stall) : "none")});
  }
  table.notes = {
      "- Over the chosen epoch's rows of every rank (runs left out of the tables: their last epoch in batches.csv). "
      "Quantiles interpolate linearly between order statistics (numpy's default). `slowest10_share` = share of the "
      "total step time spent in the ⌈n/10⌉ slowest batches (0.10 when all batches are equal).",
      "- `periodic_stall`: in rank 0's step times, a class of batches i ≡ p (mod k) whose median is ≥ 3× the others' "
      "median, with ≥ 80% of its batches and < 20% of the others above 2× that median; the smallest such k."};
  if (views.runs.size() > runs.size())
    table.notes.push_back("- A resized run (a --resume at another world size) is a row per segment (`id` RUN segment "
                          "K/M, `N` its world), each over its own rows of its chosen epoch: one world's steps a row.");
  return table;
}

Table accuracyTable(const std::vector<RunData>& runs, std::optional<double> targetAccuracy) {
  Table table;
  table.name = "accuracy";
  table.title = "Accuracy";
  table.columns = {"id", "status", "N", "batch", "epochs", "final_test_accuracy", "bytes_sent"};
  if (targetAccuracy)
    for (const char* c : {"target_epoch", "time_to_target_s", "bytes_to_target"}) table.columns.push_back(c);
  for (const RunData& run : runs) {
    std::vector<const run::HistoryRow*> epochs;
    double first = std::nan("");
    for (const run::HistoryRow& row : run.history) {
      if (std::isnan(first)) first = row.timestamp;
      if (row.type == run::HistoryRowType::kEpoch) epochs.push_back(&row);
    }
    if (epochs.empty()) continue;
    int64_t bytes = 0;
    for (const run::StepRecord& row : run.batches) bytes += row.bytesSent;
    const double final = epochs.back()->accuracy;
    std::vector<Cell> cells = {Cell::of(run.id), Cell::of(run.status()), Cell::integral(run.worldSize()),
                               Cell::integral(run.batchSize()), Cell::integral(static_cast<int64_t>(epochs.size())),
                               std::isfinite(final) ? Cell::ratio(final) : Cell::empty(), Cell::integral(bytes)};
    if (targetAccuracy) {
      const run::HistoryRow* reached = nullptr;
      for (const run::HistoryRow* e : epochs)
        if (std::isfinite(e->accuracy) && e->accuracy >= *targetAccuracy) {
          reached = e;
          break;
        }
      if (reached) {
        int64_t upTo = 0;
        for (const run::StepRecord& row : run.batches)
          if (row.epoch <= reached->epoch) upTo += row.bytesSent;
        cells.push_back(Cell::integral(reached->epoch));
        cells.push_back(Cell::seconds(reached->timestamp - first));
        cells.push_back(Cell::integral(upTo));
      } else {
        cells.push_back(Cell::of("not reached"));
        cells.insert(cells.end(), 2, Cell::empty());
      }
    }
    table.rows.push_back(std::move(cells));
  }
  table.notes = {"- `final_test_accuracy`: the last epoch's test accuracy (a fraction); `bytes_sent`: Σ bytes_sent of "
                 "every rank over the whole run."};
  if (targetAccuracy)
    table.notes.push_back("- Target " + formatCell(Cell::ratio(*targetAccuracy), Precision::kLong) +
                          ": the first epoch reaching it, the time from the first train_history.log timestamp to that "
                          "epoch's row, and the bytes every rank sent up to its end.");
  return table;
}

const std::vector<std::string>& jobTableColumns() {
  static const std::vector<std::string> columns = {"id",         "path",         "configuration", "ranks",
                                                   "device",     "start",        "start_unix_s",  "duration_s",
                                                   "gpu_seconds", "state",       "error"};
  return columns;
}

Table jobTable(const std::vector<RunData>& runs) {
  Table table;
  table.name = "jobs";
  table.title = "Job table";
  table.columns = jobTableColumns();
  for (const RunData& run : runs) {
    const double start = orNaN(run.summary.startedAt);
    double end = orNaN(run.summary.finishedAt);
    if (!std::isfinite(end)) end = orNaN(run.diedAfter ? run.diedAfter : run.summary.updatedAt);
    if (run.diedAfter) end = std::max(end, start);  // a file's time is coarser than the clock started_at read
    const double duration = end - start;
    std::string error;
    if (run.summary.error)
      error = *run.summary.error;
    else if (!run.problems.empty())
      error = run.problems.front();
    const int ranks = run.worldSize();  // the schema's default when config.json's is damaged (`error` says so)
    // GPU time only for runs on GPUs: a CPU run's ranks hold no GPU (--mode dp: one rank, every GPU it drove).
    const bool gpu = run.settings.device == run::DeviceKind::kCuda;
    const double gpus = static_cast<double>(run.facts.dpDevices.value_or(ranks));
    double gpuSeconds = gpus * duration;
    std::string configuration = describe(configurationOf(run));
    if (!run.resized.empty()) {  // a resized run: its segments said, each one's ranks for the time it held them
      configuration += ", resized: " + run.resized;
      const std::vector<double> held = segmentHeldSeconds(run, end);
      gpuSeconds = 0;
      for (size_t i = 0; i < held.size(); ++i)
        gpuSeconds += static_cast<double>(run.facts.segments[i].worldSize) * held[i];
    }
    table.rows.push_back({Cell::of(run.id), Cell::of(run.path), Cell::of(configuration),
                          Cell::integral(ranks), Cell::of(run::deviceNames().name(run.settings.device)),
                          Cell::of(common::utcText(start)), secondsOrEmpty(start), secondsOrEmpty(duration),
                          gpu ? secondsOrEmpty(gpuSeconds) : Cell::empty(), Cell::of(run.status()),
                          Cell::of(error)});
  }
  table.notes = {"- One row per run found. `ranks` = world size; `start` = started_at from summary.json in UTC "
                 "(`start_unix_s` the same in Unix seconds); `duration_s` = finished_at (else the last update; for a "
                 "run that died without recording its end, the last write into its directory) − "
                 "started_at; `gpu_seconds` = GPUs × duration_s, for runs on GPUs only (one GPU per rank; --mode dp: "
                 "the GPUs its one rank drove)."};
  if (std::any_of(runs.begin(), runs.end(), [](const RunData& run) { return !run.resized.empty(); }))
    table.notes.push_back("- A resized run (a --resume at another world size) is one row, as it is one run directory "
                          "and one job record: `configuration` ends with `resized:` and its segments, `ranks` is its "
                          "first world's, and `gpu_seconds` sums each segment's ranks × the time it held them "
                          "(docs/report.md, \"Resized runs\").");
  return table;
}

}  // namespace dtbench::report
