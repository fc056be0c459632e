#include "experiments/report/runs/batch_times.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iosfwd>
#include <numeric>
#include <stdexcept>

#include "common/sample_spread.h"

namespace dtbench::report {
namespace {

constexpr int kMinStallSeries = 6;
constexpr int kMaxStallPeriod = 64;
constexpr int kMinClassSize = 3;
constexpr double kStallMedianRatio = 3.0;
constexpr double kSlowFactor = 2.0;
constexpr double kClassSlowShare = 0.8;
constexpr double kRestSlowShare = 0.2;

void checkValues(const std::vector<double>& values, const char* what) {
  if (values.empty()) {
    throw std::invalid_argument(std::string(what) + ": no values; pass at least one batch time");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || values[i] < 0) {
      throw std::invalid_argument(std::string(what) + ": value at index " + std::to_string(i) + " is " +
                                  std::to_string(values[i]) +
                                  "; batch times must be finite and non-negative, fix or drop that row");
    }
  }
}

// quantile() on values already sorted ascending and checked.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return common::quantileOfSorted(values, 0.5);
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

size_t countAtLeast(const std::vector<double>& values, double threshold) {
  return static_cast<size_t>(
      std::count_if(values.begin(), values.end(), [threshold](double v) { return v >= threshold; }));
}

// The class {i : i mod period == phase} as a stall, or nullopt when it is not one (rule in the header).
std::optional<PeriodicStall> stallOf(const std::vector<double>& series, int period, int phase, double total) {
  std::vector<double> members, rest;
  for (size_t i = 0; i < series.size(); ++i) {
    (static_cast<int>(i % static_cast<size_t>(period)) == phase ? members : rest).push_back(series[i]);
  }
  if (members.size() < static_cast<size_t>(kMinClassSize) || rest.empty()) return std::nullopt;
  const double medC = median(members), medR = median(rest);
  if (!(medR > 0) || medC < kStallMedianRatio * medR) return std::nullopt;
  const double slow = kSlowFactor * medR;
  if (static_cast<double>(countAtLeast(members, slow)) < kClassSlowShare * static_cast<double>(members.size())) {
    return std::nullopt;
  }
  if (static_cast<double>(countAtLeast(rest, slow)) >= kRestSlowShare * static_cast<double>(rest.size())) {
    return std::nullopt;
  }
  PeriodicStall stall;
  stall.period = period;
  stall.phase = phase;
  stall.ratio = medC / medR;
  stall.occurrences = static_cast<int>(members.size());
  stall.shareOfTime = total > 0 ? sum(members) / total : 0;
  return stall;
}

std::string ordinal(int n) {
  const int lastTwo = n % 100, last = n % 10;
  const char* suffix = "th";
  if (lastTwo < 11 || lastTwo > 13) {
    if (last == 1) suffix = "st";
    if (last == 2) suffix = "nd";
    if (last == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  checkValues(values, "quantile");
  if (!(q >= 0 && q <= 1)) {
    throw std::invalid_argument("quantile: q = " + std::to_string(q) + " is outside [0, 1]; pass a fraction");
  }
  std::sort(values.begin(), values.end());
  return common::quantileOfSorted(values, q);
}

Quantiles quantiles(const std::vector<double>& values) {
  checkValues(values, "quantiles");
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  Quantiles result;
  result.p50 = common::quantileOfSorted(sorted, 0.5);
  result.p90 = common::quantileOfSorted(sorted, 0.9);
  result.p99 = common::quantileOfSorted(sorted, 0.99);
  result.max = sorted.back();
  return result;
}

double slowestTenthShare(const std::vector<double>& values) {
  checkValues(values, "slowestTenthShare");
  const double total = sum(values);
  if (total == 0) return 0;
  const size_t slowest = (values.size() + 9) / 10;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  return std::accumulate(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(slowest), 0.0) / total;
}

std::optional<PeriodicStall> detectPeriodicStall(const std::vector<double>& series) {
  if (series.empty()) return std::nullopt;
  checkValues(series, "detectPeriodicStall");
  const int n = static_cast<int>(series.size());
  if (n < kMinStallSeries) return std::nullopt;
  const double total = sum(series);
  const int maxPeriod = std::min(kMaxStallPeriod, n / 3);
  for (int period = 2; period <= maxPeriod; ++period) {
    std::optional<PeriodicStall> best;
    for (int phase = 0; phase < period; ++phase) {
      auto stall = stallOf(series, period, phase, total);
      if (stall && (!best || stall->ratio > best->ratio)) best = stall;
    }
    if (best) return best;
  }
  return std::nullopt;
}

std::string describe(const PeriodicStall& stall) {
  char ratio[32], share[32];
  std::snprintf(ratio, sizeof ratio, "%.1f", stall.ratio);
  std::snprintf(share, sizeof share, "%.0f", stall.shareOfTime * 100);
  return "every " + ordinal(stall.period) + " batch (from batch " + std::to_string(stall.phase + 1) + ") is " +
         ratio + "x slower: " + std::to_string(stall.occurrences) + " batches, " + share + "% of the time";
}

}  // namespace dtbench::report
