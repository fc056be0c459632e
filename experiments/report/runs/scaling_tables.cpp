#include "experiments/report/runs/scaling_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>

#include "comm/topology/ring.h"
#include "experiments/report/runs/allreduce_model.h"
#include "experiments/report/runs/compressed_steps.h"
#include "experiments/report/runs/run_data.h"
#include "experiments/report/runs/step_link_bound.h"
#include "comm/backends/backend.h"
#include "run/compression.h"

namespace dtbench::report {
namespace {

using Settings = std::map<std::string, std::string>;
using SeriesKey = std::tuple<std::string, std::string, std::string, std::string, Settings, std::string>;
using BaselineKey = std::tuple<std::string, std::string, std::string, std::string, Settings, int>;

SeriesKey seriesOf(const Configuration& c) { return {c.model, c.dataset, c.device, c.mode, c.settings, c.setup}; }
BaselineKey baselineOf(const Configuration& c) {
  return {c.model, c.dataset, c.device, c.mode, singleRankSettings(c.settings), c.batch};
}

// The largest of every rank's peak over the repeats; nullopt where a repeat recorded none.
std::optional<int64_t> largestPeak(const std::vector<const UsableRun*>& repeats,
                                   std::optional<std::vector<int64_t>> run::RunSummary::*peaks) {
  std::optional<int64_t> largest;
  for (const UsableRun* r : repeats) {
    const std::optional<std::vector<int64_t>>& ranks = r->run->summary.*peaks;
    if (!ranks || ranks->empty()) return std::nullopt;
    largest = std::max(largest.value_or(0), *std::max_element(ranks->begin(), ranks->end()));
  }
  return largest;
}

// An extrapolated T's 95 % interval over repeats: the widest of theirs; nullopt where none has one.
std::optional<double> widestHalfWidth(const std::vector<const UsableRun*>& repeats) {
  std::optional<double> widest;
  for (const UsableRun* r : repeats)
    if (const std::optional<double> half = r->epoch.extrapolationHalfWidthS())
      widest = std::max(widest.value_or(0.0), *half);
  return widest;
}

ScalingRow reduce(const Configuration& configuration, const std::vector<const UsableRun*>& repeats) {
  ScalingRow row;
  row.configuration = configuration;
  row.repeats = repeats;
  row.epochTimeS = medianOver(repeats, [](const UsableRun& r) { return r.epoch.epochTimeS(); });
  row.imagesPerS = medianOver(repeats, [](const UsableRun& r) { return r.epoch.imagesPerS(); });
  row.epochTimeHalfWidthS = widestHalfWidth(repeats);
  auto critical = [](const UsableRun& r) -> const RankSums& { return r.epoch.ranks[r.epoch.critical]; };
  row.computeS = medianOver(repeats, [&](const UsableRun& r) {
    return (critical(r).trainS - critical(r).commExposedS) * r.epoch.scale;
  });
  row.commTotalS = medianOver(repeats, [&](const UsableRun& r) { return critical(r).commTotalS * r.epoch.scale; });
  row.commExposedS = medianOver(repeats, [&](const UsableRun& r) { return critical(r).commExposedS * r.epoch.scale; });
  row.wallS = medianOver(repeats, [](const UsableRun& r) { return r.epoch.wallS(); });
  const auto recorded = [&](const UsableRun* r) {
    return r->run->facts.speedOfLight && r->run->facts.speedOfLight->flops.training() > 0 && critical(*r).trainS > 0;
  };
  if (std::all_of(repeats.begin(), repeats.end(), recorded)) {
    row.achievedFlopsPerS = medianOver(repeats, [&](const UsableRun& r) {
      return r.run->facts.speedOfLight->flops.training() * static_cast<double>(critical(r).samples) /
             critical(r).trainS;
    });
    row.speedOfLight = repeats.front()->run->facts.speedOfLight;
  }
  row.peakHostBytes = largestPeak(repeats, &run::RunSummary::peakHostBytes);
  row.peakGpuBytes = largestPeak(repeats, &run::RunSummary::peakGpuBytes);
  return row;
}

std::string basis(const ScalingRow& row) {
  const RunEpoch& e = row.first().epoch;
  if (!e.extrapolated) return "measured";
  return "extrapolated (" + std::to_string(e.steps) + " of " + std::to_string(e.fullSteps) + " steps)";
}

// Whether a row's runs are of several ranks: what Tables 2 and 3 are about. A --mode dp row of several GPUs
// (one process: DataParallel sums the gradients inside its backward) has none of dtbench's collectives.
bool communicates(const ScalingRow& row) { return row.configuration.world > 1 && row.first().run->worldSize() > 1; }

// The decimals a value with an interval is printed to (Markdown): the interval's second significant digit.
// nullopt without an interval, or for one of 0.
std::optional<int> intervalDecimals(const std::optional<double>& half) {
  if (!half || *half <= 0) return std::nullopt;
  return 1 - static_cast<int>(std::floor(std::log10(*half)));
}

// The decimals an extrapolated row's seconds are printed to (Markdown): two significant digits of T's interval.
// nullopt for a measured epoch, or one without an interval.
std::optional<int> epochTimeDecimals(const ScalingRow& row) { return intervalDecimals(row.epochTimeHalfWidthS); }

// A value and its interval's half-width as Table 1 prints them (T_s and T_pm_s, speedup and speedup_pm, ...):
// in Markdown both to the interval's second significant digit; without an interval the value as its kind
// prints and the half-width empty; without a value both empty.
std::pair<Cell, Cell> withInterval(const std::optional<double>& value, const std::optional<double>& half,
                                   Cell (*kind)(double)) {
  if (!value) return {Cell::empty(), Cell::empty()};
  if (const std::optional<int> decimals = intervalDecimals(half))
    return {kind(*value).roundedTo(*decimals), kind(*half).roundedTo(*decimals)};
  return {kind(*value), half ? kind(0) : Cell::empty()};
}

Cell maybe(const std::optional<double>& value) { return value ? Cell::ratio(*value) : Cell::empty(); }

// An interval's half-width as a share of its value to two significant digits, "± 290 %", "± 0.53 %"; "no
// interval" without one.
std::string relativeInterval(const std::optional<double>& half, double value) {
  if (!half || value == 0) return "no interval";
  const double percent = 100 * *half / std::abs(value);
  return "± " + formatCell(Cell::ratio(percent).roundedTo(intervalDecimals(percent).value_or(0)), Precision::kShort) +
         " %";
}

// When a run held the machine: from its start to its last write (summary.json), Unix seconds.
std::optional<std::pair<double, double>> heldInterval(const RunData& run) {
  const run::RunSummary& s = run.summary;
  if (!s.startedAt) return std::nullopt;
  const std::optional<double> end = s.finishedAt ? s.finishedAt : s.updatedAt;
  if (!end || *end < *s.startedAt) return std::nullopt;
  return std::make_pair(*s.startedAt, *end);
}

// The machines (boot ids) a run's ranks ran on; empty when it recorded none.
std::set<std::string> machinesOf(const RunData& run) {
  std::set<std::string> machines;
  for (const run::DeviceFacts& d : run.facts.devices)
    if (!d.bootId.empty()) machines.insert(d.bootId);
  return machines;
}

// Ranks x intra-op threads on one machine above the cores its ranks could use (their affinity's
// largest): "4 ranks x 2 threads on 2 cores", or "" when within them or unknown.
std::string oversubscription(const RunData& run) {
  std::map<std::string, std::pair<int64_t, int64_t>> machines;  // boot id -> (threads, cores)
  std::map<std::string, int> ranks;
  for (const run::DeviceFacts& d : run.facts.devices) {
    if (d.bootId.empty() || !d.threads || !d.cores || d.type != "cpu") continue;
    auto& [threads, cores] = machines[d.bootId];
    threads += *d.threads;
    cores = std::max(cores, *d.cores);
    ++ranks[d.bootId];
  }
  for (const auto& [boot, load] : machines)
    if (load.first > load.second)
      return std::to_string(ranks[boot]) + (ranks[boot] == 1 ? " rank" : " ranks") + " with " +
             std::to_string(load.first) + " threads on " + std::to_string(load.second) + " cores";
  return "";
}

// What to do about an oversubscribed run: fewer threads a rank, or, where every rank of a machine ran
// one thread already, fewer ranks on the machine.
std::string oversubscriptionRemedy(const RunData& run) {
  for (const run::DeviceFacts& d : run.facts.devices)
    if (d.type == "cpu" && d.threads && *d.threads > 1) return "Give each rank fewer threads (--threads).";
  return "Each rank ran one thread already: run fewer ranks on the machine (or spread them over more machines).";
}

// Why a run with --compress sent steps uncompressed.
std::string uncompressedReason(const RunData& run) {
  if (!compressesAnyGradient(run))
    return "at --compress-rank " + std::to_string(run.settings.sync.compressRank) +
           " no gradient is worth compressing (config.json's bucket_collectives hold no factors)";
  return "its first " + std::to_string(run.settings.sync.compressStart) +
         " steps (--compress-start) are all-reduced uncompressed";
}

// Runs recorded before the ranks met after rank 0's evaluation (dtbench 0.2.0; docs/report.md, "What
// T(N) includes"): with evaluation on and several ranks, the other ranks' next step held the wait.
bool evaluationInSteps(const RunData& run) {
  if (run.worldSize() < 2 || !run.settings.evaluate) return false;
  const nlohmann::json& version = run.facts.environment.contains("dtbench_version")
                                      ? run.facts.environment.at("dtbench_version")
                                      : nlohmann::json();
  if (!version.is_string()) return true;
  int major = 0, minor = 0;
  if (std::sscanf(version.get<std::string>().c_str(), "%d.%d", &major, &minor) != 2) return true;
  return std::pair(major, minor) < std::pair(0, 2);
}

// The runs that held one machine (a boot id of both) at the same time: each run's others.
std::map<const RunData*, std::vector<const RunData*>> overlappingRuns(const std::vector<const RunData*>& runs) {
  std::map<const RunData*, std::vector<const RunData*>> overlaps;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto ia = heldInterval(*runs[i]);
    if (!ia) continue;
    const std::set<std::string> ma = machinesOf(*runs[i]);
    for (size_t j = i + 1; j < runs.size(); ++j) {
      const auto ib = heldInterval(*runs[j]);
      if (!ib || ia->first >= ib->second || ib->first >= ia->second) continue;
      const std::set<std::string> mb = machinesOf(*runs[j]);
      if (std::none_of(ma.begin(), ma.end(), [&](const std::string& m) { return mb.count(m) > 0; })) continue;
      overlaps[runs[i]].push_back(runs[j]);
      overlaps[runs[j]].push_back(runs[i]);
    }
  }
  return overlaps;
}

}  // namespace

