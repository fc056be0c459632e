#pragma once
// The scaling tables of dtbench report (docs/report.md): Table 1 (time and speedup), Table 2
// (compute vs communication) and Table 3 (bandwidth utilization), from the usable runs.

#include <optional>
#include <string>
#include <vector>

#include "experiments/report/runs/ceiling.h"
#include "experiments/report/runs/configuration.h"
#include "experiments/report/report_table.h"
#include "experiments/report/runs/run_epoch.h"
#include "experiments/report/runs/run_selection.h"
#include "run/speed_of_light.h"

namespace dtbench::report {

// One row of Table 1: a configuration's repeats, reduced to medians, in one series (model,
// dataset, device, mode, setup). Baseline rows (world 1) appear in every series they serve and
// carry that series' setup.
struct ScalingRow {
  Configuration configuration;
  std::vector<const UsableRun*> repeats;
  double epochTimeS = 0;  // T(N), median over repeats
  // An extrapolated T's 95 % interval, ± this: the widest of its repeats' (RunEpoch::
  // extrapolationHalfWidthS); nullopt for a whole epoch or a cut one of one step.
  std::optional<double> epochTimeHalfWidthS;
  double imagesPerS = 0;
  std::optional<double> baselineS;  // T(1) of the same model, dataset, device, mode and batch
  // T(1)'s 95 % interval, ± this (the baseline's epochTimeHalfWidthS); nullopt where T(1) has none.
  std::optional<double> baselineHalfWidthS;
  // The row is the baseline itself (world 1, the very runs T(1) comes from): its speedup is 1 exactly.
  bool isBaseline = false;
  // The critical rank's sums × k, medians over repeats (Table 2).
  double computeS = 0, commTotalS = 0, commExposedS = 0;
  double wallS = 0;  // max_r Σ step_s × k (cost)
  // The critical rank's training FLOP/s over T: the model's training FLOPs per image × its images ÷ its
  // Σ(step_s − data_s), median over repeats; nullopt when a repeat recorded no FLOPs (config.json's
  // speed_of_light, run/speed_of_light.h).
  std::optional<double> achievedFlopsPerS;
  std::optional<run::SpeedOfLight> speedOfLight;  // the first repeat's: its peak
  // The most memory any rank of any repeat held (summary.json's peak_host_bytes, peak_gpu_bytes); nullopt
  // where a repeat recorded none.
  std::optional<int64_t> peakHostBytes, peakGpuBytes;

  const UsableRun& first() const { return *repeats.front(); }
  bool extrapolated() const { return first().epoch.extrapolated; }
  // S(N) = T(1)/T(N); nullopt without a baseline (or a T(N) of 0).
  std::optional<double> speedup() const;
  // S(N)'s 95 % interval, ± this: ratioHalfWidth of T(1) and T(N) (docs/report.md, "Intervals of the speedup
  // and efficiency"). nullopt without a speedup, when neither T has an interval, and for the baseline's own
  // row, whose T(1)/T(1) is exact. The efficiency S/N has this / N.
  std::optional<double> speedupHalfWidth() const;
};

// The 95 % half-width of a ratio a/b of two independent estimates, from their half-widths (nullopt: the term
// is exact): to first order, their relative half-widths add in quadrature, |a/b| · √((δa/a)² + (δb/b)²).
// nullopt when neither term has one; b must not be 0. Symmetric and defined whatever the widths (an endpoint interval
// (a − δa)/(b + δb) … (a + δa)/(b − δb) is not once δb ≥ b), but only a good approximation while the relative
// widths are small: past about 1/3, a ratio's interval is lopsided, which is why Table 1 flags one wider than
// its value.
std::optional<double> ratioHalfWidth(double a, std::optional<double> aHalf, double b, std::optional<double> bHalf);

std::vector<ScalingRow> scalingRows(const RunSelection& selection);

// The columns every per-configuration table opens with (model, dataset, setup, batch, N, nodes) and
// a row's cells for them (nodes empty when unknown).
std::vector<std::string> configurationColumns();
std::vector<Cell> configurationCells(const ScalingRow& row);

Table timeSpeedupTable(const std::vector<ScalingRow>& rows);
Table computeCommTable(const std::vector<ScalingRow>& rows);
// `ceiling` may be empty (no --ceiling).
Table bandwidthTable(const std::vector<ScalingRow>& rows, const std::vector<CeilingRow>& ceiling);

}  // namespace dtbench::report
