#pragma once
// The band of a prediction (docs/predict.md, "The band"): how far each predicted step, T and efficiency
// moves with the input's own statistical uncertainty. Two quantities of the input are estimates:
//
//   - the mean compute C, from n per-step samples (the critical rank's compute in every step kept; a
//     description's compute_spread when it was measured on one rank): its 95 % interval is Student's
//     C ± t₀.₉₇₅(n − 1) · s/√n, the report's interval of an extrapolated T (docs/report.md; computed by
//     its own code, RunEpoch::extrapolationHalfWidthS, without the finite-population factor: the predicted
//     steps are not the measured ones);
//   - the straggler term S(N) = E[max of N] − E[max of N0] (compute_spread.h), at each N: its 95 % interval
//     is S(N) ± 1.96 · the bootstrap standard error of S(N) over kBootstrapResamples resamples of the
//     per-rank samples (drawn with replacement, a fixed seed, the tail refitted in each for N beyond the
//     samples), clipped to the sign S(N) must have (E[max of N] grows with N: S ≥ 0 for N ≥ N0, ≤ 0 below).
//
// The band takes each at its interval's ends (interval arithmetic on the box C × S(N) × S(1)), both moving
// the compute before backward, as the straggler term does, so the exposed communication is the point
// prediction's: step(N) ± (δC + δS(N)) × compute_scale, T = steps × step, and the efficiency
// T(1) / (N · T(N)) at the corners of the box that make it least and most (T(1) moves with the same C).
// Moving compute inside backward instead could only hide more or less communication, moving the step by
// less than that: the band is the widest the intervals allow. It covers the true value wherever its
// intervals do: for T two, at least 90 % (Bonferroni) whatever their dependence, more for independent ones;
// for the efficiency of an input of N0 > 1 ranks three (S(1) too), at least 85 %. It does not
// cover the hardware file's numbers, the network model's form, costs not charged, or the input machine
// differing from the target.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/predict/compute_spread.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/step_model.h"

namespace dtbench::predict {

inline constexpr int kBootstrapResamples = 200;
inline constexpr uint64_t kBootstrapSeed = 58;

// 95 % half-width of the mean of `samples` (Student's t with n − 1 degrees of freedom, the report's); 0 for
// fewer than 2 samples or samples that are all equal.
double meanHalfWidthS(const std::vector<double>& samples);

// 95 % half-width of spread.stragglerS(N) for each N of `worlds`: 1.959964 × the standard deviation of the
// straggler term over `resamples` bootstrap resamples of the samples (seeded: the same answer every run;
// the same resamples at every N). 0 for every N where the spread is unknown, and at N = N0 (S = 0 exactly).
std::map<int64_t, double> stragglerHalfWidthsS(const ComputeSpread& spread, const std::vector<int64_t>& worlds,
                                               int resamples = kBootstrapResamples, uint64_t seed = kBootstrapSeed);

// The input's uncertainty, unscaled seconds.
struct InputUncertainty {
  double computeHalfWidthS = 0;  // δC
  int64_t computeSamples = 0;    // n behind C; 0: C taken as exact
  std::string computeSource;     // where the samples are, or why there are none
  std::map<int64_t, double> stragglerHalfWidthS;  // δS(N)
  int inputWorld = 1;                             // N0 of the straggler term

  double stragglerHalfWidth(int64_t world) const;
  // One sentence for the inputs table.
  std::string describe() const;
};

// `worlds`: every world to be banded (the baseline's included).
InputUncertainty inputUncertainty(const MeasuredStep& run, const std::vector<int64_t>& worlds);

struct Band {
  double lo = 0, hi = 0;
};

struct PredictionBand {
  Band stepS, epochS, efficiency;
};

// The band of `p` against the world-1 `baseline`, both predicted from the same input on the same hardware
// with `computeScale`. Each band holds its point value; without spread it is the point value.
PredictionBand predictionBand(const StepPrediction& p, const StepPrediction& baseline, const InputUncertainty& u,
                              double computeScale);

}  // namespace dtbench::predict