std::optional<double> ratioHalfWidth(double a, std::optional<double> aHalf, double b, std::optional<double> bHalf) {
  if (!aHalf && !bHalf) return std::nullopt;
  // |a/b| · √((δa/a)² + (δb/b)²) written without dividing by a, which may be 0.
  return std::hypot(aHalf.value_or(0) / b, a * bHalf.value_or(0) / (b * b));
}

std::optional<double> ScalingRow::speedup() const {
  if (!baselineS || epochTimeS <= 0) return std::nullopt;
  return *baselineS / epochTimeS;
}

std::optional<double> ScalingRow::speedupHalfWidth() const {
  if (!speedup() || isBaseline) return std::nullopt;
  return ratioHalfWidth(*baselineS, baselineHalfWidthS, epochTimeS, epochTimeHalfWidthS);
}

std::vector<std::string> configurationColumns() { return {"model", "dataset", "setup", "batch", "N", "nodes"}; }

std::vector<Cell> configurationCells(const ScalingRow& row) {
  const Configuration& c = row.configuration;
  // The device and mode are part of the grouping key; shown beside the model where not the default.
  std::string model = c.model;
  if (c.device != "cpu" || c.mode != "ddp") model += " (" + c.device + (c.mode != "ddp" ? ", " + c.mode : "") + ")";
  return {Cell::of(model),         Cell::of(c.dataset),      Cell::of(c.setup.empty() ? "single rank" : c.setup),
          Cell::integral(c.batch), Cell::integral(c.world), c.nodes > 0 ? Cell::integral(c.nodes) : Cell::empty()};
}

