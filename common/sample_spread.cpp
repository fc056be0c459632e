#include "common/sample_spread.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dtbench::common {
namespace {

void checkSamples(const std::vector<double>& values, const std::string& what) {
  if (values.empty()) throw std::invalid_argument(what + ": no samples; a spread needs at least one");
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]) || values[i] < 0)
      throw std::invalid_argument(what + ": sample at index " + std::to_string(i) + " is " +
                                  std::to_string(values[i]) + "; times must be finite and non-negative");
}

std::string fixed(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

double quantileOfSorted(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::string SampleSpread::noisyText() const {
  std::string text;
  if (noisyCv()) text = "CV " + fixed(*cvPct, "%.2f") + "% > " + fixed(kNoisyCvPct, "%g") + "%";
  if (noisySpike()) {
    if (!text.empty()) text += "; ";
    text += "max " + fixed(*maxOverP50, "%.2f") + "x p50 > " + fixed(kNoisySpikeRatio, "%g") + "x";
  }
  return text.empty() ? "no" : text;
}

double sampleQuantile(std::vector<double> values, double q, const std::string& what) {
  checkSamples(values, what);
  if (!(q >= 0 && q <= 1))
    throw std::invalid_argument(what + ": quantile " + std::to_string(q) + " is outside [0, 1]");
  std::sort(values.begin(), values.end());
  return quantileOfSorted(values, q);
}

SampleSpread sampleSpread(const std::vector<double>& values, const std::string& what) {
  checkSamples(values, what);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  SampleSpread spread;
  spread.n = sorted.size();
  spread.min = sorted.front();
  spread.max = sorted.back();
  spread.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(spread.n);
  spread.p50 = quantileOfSorted(sorted, 0.5);
  spread.p99 = quantileOfSorted(sorted, 0.99);
  if (spread.n >= 2 && spread.mean > 0) {
    double squares = 0;
    for (double x : sorted) squares += (x - spread.mean) * (x - spread.mean);
    spread.cvPct = 100 * std::sqrt(squares / static_cast<double>(spread.n - 1)) / spread.mean;
  }
  if (spread.p50 > 0) spread.maxOverP50 = spread.max / spread.p50;
  return spread;
}

double studentT95(long long dof) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) throw std::invalid_argument("studentT95: " + std::to_string(dof) + " degrees of freedom (at least 1)");
  if (dof <= 30) return kTable[dof - 1];
  const double z = 1.959964, v = static_cast<double>(dof);
  return z + (z * z * z + z) / (4 * v) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v) +
         (3 * std::pow(z, 7) + 19 * std::pow(z, 5) + 17 * z * z * z - 15 * z) / (384 * v * v * v);
}

double meanHalfWidth95(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  const auto [least, most] = std::minmax_element(samples.begin(), samples.end());
  if (*least == *most) return 0;  // no spread: the mean is exact (the sums below would leave rounding)
  const double n = static_cast<double>(samples.size());
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double squares = 0;
  for (const double x : samples) squares += (x - mean) * (x - mean);
  return studentT95(static_cast<long long>(samples.size()) - 1) * std::sqrt(squares / (n - 1) / n);
}

}  // namespace dtbench::common
