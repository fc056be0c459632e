#pragma once
// RunEpoch: one epoch of one run reduced to the sums every table uses (docs/report.md, "Per run:
// the epoch's times"). selectEpoch decides whether a run is usable for the tables and says why not.
//
// Worked example (world 2, epoch of 4 steps out of 8, so k = 2): rank 0 rows (step_s, data_s)
// (0.5, 0.1) x4 -> T_0 = 1.6; rank 1 (0.6, 0.1) x4 -> T_1 = 2.0. T(N) = max = 2.0, critical rank 1,
// extrapolated T = 2.0 * 2 = 4.0.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

struct RankSums {  // one rank's sums over the epoch's rows, not scaled
  int64_t steps = 0;
  int64_t samples = 0;
  double trainS = 0;  // Σ (step_s − data_s)
  double trainSquares = 0;  // Σ (step_s − data_s)², for the spread of an extrapolation
  double stepS = 0, dataS = 0, commTotalS = 0, commExposedS = 0;
  int64_t bytesSent = 0;
  int64_t compressedSteps = 0;  // steps that sent their gradients compressed (runs/compressed_steps.h)
};

struct RunEpoch {
  int epoch = 0;
  int64_t steps = 0;      // rows per rank
  int64_t fullSteps = 0;  // a whole epoch's steps (summary.json)
  double scale = 1;       // k = fullSteps / steps when cut, else 1
  bool extrapolated = false;
  std::vector<RankSums> ranks;
  int critical = 0;               // the lowest rank with the largest trainS
  std::vector<double> slowestStepS;  // per step (in order): max over ranks of step_s
  std::vector<double> rank0StepS;    // rank 0's step_s in step order
  std::vector<double> allStepS, allDataS;  // every rank's rows

  double epochTimeS() const { return ranks[critical].trainS * scale; }  // T(N)
  // An extrapolated T's 95 % interval, ± this: the full epoch's steps × the critical rank's mean step
  // (step_s − data_s), whose standard error s/√n from the n measured steps, Student's t with n − 1
  // degrees of freedom, and the finite-population factor √(1 − n/full) (a whole epoch has none). As if
  // the steps were independent draws: warm-up and drift are not in it. nullopt for a whole epoch and
  // for a cut epoch of one step (no spread to estimate).
  std::optional<double> extrapolationHalfWidthS() const;
  double wallS() const;                                                 // max_r Σ step_s × k
  double imagesPerS() const;  // Σ samples / max_r Σ step_s
};

struct EpochSelection {
  std::optional<RunEpoch> epoch;
  std::string reason;  // why the run is not usable (empty when it is)
};

// The run's epoch `epoch` (nullopt: its last), usable only when docs/report.md's conditions hold.
EpochSelection selectEpoch(const RunData& run, std::optional<int> epoch);

// The number of epochs summary.json lists as finished (0 without a summary).
int finishedEpochs(const RunData& run);

}  // namespace dtbench::report