std::vector<ScalingRow> scalingRows(const RunSelection& selection) {
  std::map<BaselineKey, const std::vector<const UsableRun*>*> baselines;
  std::set<SeriesKey> series;
  std::set<std::tuple<std::string, std::string, std::string, std::string, Settings>> served;
  // A segment of a resized run is never a baseline: at N = 1 it is a series of its own.
  const auto isBaseline = [](const Configuration& c) { return c.world == 1 && c.segment.empty(); };
  for (const auto& [configuration, repeats] : selection.groups) {
    if (isBaseline(configuration)) {
      baselines[baselineOf(configuration)] = &repeats;
    } else {
      series.insert(seriesOf(configuration));
      served.insert(configuration.baseline());
    }
  }
  // Baselines no distributed series uses form their own series ("single rank").
  for (const auto& [configuration, repeats] : selection.groups)
    if (isBaseline(configuration) && !served.count(configuration.baseline())) series.insert(seriesOf(configuration));

  std::vector<ScalingRow> rows;
  for (const SeriesKey& key : series) {
    const auto& [model, dataset, device, mode, settings, setup] = key;
    std::vector<ScalingRow> members;
    for (const auto& [configuration, repeats] : selection.groups) {
      const bool inSeries = isBaseline(configuration)
                                ? configuration.baseline() ==
                                      std::make_tuple(model, dataset, device, mode, singleRankSettings(settings))
                                : seriesOf(configuration) == key;
      if (!inSeries) continue;
      ScalingRow row = reduce(configuration, repeats);
      row.configuration.setup = setup;
      members.push_back(std::move(row));
    }
    for (ScalingRow& row : members) {
      auto baseline = baselines.find(baselineOf(row.configuration));
      if (baseline == baselines.end()) continue;
      row.baselineS = medianOver(*baseline->second, [](const UsableRun& r) { return r.epoch.epochTimeS(); });
      row.baselineHalfWidthS = widestHalfWidth(*baseline->second);
      row.isBaseline = row.repeats == *baseline->second;
    }
    std::sort(members.begin(), members.end(), [](const ScalingRow& a, const ScalingRow& b) {
      return std::tie(a.configuration.batch, a.configuration.world, a.configuration.nodes) <
             std::tie(b.configuration.batch, b.configuration.world, b.configuration.nodes);
    });
    for (ScalingRow& row : members) rows.push_back(std::move(row));
  }
  return rows;
}

