#pragma once
// SampleSpread: how much repeated measurements of one thing vary (per-step times of a run, per-iteration
// times of one all-reduce size), with the two flags nccl-tests 2.19 raises on its per-iteration output
// (`-I`): a result is noisy when its coefficient of variation is above 5 %, or when one sample is more
// than 1.5 times the median. dtbench report's stragglers table (docs/report.md, "Stragglers") uses it;
// it sits in common/ so that any tool timing repeated work (`dtbench allreduce` has no library of the
// report's) says "noisy" for the same reasons. Standard library only.
//
// Definitions, for samples x_1 … x_n:
// - p50, p99: linear interpolation between order statistics (numpy.percentile's default): for sorted
//   x[0..n-1], h = (n−1)·q, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]);
// - cv_pct = 100 · s / mean, s the sample standard deviation √(Σ(x − mean)² / (n − 1)); none for n < 2
//   (one sample has no spread) or a mean of 0;
// - max_over_p50 = max / p50; none when p50 is 0.
// Worked example: {1, 1, 1, 2}: mean 1.25, s = √(0.75/3) = 0.5, cv_pct = 40; p50 = 1, p99 = 1.97,
// max_over_p50 = 2: noisy on both counts.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::common {

// nccl-tests' thresholds: a coefficient of variation above this (in %) is noisy ...
inline constexpr double kNoisyCvPct = 5.0;
// ... and so is a sample more than this many times the median.
inline constexpr double kNoisySpikeRatio = 1.5;

struct SampleSpread {
  size_t n = 0;
  double min = 0, max = 0, mean = 0, p50 = 0, p99 = 0;
  std::optional<double> cvPct;       // none for n < 2 or a mean of 0
  std::optional<double> maxOverP50;  // none when p50 is 0

  bool noisyCv() const { return cvPct && *cvPct > kNoisyCvPct; }                  // strictly above 5 %
  bool noisySpike() const { return maxOverP50 && *maxOverP50 > kNoisySpikeRatio; }  // strictly above 1.5x
  bool noisy() const { return noisyCv() || noisySpike(); }
  // "no", or the reasons: "CV 7.21% > 5%", "max 1.62x p50 > 1.5x", both joined by "; ".
  std::string noisyText() const;
};

// The q-quantile of values already sorted ascending, by linear interpolation (as above), unchecked: the
// caller has checked that `sorted` is not empty and 0 <= q <= 1 (sampleQuantile below checks for it;
// the report's batch times call this after their own checks).
double quantileOfSorted(const std::vector<double>& sorted, double q);

// The q-quantile (0 <= q <= 1) of `values` by linear interpolation (as above). Throws
// std::invalid_argument naming `what` on an empty input, q outside [0, 1], or a value that is NaN,
// infinite or negative (naming its index).
double sampleQuantile(std::vector<double> values, double q, const std::string& what);

// The spread of `values` (any order). Throws as sampleQuantile.
SampleSpread sampleSpread(const std::vector<double>& values, const std::string& what);

// Student's t for a two-sided 95 % interval with `dof` >= 1 degrees of freedom: the table to 30, then the
// Cornish-Fisher expansion around the normal's 1.959964 (within 0.001 from 30 on).
double studentT95(long long dof);

// The half-width of the 95 % interval of the mean of `samples`: t₀.₉₇₅(n − 1) · s/√n; 0 for fewer than two
// samples or none that differ.
double meanHalfWidth95(const std::vector<double>& samples);

}  // namespace dtbench::common
