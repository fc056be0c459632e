#include "experiments/predict/gpu_spread.h"

#include <cmath>
#include <cstdio>

namespace dtbench::predict {

double expectedMaxOfNormals(int64_t n) {
  if (n <= 1) return 0;
  // E[M] = ∫_0^∞ (1 − Φ(x)^N) dx − ∫_{−∞}^0 Φ(x)^N dx, each by Simpson's rule (the integrand jumps by 1 at 0),
  // over [−12, 0] and [0, 14]: beyond, both are below 1e-30 for N up to 65,536. 1 − Φ^N as
  // −expm1(N log1p(−Q)), Q = 1 − Φ, to keep its digits.
  const double draws = static_cast<double>(n);
  const auto above = [&](double x) { return -std::expm1(draws * std::log1p(-0.5 * std::erfc(x / std::sqrt(2.0)))); };
  const auto below = [&](double x) { return std::pow(0.5 * std::erfc(-x / std::sqrt(2.0)), draws); };
  const auto simpson = [](const auto& f, double lo, double hi, int steps) {  // steps even
    const double h = (hi - lo) / steps;
    double sum = f(lo) + f(hi);
    for (int i = 1; i < steps; ++i) sum += (i % 2 ? 4 : 2) * f(lo + i * h);
    return sum * h / 3;
  };
  return simpson(above, 0, 14, 14000) - simpson(below, -12, 0, 12000);
}

double GpuSpread::stragglerS(const ComputeSpread& spread, double meanS, int64_t n) const {
  if (cv == 0) return spread.stragglerS(n);
  const auto excess = [&](int64_t ranks) {
    const double measured = spread.known() ? spread.expectedMaxS(ranks) - spread.meanS() : 0;
    const double fleet = cv * meanS * expectedMaxOfNormals(ranks);
    return std::sqrt(measured * measured + fleet * fleet);
  };
  const int64_t input = spread.known() ? spread.inputWorld : 1;
  return excess(n) - (input > 1 ? excess(input) : 0);
}

std::string GpuSpread::assumed() const {
  char text[160];
  std::snprintf(text, sizeof text,
                "the hardware file's gpu_spread: each GPU's compute × a static factor of cv %g across the fleet, ", cv);
  return std::string(text) +
         "the slowest of N adding cv × mean × e_N (e_N the expected largest of N standard normals), combined with "
         "the measured spread as independent normal factors, sqrt(measured² + fleet²), in the straggler term "
         "(docs/predict.md, \"A fleet's static spread\"); source: " + source;
}

GpuSpread gpuSpreadFromJson(const nlohmann::json& row, const JsonFields& f) {
  const std::string where = "gpu_spread.";
  if (!row.is_object()) f.fail("gpu_spread must be an object {\"cv\": C, \"source\": \"...\"}");
  f.onlyKeys(row, {"cv", "source"}, where);
  GpuSpread spread;
  // A fraction: 0.08 for 8 %; 1 and beyond (a GPU as slow again as the mean, at one σ) is a percentage
  // written as a number, or no fleet of one part.
  spread.cv = f.number(row, "cv", where, true, 1);
  if (spread.cv >= 1) f.fail("gpu_spread.cv must be a fraction below 1 (0.08 for 8 %), not " + row.at("cv").dump());
  spread.source = f.text(row, "source", where);
  if (spread.source.find_first_not_of(" \t\n") == std::string::npos)
    f.fail("gpu_spread.source must say where the figure comes from (a publication, a measurement)");
  return spread;
}

nlohmann::json toJson(const GpuSpread& spread) { return {{"cv", spread.cv}, {"source", spread.source}}; }

}  // namespace dtbench::predict
