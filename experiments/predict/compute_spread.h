#pragma once
// ComputeSpread: how the ranks' compute spreads from step to step, and what a synchronous step of N ranks
// pays for it (docs/predict.md, "The spread of the ranks' compute"). Every rank waits in each step for
// the slowest, so a step of N ranks takes the largest of N per-rank computes, not their mean; for
// independent draws of one distribution F its expectation is
//
//   E[max of N] = ∫ x d(F(x)^N).
//
// From n measured samples x(1) <= ... <= x(n) (the per-rank compute of every step kept: measured_step.h):
//   - N <= n: the empirical distribution, exactly: E[max of N] = Σ_i x(i) [(i/n)^N − ((i−1)/n)^N];
//   - N > n: the samples cannot show what a rank slower than all of them costs. The top k = ⌈n/4⌉
//     samples (at least 1, at most n − 1) are fitted by an exponential tail above u = x(n−k), with
//     scale β = their mean excess over u (peaks over a threshold, a generalized Pareto of shape 0), the
//     body below u staying empirical: F(x) = 1 − q·e^(−(x−u)/β) above u, q = k/n, and then
//       E[max of N] = Σ_{i<=n−k} x(i) [(i/n)^N − ((i−1)/n)^N] + u (1 − (1−q)^N) + β Σ_{m=1..N} (1 − (1−q)^m)/m.
//     Assumed: the tail decays exponentially (the Gumbel domain: normal, exponential, gamma); a normal's
//     lighter tail is overstated by it, a Pareto's heavier one understated.
//
// Independent draws are assumed: a slowdown every rank shares in the same step (a common cause) is
// not a spread between them and costs no wait.

#include <cstdint>
#include <string>
#include <vector>

namespace dtbench::predict {

// The exponential tail fitted above u (see above).
struct ExponentialTail {
  double thresholdS = 0;   // u = x(n−k)
  double fraction = 0;     // q = k / n, the share of the samples above the threshold
  double meanExcessS = 0;  // β
  int64_t tailSamples = 0; // k
};

// E[max of N] of the empirical distribution of `samples` (any order), exact. Needs n >= 1 and N >= 1.
double expectedMaxOfSamples(std::vector<double> samples, int64_t n);

// The tail of `samples` (n >= 2) as fitted above.
ExponentialTail fitExponentialTail(std::vector<double> samples);

// E[max of N] of the empirical body below the tail's threshold and the fitted tail above it.
double expectedMaxWithTail(std::vector<double> samples, const ExponentialTail& tail, int64_t n);

struct ComputeSpread {
  std::vector<double> samplesS;  // every per-rank compute measured, seconds, sorted
  int inputWorld = 1;            // the ranks of the run they were measured on

  bool known() const { return samplesS.size() >= 2; }
  double meanS() const;
  double sdS() const;
  // Exact (the samples' own order statistic) for N <= samples, the fitted tail beyond.
  bool fitted(int64_t n) const { return n > static_cast<int64_t>(samplesS.size()); }
  double expectedMaxS(int64_t n) const;
  // What a step at world N pays for the spread beyond what the input run's steps already held:
  // E[max of N] − E[max of the input's ranks] (on one input rank, E[max of N] − the mean); 0 unknown.
  double stragglerS(int64_t n) const;
  ExponentialTail tail() const { return fitExponentialTail(samplesS); }
  // One sentence: the samples, their mean and spread, the rule and the fit with its assumption.
  std::string describe() const;
};

// `samples` sorted, as ComputeSpread holds them.
ComputeSpread makeComputeSpread(std::vector<double> samples, int inputWorld);

}  // namespace dtbench::predict
