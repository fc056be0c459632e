#include "experiments/predict/compute_spread.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace dtbench::predict {
namespace {

// Σ_{i<=upto} x(i) [(i/n)^N − ((i−1)/n)^N] over sorted `x` of n samples: the body of E[max of N].
double orderStatisticSum(const std::vector<double>& sorted, size_t upto, int64_t n) {
  const double count = static_cast<double>(sorted.size()), draws = static_cast<double>(n);
  double sum = 0, below = 0;  // below = ((i−1)/n)^N
  for (size_t i = 1; i <= upto; ++i) {
    const double at = std::pow(static_cast<double>(i) / count, draws);
    sum += sorted[i - 1] * (at - below);
    below = at;
  }
  return sum;
}

void requireSamples(const std::vector<double>& samples, size_t least, int64_t n) {
  if (samples.size() < least) throw std::invalid_argument("step spread: too few samples");
  if (n < 1) throw std::invalid_argument("step spread: N must be >= 1");
}

}  // namespace

double expectedMaxOfSamples(std::vector<double> samples, int64_t n) {
  requireSamples(samples, 1, n);
  std::sort(samples.begin(), samples.end());
  return orderStatisticSum(samples, samples.size(), n);
}

ExponentialTail fitExponentialTail(std::vector<double> samples) {
  requireSamples(samples, 2, 1);
  std::sort(samples.begin(), samples.end());
  const int64_t n = static_cast<int64_t>(samples.size());
  ExponentialTail tail;
  tail.tailSamples = std::clamp<int64_t>((n + 3) / 4, 1, n - 1);
  tail.thresholdS = samples[static_cast<size_t>(n - tail.tailSamples - 1)];
  double excess = 0;
  for (int64_t i = n - tail.tailSamples; i < n; ++i) excess += samples[static_cast<size_t>(i)] - tail.thresholdS;
  tail.meanExcessS = excess / static_cast<double>(tail.tailSamples);
  tail.fraction = static_cast<double>(tail.tailSamples) / static_cast<double>(n);
  return tail;
}

double expectedMaxWithTail(std::vector<double> samples, const ExponentialTail& tail, int64_t n) {
  requireSamples(samples, 2, n);
  std::sort(samples.begin(), samples.end());
  const size_t body = samples.size() - static_cast<size_t>(tail.tailSamples);
  const double stay = 1 - tail.fraction;  // F(u)
  double beyond = 0;                      // Σ_{m=1..N} (1 − (1−q)^m) / m
  double power = 1;
  for (int64_t m = 1; m <= n; ++m) {
    power *= stay;
    beyond += (1 - power) / static_cast<double>(m);
  }
  return orderStatisticSum(samples, body, n) + tail.thresholdS * (1 - std::pow(stay, static_cast<double>(n))) +
         tail.meanExcessS * beyond;
}

ComputeSpread makeComputeSpread(std::vector<double> samples, int inputWorld) {
  std::sort(samples.begin(), samples.end());
  ComputeSpread spread;
  spread.samplesS = std::move(samples);
  spread.inputWorld = std::max(1, inputWorld);
  return spread;
}

double ComputeSpread::meanS() const {
  double sum = 0;
  for (const double x : samplesS) sum += x;
  return samplesS.empty() ? 0 : sum / static_cast<double>(samplesS.size());
}

double ComputeSpread::sdS() const {
  if (samplesS.size() < 2) return 0;
  const double mean = meanS();
  double squares = 0;
  for (const double x : samplesS) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(samplesS.size() - 1));
}

double ComputeSpread::expectedMaxS(int64_t n) const {
  if (!known() || n <= 1) return meanS();  // the max of one draw is the draw: its mean, exactly
  return fitted(n) ? expectedMaxWithTail(samplesS, tail(), n) : expectedMaxOfSamples(samplesS, n);
}

double ComputeSpread::stragglerS(int64_t n) const {
  if (!known()) return 0;
  return expectedMaxS(n) - (inputWorld > 1 ? expectedMaxS(inputWorld) : meanS());
}

std::string ComputeSpread::describe() const {
  char text[640];
  if (!known()) return "not modelled: fewer than 2 per-rank compute samples";
  const ExponentialTail t = tail();
  const double mean = meanS();
  std::snprintf(text, sizeof text,
                "%zu per-rank compute samples (every step kept × %d rank%s): mean %.4f ms, sd %.4f ms (CV %.1f %%), "
                "largest %.4f ms; a step at N pays E[max of N] − %s: the samples' exact order statistic for N <= %zu, "
                "beyond it an exponential tail fitted to the top %lld above %.4f ms (mean excess %.4f ms; assumes an "
                "exponentially decaying tail: overstates a normal's, understates a Pareto's); ranks independent",
                samplesS.size(), inputWorld, inputWorld == 1 ? "" : "s", mean * 1e3, sdS() * 1e3,
                mean > 0 ? 100 * sdS() / mean : 0.0, samplesS.back() * 1e3,
                inputWorld > 1 ? "E[max of the input's ranks]" : "the mean", samplesS.size(),
                static_cast<long long>(t.tailSamples), t.thresholdS * 1e3, t.meanExcessS * 1e3);
  return text;
}

}  // namespace dtbench::predict
