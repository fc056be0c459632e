#pragma once
// The batch-time section of `dtbench report` (docs/report.md, "Batch times"): quantiles of per-batch
// times, the share of time spent in the slowest batches, and periodic stalls in a rank's step sequence.
// Standard library only. Every function rejects a NaN, infinite or negative value with
// std::invalid_argument naming its index.

#include <optional>
#include <string>
#include <vector>

namespace dtbench::report {

struct Quantiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// The q-quantile of `values` (any order) by linear interpolation between order statistics, numpy.percentile's
// default ("linear"): for sorted x[0..n-1], h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
// Example: {1, 2, 3, 4}, q = 0.9: h = 2.7, 3 + 0.7·(4 - 3) = 3.7.
// Throws std::invalid_argument on an empty input, on q outside [0, 1], and on a bad value.
double quantile(std::vector<double> values, double q);

// p50, p90, p99 (as quantile()) and the maximum of `values`. Throws as quantile().
Quantiles quantiles(const std::vector<double>& values);

// The share of sum(values) spent in the ceil(n/10) largest values, in [0, 1]; 0 when the sum is 0.
// Example: 20 values 1 … 20: the 2 largest, (19 + 20) / 210 = 0.1857.
// Throws std::invalid_argument on an empty input and on a bad value.
double slowestTenthShare(const std::vector<double>& values);

// "Every period-th batch, starting at 0-based index phase, is ratio times slower."
struct PeriodicStall {
  int period = 0;           // k >= 2
  int phase = 0;            // 0-based index of the first batch of the class, 0 <= phase < period
  double ratio = 0;         // median of the class / median of the other batches
  int occurrences = 0;      // batches in the class: indices phase, phase + k, ... < n
  double shareOfTime = 0;   // sum over the class / sum over the series, in [0, 1]
};

// Detects "every k-th batch is x times slower" in `series`, the times of one rank's batches in batch order.
// Rule: for each period k = 2 .. min(64, n/3) and phase p = 0 .. k-1, the class C = {i : i mod k == p}
// (at least 3 members) against the rest R. With medC, medR their medians (mean of the middle two for an
// even count), C is a stall when
//   medR > 0, medC >= 3·medR, at least 80% of C's members are >= 2·medR, and fewer than 20% of R's
//   members are >= 2·medR (a heavy tail that is not periodic fails this test).
// ratio = medC / medR, occurrences = |C|, shareOfTime = sum(C) / sum(series). Among all stalls the
// smallest k wins (the fundamental period: its multiples match too), then the largest ratio among that
// k's phases (the lowest phase on a tie). A series of fewer than 6 values has no stall.
// Worked example: 30 batches of 1 s except indices 2, 12, 22, which take 30 s. For k = 10, p = 2:
// C = {30, 30, 30}, R = 27 values of 1, medC = 30 >= 3·1, 3 of 3 members of C are >= 2, 0 of 27 members
// of R are; no k < 10 has a stall class (k = 5, p = 2 has only 3 of its 6 members >= 2), so the result is period 10,
// phase 2, ratio 30, occurrences 3, shareOfTime 90 / 117 = 0.769.
// Returns nullopt when no class is a stall. Throws std::invalid_argument on a bad value.
std::optional<PeriodicStall> detectPeriodicStall(const std::vector<double>& series);

// One line in words with 1-based batch numbers, ratio to one decimal and the share as a whole percent:
// "every 10th batch (from batch 3) is 30.0x slower: 3 batches, 77% of the time".
std::string describe(const PeriodicStall& stall);

}  // namespace dtbench::report
