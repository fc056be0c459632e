#include "experiments/predict/prediction_band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>

#include "common/sample_spread.h"

namespace dtbench::predict {
namespace {

constexpr double kNormal975 = 1.959964;

// (i/n)^N for i = 0..n: the weights of E[max of N] over n sorted samples.
std::vector<double> powerTable(size_t n, int64_t draws) {
  std::vector<double> table(n + 1);
  for (size_t i = 0; i <= n; ++i)
    table[i] = std::pow(static_cast<double>(i) / static_cast<double>(n), static_cast<double>(draws));
  return table;
}

// Σ_{m=1..N} (1 − (1−q)^m) / m: the fitted tail's part of E[max of N] (compute_spread.h).
double tailSum(double q, int64_t draws) {
  double sum = 0, power = 1;
  for (int64_t m = 1; m <= draws; ++m) {
    power *= 1 - q;
    sum += (1 - power) / static_cast<double>(m);
  }
  return sum;
}

// E[max of N] of the sorted samples `y` as ComputeSpread::expectedMaxS takes it: the mean for N = 1, the
// samples' own order statistic for N <= n, the exponential tail fitted above the top quarter beyond;
// `table` = powerTable(n, N), `beyond` = tailSum(k/n, N) (used for N > n only).
double expectedMaxTabled(const std::vector<double>& y, int64_t draws, const std::vector<double>& table, double beyond) {
  const size_t n = y.size();
  if (draws <= 1) {
    double sum = 0;
    for (const double v : y) sum += v;
    return sum / static_cast<double>(n);
  }
  const bool fitted = draws > static_cast<int64_t>(n);
  const size_t k = fitted ? static_cast<size_t>(std::clamp<int64_t>((static_cast<int64_t>(n) + 3) / 4, 1,
                                                                    static_cast<int64_t>(n) - 1))
                          : 0;
  double sum = 0;
  for (size_t i = 1; i <= n - k; ++i) sum += y[i - 1] * (table[i] - table[i - 1]);
  if (!fitted) return sum;
  const double u = y[n - k - 1];
  double excess = 0;
  for (size_t i = n - k; i < n; ++i) excess += y[i] - u;
  const double q = static_cast<double>(k) / static_cast<double>(n);
  return sum + u * (1 - std::pow(1 - q, static_cast<double>(draws))) + excess / static_cast<double>(k) * beyond;
}

struct Tabled {
  int64_t draws = 1;
  std::vector<double> table;
  double beyond = 0;
};

Tabled tabled(size_t n, int64_t draws) {
  Tabled t;
  t.draws = draws;
  if (draws > 1) t.table = powerTable(n, draws);
  if (draws > static_cast<int64_t>(n)) {
    const int64_t k = std::clamp<int64_t>((static_cast<int64_t>(n) + 3) / 4, 1, static_cast<int64_t>(n) - 1);
    t.beyond = tailSum(static_cast<double>(k) / static_cast<double>(n), draws);
  }
  return t;
}

}  // namespace

double meanHalfWidthS(const std::vector<double>& samples) {
  // The report's interval of a mean (docs/report.md) without its finite-population factor: the predicted
  // steps are not the measured ones.
  return common::meanHalfWidth95(samples);
}

std::map<int64_t, double> stragglerHalfWidthsS(const ComputeSpread& spread, const std::vector<int64_t>& worlds,
                                               int resamples, uint64_t seed) {
  std::map<int64_t, double> half;
  for (const int64_t n : worlds) half[n] = 0;
  if (!spread.known() || resamples < 2) return half;
  const std::vector<double>& x = spread.samplesS;  // sorted
  const size_t count = x.size();
  if (x.front() == x.back()) return half;  // no spread: every resample is the samples themselves
  const int64_t inputWorld = spread.inputWorld;
  const Tabled reference = tabled(count, inputWorld);
  std::vector<size_t> times(count);
  std::vector<double> y(count);
  for (auto& [world, width] : half) {
    if (world == inputWorld || (world <= 1 && inputWorld <= 1)) continue;  // S = 0 exactly
    const Tabled at = tabled(count, world);
    std::mt19937_64 random(seed);  // the same resamples at every N
    double sum = 0, squares = 0;
    for (int r = 0; r < resamples; ++r) {
      std::fill(times.begin(), times.end(), 0);
      for (size_t i = 0; i < count; ++i) ++times[static_cast<size_t>(random() % count)];
      size_t next = 0;  // the resample, sorted: x(j) taken times[j] times
      for (size_t j = 0; j < count; ++j)
        for (size_t c = 0; c < times[j]; ++c) y[next++] = x[j];
      const double straggler = expectedMaxTabled(y, at.draws, at.table, at.beyond) -
                               expectedMaxTabled(y, reference.draws, reference.table, reference.beyond);
      sum += straggler;
      squares += straggler * straggler;
    }
    const double mean = sum / resamples;
    const double variance = std::max(0.0, (squares - resamples * mean * mean) / (resamples - 1));
    width = kNormal975 * std::sqrt(variance);
  }
  return half;
}

double InputUncertainty::stragglerHalfWidth(int64_t world) const {
  const auto it = stragglerHalfWidthS.find(world);
  return it == stragglerHalfWidthS.end() ? 0 : it->second;
}

std::string InputUncertainty::describe() const {
  char text[512];
  double widest = 0;
  int64_t widestAt = 0;
  for (const auto& [world, width] : stragglerHalfWidthS)
    if (width > widest) {
      widest = width;
      widestAt = world;
    }
  std::snprintf(text, sizeof text, "mean compute ± %.6f ms (95 %%, %s); straggler term ± up to %.6f ms%s", computeHalfWidthS * 1e3,
                computeSource.c_str(), widest * 1e3,
                widestAt > 0 ? (" (at N = " + std::to_string(widestAt) + "; 1.96 × its bootstrap standard error over " +
                                std::to_string(kBootstrapResamples) + " seeded resamples of the per-rank samples)")
                                   .c_str()
                             : " (no per-rank spread, or none at these worlds)");
  return text;
}

InputUncertainty inputUncertainty(const MeasuredStep& run, const std::vector<int64_t>& worlds) {
  InputUncertainty u;
  u.inputWorld = run.spread.inputWorld;
  const std::vector<double>* samples = nullptr;
  if (run.computeSamplesS.size() >= 2) {
    samples = &run.computeSamplesS;
    u.computeSource = "Student's t over the critical rank's compute in " + std::to_string(run.computeSamplesS.size()) +
                      " steps";
  } else if (run.described && run.spread.known() && run.spread.inputWorld == 1) {
    samples = &run.spread.samplesS;
    u.computeSource = "Student's t over the description's compute_spread, measured on one rank (its " +
                      std::to_string(run.spread.samplesS.size()) + " samples are the step's compute)";
  } else {
    u.computeSource = run.described ? (run.spread.known() ? "taken as exact: the description's compute_spread is of " +
                                                                std::to_string(run.spread.inputWorld) +
                                                                " ranks, not the per-step compute"
                                                          : std::string("taken as exact: the description has no "
                                                                        "compute_spread"))
                                    : "taken as exact: fewer than 2 steps kept";
  }
  if (samples) {
    u.computeSamples = static_cast<int64_t>(samples->size());
    u.computeHalfWidthS = meanHalfWidthS(*samples);
  }
  u.stragglerHalfWidthS = stragglerHalfWidthsS(run.spread, worlds);
  return u;
}

PredictionBand predictionBand(const StepPrediction& p, const StepPrediction& baseline, const InputUncertainty& u,
                              double computeScale) {
  // The mean compute's ends, as offsets of the step (the compute never below 0).
  const double computeLo = -std::min(u.computeHalfWidthS * computeScale, std::max(0.0, p.computeS - p.stragglerS));
  const double computeHi = u.computeHalfWidthS * computeScale;
  // The straggler term's ends, as offsets: its measured part ± its half-width, kept on the side of 0 that
  // E[max of N] − E[max of N0] is on (a hardware file's fleet part is the file's number: no interval).
  const auto straggler = [&](const StepPrediction& q) {
    const double measured = q.stragglerS - q.fleetStragglerS;
    const double h = u.stragglerHalfWidth(q.world) * computeScale;
    double lo = measured - h, hi = measured + h;
    if (q.world >= u.inputWorld)
      lo = std::max(lo, 0.0);
    else
      hi = std::min(hi, 0.0);
    return Band{std::min(0.0, lo - measured), std::max(0.0, hi - measured)};
  };
  const Band sN = straggler(p), s1 = straggler(baseline);
  PredictionBand band;
  band.stepS = {p.stepS + computeLo + sN.lo, p.stepS + computeHi + sN.hi};
  const double steps = static_cast<double>(p.stepsPerEpoch), baseSteps = static_cast<double>(baseline.stepsPerEpoch);
  band.epochS = {band.stepS.lo * steps, band.stepS.hi * steps};
  const double point = p.epochS > 0 ? baseline.epochS / p.epochS / p.world : 0;
  band.efficiency = {point, point};
  if (p.world == baseline.world || p.epochS <= 0) return band;  // T(1)/T(1): exact
  if (computeLo == 0 && computeHi == 0 && sN.lo == 0 && sN.hi == 0 && s1.lo == 0 && s1.hi == 0) return band;
  for (const double c : {computeLo, computeHi})
    for (const double n : {sN.lo, sN.hi})
      for (const double one : {s1.lo, s1.hi}) {
        const double t = steps * (p.stepS + c + n);
        if (!(t > 0)) {
          band.efficiency.hi = std::numeric_limits<double>::infinity();
          continue;
        }
        const double e = baseSteps * (baseline.stepS + c + one) / (p.world * t);
        band.efficiency.lo = std::min(band.efficiency.lo, e);
        band.efficiency.hi = std::max(band.efficiency.hi, e);
      }
  return band;
}

}  // namespace dtbench::predict