Table timeSpeedupTable(const std::vector<ScalingRow>& rows) {
  Table table;
  table.name = "time_speedup";
  table.title = "Table 1 — time and speedup";
  table.columns = configurationColumns();
  for (const char* c : {"runs", "epoch", "steps", "T_s", "T_pm_s", "basis", "speedup", "speedup_pm", "efficiency",
                        "efficiency_pm", "N_T1_over_TN", "images_per_s", "GFLOP_s_per_rank", "MFU", "of_gemm_probe",
                        "peak_host_GB", "peak_gpu_GB", "check"})
    table.columns.push_back(c);
  // What may have disturbed the measurement: runs that held one machine at once, ranks' threads above
  // its cores, an efficiency above 1.
  std::vector<const RunData*> runs;
  std::set<const RunData*> seen;
  for (const ScalingRow& row : rows)
    for (const UsableRun* r : row.repeats)
      if (seen.insert(r->run).second) runs.push_back(r->run);
  const std::map<const RunData*, std::vector<const RunData*>> overlaps = overlappingRuns(runs);
  std::vector<std::string> superlinear;
  std::vector<const RunData*> evaluatedInSteps;  // "eval in T"
  bool warmUp = false;
  std::map<std::string, std::string> peaks;  // series label -> its peak
  std::vector<std::string> aboveOne;
  std::set<std::string> missing;
  std::vector<std::string> widerThanValue;  // "interval > value": the rows and what is wider, as printed
  for (const ScalingRow& row : rows) {
    const int n = row.configuration.world;
    const std::optional<double> speedup = row.speedup();
    const std::optional<double> speedupHalf = row.speedupHalfWidth();
    if (!row.baselineS)
      missing.insert(row.configuration.model + " " + row.configuration.dataset + " B=" +
                     std::to_string(row.configuration.batch));
    std::vector<Cell> cells = configurationCells(row);
    cells.push_back(Cell::integral(static_cast<int64_t>(row.repeats.size())));
    cells.push_back(Cell::integral(row.first().epoch.epoch));
    cells.push_back(Cell::integral(row.first().epoch.steps));
    const auto [epochTime, epochTimeHalf] = withInterval(row.epochTimeS, row.epochTimeHalfWidthS, Cell::seconds);
    const auto [speedupCell, speedupHalfCell] = withInterval(speedup, speedupHalf, Cell::ratio);
    const auto [efficiency, efficiencyHalf] =
        withInterval(speedup ? std::optional<double>(*speedup / n) : std::nullopt,
                     speedupHalf ? std::optional<double>(*speedupHalf / n) : std::nullopt, Cell::ratio);
    cells.insert(cells.end(), {epochTime, epochTimeHalf, Cell::of(basis(row)), speedupCell, speedupHalfCell, efficiency,
                               efficiencyHalf});
    cells.push_back(maybe(speedup ? std::optional<double>(*speedup * n) : std::nullopt));
    // An interval wider than its value reaches below 0: the extrapolation says next to nothing about the epoch.
    // The efficiency's is the speedup's / N, so wider exactly when the speedup's is.
    std::string wider;
    const auto shown = [](const Cell& cell) { return formatCell(cell, Precision::kShort); };
    if (row.epochTimeHalfWidthS && *row.epochTimeHalfWidthS > row.epochTimeS)
      wider = "T_s " + shown(epochTime) + " ± " + shown(epochTimeHalf) + " s";
    if (speedup && speedupHalf && *speedupHalf > *speedup)
      wider += (wider.empty() ? "" : ", ") + std::string("speedup ") + shown(speedupCell) + " ± " +
               shown(speedupHalfCell) + " (T(1) " + relativeInterval(row.baselineHalfWidthS, *row.baselineS) +
               ", T(N) " + relativeInterval(row.epochTimeHalfWidthS, row.epochTimeS) + ")";
    if (!wider.empty())
      widerThanValue.push_back(row.configuration.model + " B=" + std::to_string(row.configuration.batch) +
                               " N=" + std::to_string(n) + ": " + wider);
    cells.push_back(Cell::ratio(row.imagesPerS));
    std::optional<double> fraction;
    if (row.achievedFlopsPerS) {
      cells.push_back(Cell::ratio(*row.achievedFlopsPerS / 1e9));
      // --mode dp: one rank drives every GPU it sees, so its peak is theirs together.
      const double gpus = static_cast<double>(row.first().run->facts.dpDevices.value_or(1));
      if (const std::optional<double> peak = row.speedOfLight->peakFlopsPerS())
        fraction = *row.achievedFlopsPerS / (*peak * gpus);
      std::string label = row.configuration.model + " on " + row.configuration.device;
      if (const std::optional<run::GemmProbe>& probe = row.speedOfLight->gemmProbe)
        label += " (" + std::to_string(probe->threads) + (probe->threads == 1 ? " thread)" : " threads)");
      peaks.emplace(label, row.speedOfLight->peakLabel());
    } else {
      cells.push_back(Cell::empty());
    }
    const bool gpu = row.speedOfLight && row.speedOfLight->onGpu();
    cells.push_back(gpu ? maybe(fraction) : Cell::empty());
    cells.push_back(!gpu ? maybe(fraction) : Cell::empty());
    if (fraction && *fraction > 1) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f", *fraction);
      aboveOne.push_back(row.configuration.model + " B=" + std::to_string(row.configuration.batch) +
                         " N=" + std::to_string(n) + ": " + text);
    }
    const auto gigabytes = [](const std::optional<int64_t>& bytes) {
      return bytes ? Cell::ratio(static_cast<double>(*bytes) / 1e9) : Cell::empty();
    };
    cells.push_back(gigabytes(row.peakHostBytes));
    cells.push_back(gigabytes(row.peakGpuBytes));
    std::vector<std::string> checks;
    for (const UsableRun* r : row.repeats) {
      if (overlaps.count(r->run) && std::find(checks.begin(), checks.end(), "overlap") == checks.end())
        checks.push_back("overlap");
      if (!oversubscription(*r->run).empty() &&
          std::find(checks.begin(), checks.end(), "oversubscribed") == checks.end())
        checks.push_back("oversubscribed");
      // An evaluation ends each epoch: the first epoch's steps follow none.
      if (r->epoch.epoch > 1 && evaluationInSteps(*r->run)) {
        if (std::find(checks.begin(), checks.end(), "eval in T") == checks.end()) checks.push_back("eval in T");
        if (std::find(evaluatedInSteps.begin(), evaluatedInSteps.end(), r->run) == evaluatedInSteps.end())
          evaluatedInSteps.push_back(r->run);
      }
    }
    if (!wider.empty()) checks.push_back("interval > value");
    if (speedup && n > 1 && *speedup / n > 1) {
      checks.push_back("efficiency > 1");
      char text[48];
      std::snprintf(text, sizeof text, "%.2f", *speedup / n);
      superlinear.push_back(row.configuration.model + " B=" + std::to_string(row.configuration.batch) +
                            " N=" + std::to_string(n) + ": efficiency " + text);
    }
    std::string check;
    for (const std::string& c : checks) check += (check.empty() ? "" : ", ") + c;
    cells.push_back(Cell::of(check));
    table.rows.push_back(std::move(cells));
    warmUp = warmUp || row.first().epoch.epoch == 1;
  }
  table.notes = {
      "- `T_s` = T(N): the largest over ranks of Σ(step_s − data_s) over the epoch's steps: data loading excluded; "
      "host-to-device copy, forward, backward, communication and the update included. Runs cut short with "
      "--max-steps are scaled to the full epoch (× full/steps) and marked `extrapolated`; repeats (`runs` > 1) "
      "give their median.",
      "- `speedup` = T(1)/T(N) at equal per-rank batch (the throughput ratio); `efficiency` = speedup/N; "
      "`N_T1_over_TN` = N·T(1)/T(N), the form some courses ask for (N × speedup, not a speedup). "
      "N = 1 rows are the single-rank baseline of their series.",
      "- Every rank processes 1/N of the epoch, so T(1)/T(N) is strong scaling of the dataset; each rank's work per "
      "step stays constant (its batch is fixed), which is weak scaling per step.",
      "- `T_pm_s` (extrapolated rows): T's 95 % interval is T ± this, from the spread of the critical rank's measured "
      "steps (n of them, `basis`): full steps × t(n − 1) × s/√n × √(1 − n/full), the widest of the repeats'; as if "
      "the steps were independent, so warm-up and drift are not in it. T and it are printed to its second "
      "significant digit (CSV and JSON keep every digit); empty for a whole epoch, which is measured, and for one "
      "step, whose spread is unknown.",
      "- `speedup_pm`, `efficiency_pm`: their 95 % intervals are speedup ± speedup_pm and efficiency ± efficiency_pm, "
      "carried from T(1)'s and T(N)'s (`T_pm_s`; a T without one counts as exact) to first order, their relative "
      "half-widths added in quadrature: speedup_pm = speedup × √((T_pm(1)/T(1))² + (T_pm(N)/T(N))²), "
      "efficiency_pm = speedup_pm/N (N_T1_over_TN's would be N × speedup_pm). Printed like T; empty where neither T "
      "has an interval, and on the baseline's own row, whose T(1)/T(1) = 1 exactly."};
  table.notes.push_back(
      "- `GFLOP_s_per_rank` = the model's training FLOPs per image (forward and backward of its convolutions and "
      "linear layers, 2 per multiply-add, counted from its layers; docs/report.md, \"FLOPs and the speed of "
      "light\") × the critical rank's images ÷ its Σ(step_s − data_s): the rate one rank's arithmetic went at over "
      "T. `MFU` (GPU runs) = that ÷ the GPU's dense datasheet peak for the precision its convolutions and linear "
      "layers ran in; `of_gemm_probe` (CPU runs) = that ÷ the rate of fp32 matrix products measured on the machine "
      "with the run's threads: a fraction of a measured rate, not of a datasheet peak. Empty where a run recorded no "
      "FLOPs (written before they were recorded) or its GPU has no known peak.");
  table.notes.push_back(
      "- `peak_host_GB` = the most host memory any rank held (its peak resident set: what a Slurm --mem limit and "
      "the kernel's out-of-memory killer count), `peak_gpu_GB` = the most GPU memory LibTorch's caching allocator "
      "handed out on any rank's GPU (the allocator reserves somewhat more from the driver); GB = 10^9 bytes, the "
      "largest over the repeats. Empty for runs written before they were recorded (and the GPU's on the CPU).");
  table.notes.push_back(
      "- `check`: what may have disturbed a row's measurement, each explained below where it occurs: `overlap` (its "
      "run shared a machine with another run at the same time), `oversubscribed` (its ranks' threads outnumbered "
      "the machine's cores), `efficiency > 1`, `eval in T` (rank 0's evaluation is in the other ranks' steps), "
      "`interval > value` (a 95 % interval wider than the value it bounds). "
      "Empty: none found (runs written before devices were recorded cannot be checked for the first two).");
  for (const auto& [label, peak] : peaks) table.notes.push_back("- Peak, " + label + ": " + peak + ".");
  for (const std::string& row : aboveOne)
    table.notes.push_back("- " + row + " of its peak: above 1, the run's arithmetic went faster than the peak it is "
                          "measured against (on the CPU: the probe's products do not represent the run's kernels); "
                          "shown as measured, never clipped.");
  std::set<std::pair<const RunData*, const RunData*>> told;
  for (const auto& [run, others] : overlaps)
    for (const RunData* other : others) {
      if (!told.insert(std::minmax(run, other)).second) continue;
      table.notes.push_back("- `overlap`: runs " + run->id + " and " + other->id +
                            " held one machine (the same boot id in config.json's devices) at the same time "
                            "(summary.json's started_at to its last write): they shared its cores, so neither's T is "
                            "what it would take alone. Run such points one at a time (a sweep on one machine does by "
                            "default), or leave one out.");
    }
  for (const RunData* run : runs)
    if (const std::string load = oversubscription(*run); !load.empty())
      table.notes.push_back("- `oversubscribed`: run " + run->id + " had " + load +
                            " (config.json's devices): its threads waited for cores, so its T measures the "
                            "machine's sharing as much as the run. " + oversubscriptionRemedy(*run));
  if (!evaluatedInSteps.empty()) {
    std::string ids;
    for (const RunData* run : evaluatedInSteps) ids += (ids.empty() ? "" : ", ") + run->id;
    table.notes.push_back("- `eval in T`: " + std::string(evaluatedInSteps.size() == 1 ? "run " : "runs ") + ids +
                          (evaluatedInSteps.size() == 1 ? " was" : " were") +
                          " recorded before dtbench 0.2.0 with evaluation on: each rank but 0 waited for rank 0's "
                          "end-of-epoch evaluation inside its next epoch's first step, so T(N) and the communication "
                          "of Table 2 hold it (docs/report.md, \"What T(N) includes\"). Measure again, or with "
                          "--no-eval.");
  }
  for (const std::string& row : superlinear)
    table.notes.push_back("- `efficiency > 1`: " + row + ": more than N times one rank's speed on N ranks. On one "
                          "machine the usual cause is a slowed baseline (runs at the same time, oversubscribed "
                          "cores) or caches; check the row's other flags and the baseline before publishing it.");
  if (!widerThanValue.empty()) {
    std::string list;
    for (const std::string& row : widerThanValue) list += (list.empty() ? "" : "; ") + row;
    table.notes.push_back("- `interval > value`: " + list + ". An interval wider than its value reaches below zero: "
                          "the measured steps are too few, or too uneven, for the extrapolation to the whole epoch "
                          "to say what it takes (and the first-order speedup interval is then a rough guide only). "
                          "Measure more steps (a larger --max-steps) or a whole epoch before reading these rows.");
  }
  if (warmUp)
    table.notes.push_back("- Epoch 1 includes warm-up (allocation and first-step costs): run 2 epochs and report "
                          "the second, or pass --epoch.");
  for (const std::string& m : missing) table.notes.push_back("- No single-rank baseline for " + m + ": no speedup.");
  std::set<std::string> gpus;
  for (const ScalingRow& row : rows)
    if (row.configuration.device.rfind("cuda ", 0) == 0) gpus.insert(row.configuration.device.substr(5));
  if (gpus.size() > 1) {
    std::string list;
    for (const std::string& gpu : gpus) list += (list.empty() ? "" : "; ") + gpu;
    table.notes.push_back("- The runs ran on " + std::to_string(gpus.size()) + " GPU models (" + list +
                          "): each model is a series of its own, with its own baseline, since a speedup across "
                          "two models would compare the GPUs, not the scaling.");
  }
  return table;
}

Table computeCommTable(const std::vector<ScalingRow>& rows) {
  Table table;
  table.name = "compute_comm";
  table.title = "Table 2 — compute vs communication per epoch";
  table.columns = configurationColumns();
  for (const char* c : {"runs", "critical_rank", "T_s", "compute_s", "comm_total_s", "comm_exposed_s", "overlap_s",
                        "est_compute_s", "est_comm_s", "est_comm_error_s"})
    table.columns.push_back(c);
  for (const ScalingRow& row : rows) {
    if (!communicates(row)) continue;
    const int n = row.configuration.world;
    std::vector<Cell> cells = configurationCells(row);
    cells.push_back(Cell::integral(static_cast<int64_t>(row.repeats.size())));
    cells.push_back(Cell::integral(row.first().epoch.critical));
    // Table 1's rule: an extrapolated epoch's seconds to the place its T's interval allows (Markdown).
    const std::optional<int> decimals = epochTimeDecimals(row);
    const auto seconds = [&](double value) {
      return decimals ? Cell::seconds(value).roundedTo(*decimals) : Cell::seconds(value);
    };
    cells.push_back(seconds(row.epochTimeS));
    cells.push_back(seconds(row.computeS));
    cells.push_back(seconds(row.commTotalS));
    cells.push_back(seconds(row.commExposedS));
    cells.push_back(seconds(row.commTotalS - row.commExposedS));
    if (row.baselineS) {
      const double estCompute = *row.baselineS / n;
      const double estComm = row.epochTimeS - estCompute;
      cells.push_back(seconds(estCompute));
      cells.push_back(seconds(estComm));
      cells.push_back(seconds(estComm - row.commExposedS));
    } else {
      cells.insert(cells.end(), 3, Cell::empty());
    }
    table.rows.push_back(std::move(cells));
  }
  table.notes = {
      "- Measured on the critical rank (`critical_rank`: the one whose Σ(step_s − data_s) is T(N); the first "
      "repeat's), so compute_s + comm_exposed_s = "
      "T_s: `compute_s` = Σ(step_s − data_s − comm_exposed_s); `comm_total_s` = Σ of each step's union of collective "
      "intervals (issue to completion); `comm_exposed_s` = Σ from the end of backward to the last completion; "
      "`overlap_s` = comm_total_s − comm_exposed_s (communication hidden behind backward). Scaled like T_s when "
      "extrapolated.",
      "- The estimate made without a measuring tool: `est_compute_s` = T(1)/N, `est_comm_s` = T(N) − T(1)/N; "
      "`est_comm_error_s` = est_comm_s − comm_exposed_s (what the estimate gets wrong).",
      "- Extrapolated rows print their seconds to the place Table 1 prints T (its interval's second significant "
      "digit); CSV and JSON keep every digit."};
  return table;
}

Table bandwidthTable(const std::vector<ScalingRow>& rows, const std::vector<CeilingRow>& ceiling) {
  Table table;
  table.name = "bandwidth";
  table.title = "Table 3 — bandwidth utilization";
  table.columns = configurationColumns();
  for (const char* c : {"epoch", "dtype", "grad_bytes", "compress", "compression_ratio", "busiest_rank", "model_bytes",
                        "counted_bytes", "counted_over_model", "achieved_ratio", "comm_total_s", "GBps", "algbw_GBps", "busbw_GBps", "ceiling_busbw_GBps",
                        "utilization", "link_bound_busbw_GBps", "of_link_bound"})
    table.columns.push_back(c);
  std::set<std::string> remarks;
  bool shapedLinks = false;  // a row's run has link_rate_bps
  for (const ScalingRow& row : rows) {
    if (!communicates(row)) continue;
    const UsableRun& run = row.first();
    shapedLinks = shapedLinks || !linkRatesText(*run.run).empty();
    const RunEpoch& e = run.epoch;
    const int n = row.configuration.world;
    AllreduceModel model;
    AllreduceModel uncompressed;  // the same buckets without --compress: the compression ratio's reference
    try {
      model = allreduceModel(*run.run);
      uncompressed = allreduceModel(*run.run, /*uncompressed=*/true);
    } catch (const std::exception& error) {
      remarks.insert("- " + run.run->id + ": no byte model (" + error.what() + ").");
    }
    int busiest = 0;
    for (int r = 1; r < n && model.available; ++r)
      if (model.sentPerStep[r] > model.sentPerStep[busiest]) busiest = r;
    if (!model.available) busiest = e.critical;
    // Repeats: medians of the busiest rank's communication time and counted bytes (scaled by k).
    const double comm = medianOver(row.repeats, [&](const UsableRun& u) {
      return u.epoch.ranks[busiest].commTotalS * u.epoch.scale;
    });
    const double counted = medianOver(row.repeats, [&](const UsableRun& u) {
      return static_cast<double>(u.epoch.ranks[busiest].bytesSent) * u.epoch.scale;
    });
    const double steps = static_cast<double>(e.steps) * e.scale;  // in the (extrapolated) epoch
    // What the epoch's steps sent: compressed or not, step by step (runs/compressed_steps.h); the byte model
    // of a step is the mean of the two forms weighted by how many steps took each.
    const int64_t compressedSteps = model.available ? e.ranks[busiest].compressedSteps : 0;
    const double share = e.steps > 0 ? static_cast<double>(compressedSteps) / static_cast<double>(e.steps) : 0;
    const AllreduceModel& sent = compressedSteps > 0 ? model : uncompressed;  // dtype, ceiling, link bound
    const auto perStep = [&](double compressedValue, double uncompressedValue) {
      return share * compressedValue + (1 - share) * uncompressedValue;
    };
    const double gradBytes =
        model.available ? perStep(static_cast<double>(model.gradientBytes), static_cast<double>(uncompressed.gradientBytes))
                        : 0;
    std::vector<Cell> cells = configurationCells(row);
    cells.push_back(Cell::integral(e.epoch));
    cells.push_back(model.available ? Cell::of(sent.dtype) : Cell::empty());
    cells.push_back(model.available ? Cell::integral(std::llround(gradBytes)) : Cell::empty());
    const std::string compress = compressionUsed(*run.run, compressedSteps, e.steps);
    cells.push_back(Cell::of(compress));
    cells.push_back(model.available && gradBytes > 0
                        ? Cell::ratio(static_cast<double>(uncompressed.gradientBytes) / gradBytes)
                        : Cell::empty());
    cells.push_back(Cell::integral(busiest));
    const double modelBytes =
        model.available ? perStep(static_cast<double>(model.sentPerStep[busiest]),
                                  static_cast<double>(uncompressed.sentPerStep[busiest])) * steps
                        : 0;
    cells.push_back(model.available ? Cell::integral(std::llround(modelBytes)) : Cell::empty());
    cells.push_back(Cell::integral(std::llround(counted)));
    cells.push_back(model.available && modelBytes > 0 ? Cell::ratio(counted / modelBytes) : Cell::empty());
    const double uncompressedBytes =
        uncompressed.available ? static_cast<double>(uncompressed.sentPerStep[busiest]) * steps : 0;
    cells.push_back(uncompressed.available && counted > 0 ? Cell::ratio(uncompressedBytes / counted) : Cell::empty());
    if (run::compressionRow(run.run->settings.sync.compress).compresses && model.available && compressedSteps < e.steps)
      remarks.insert("- " + run.run->id + ": `compress` " + compress + ": " + uncompressedReason(*run.run) +
                     "; its bytes and rates count each step as it was sent.");
    cells.push_back(Cell::seconds(comm));
    const double moved = model.available ? modelBytes : counted;
    cells.push_back(comm > 0 ? Cell::rate(moved / comm / 1e9) : Cell::empty());
    std::optional<double> busbw;
    if (model.available && comm > 0) {
      const double algbw = gradBytes * steps / comm / 1e9;
      busbw = dtbench::comm::ringBusBandwidth(algbw, n);
      cells.push_back(Cell::rate(algbw));
      cells.push_back(Cell::rate(*busbw));
    } else {
      cells.insert(cells.end(), 2, Cell::empty());
    }
    std::optional<CeilingRow> limit;
    if (model.available && !ceiling.empty())
      limit = closestCeiling(ceiling, comm::name(run.run->settings.comm.connection.backend),
                             run.run->settings.comm.topology.name(), n, sent.dtype,
                             static_cast<double>(sent.gradientBytes) / sent.buckets);
    if (limit && busbw && limit->busbwGBps > 0) {
      cells.push_back(Cell::rate(limit->busbwGBps));
      cells.push_back(Cell::rate(*busbw / limit->busbwGBps));
      remarks.insert("- " + run.run->id + ": ceiling from the " + std::to_string(limit->size) + "-byte row of --ceiling.");
    } else {
      cells.insert(cells.end(), 2, Cell::empty());
      if (!ceiling.empty() && model.available)
        remarks.insert("- " + run.run->id + ": --ceiling has no " + comm::name(run.run->settings.comm.connection.backend) +
                       "/" + run.run->settings.comm.topology.name() + " " + sent.dtype + " row for N=" +
                       std::to_string(n) + ".");
    }
    // The links' bound (link_rate_bps): from the first repeat, whose setup (the link rates) and nodes
    // every repeat shares.
    const StepLinkBound linkBound = stepLinkBound(*run.run, sent);
    if (linkBound.available) {
      const double boundGBps = linkBound.busbwBytesPerSecond / 1e9;
      cells.push_back(Cell::rate(boundGBps));
      cells.push_back(busbw ? Cell::ratio(*busbw / boundGBps) : Cell::empty());
    } else {
      cells.insert(cells.end(), 2, Cell::empty());
      if (!linkBound.why.empty())
        remarks.insert("- " + run.run->id + ": no link bound: " + linkBound.why + ".");
    }
    if (model.fromParameters)
      remarks.insert("- " + run.run->id + ": S from parameters (model_parameters × 4; config.json predates "
                     "bucket_elements).");
    if (!model.available && !model.why.empty())
      remarks.insert("- " + run.run->id + ": " + model.why + ": GBps from counted bytes.");
    table.rows.push_back(std::move(cells));
  }
  table.notes = {
      "- `grad_bytes` = S, the bytes one step all-reduces (every bucket, in the element type sent, with the stop "
      "flag): never the parameter count. `model_bytes` = what the busiest rank sends in the epoch by the topology's "
      "formula (`native`: the ring's 2(N−1)/N·S; point-to-point topologies: their schedule); `counted_bytes` = the "
      "bytes_sent it recorded (BatchNorm buffer broadcasts are in neither).",
      "- `compress` = the run's --compress; `compression_ratio` = S of the same buckets all-reduced uncompressed / S "
      "(from config.json's bucket_collectives: fp16 and bf16 2, powersgd the factors' sizes), each step counted in "
      "the form it was sent (grad_collectives: powersgd's first --compress-start steps go uncompressed, and "
      "`compress` says how many of the epoch's steps were compressed); `achieved_ratio` = "
      "what the busiest rank would have sent uncompressed in the epoch / counted_bytes. comm_total_s includes "
      "--compress's encoding and decoding (batches.csv's compress_s).",
      "- `comm_total_s` here is the busiest rank's (`busiest_rank`, the one the byte model has sending the most), "
      "Table 2's the critical rank's (`critical_rank`): the two differ where those ranks differ (a star's hub "
      "sends most, a leaf may set T).",
      "- `GBps` = model_bytes / comm_total_s (GB = 10^9 bytes); `algbw_GBps` = S·steps / Σ comm_total_s per all-reduce "
      "of the step's gradients; `busbw_GBps` = algbw · 2(N−1)/N (nccl-tests' factor); `utilization` = busbw / the "
      "--ceiling busbw of the same backend, topology, N and type at the size nearest the mean bucket. comm_total_s "
      "includes waiting inside a collective for slower peers, so these rates are what training achieved, not the "
      "link's capacity (that is the ceiling's). With repeats, "
      "comm_total_s and counted_bytes are the repeats' medians and the rates follow from them."};
  if (shapedLinks)
    table.notes.push_back(
        "- Runs on shaped links (config.json's link_rate_bps, the emulated cluster): `link_bound_busbw_GBps` = "
        "S·2(N−1)/N / Σ_b t_min(b), where t_min(b) is the least time bucket b's all-reduce takes on the links (the "
        "busiest host link's bytes under the topology over its TCP payload rate R/8 × 1448/1514 for R bit/s; "
        "comm/topology/link_bound.h); `of_link_bound` = busbw_GBps / link_bound_busbw_GBps. Empty off shaped links "
        "and when every rank is on one host.");
  for (const std::string& r : remarks) table.notes.push_back(r);
  return table;
}

}  // namespace dtbench::report
