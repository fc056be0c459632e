#pragma once
// GpuSpread: a fleet's static per-GPU variation, a hardware file's optional `gpu_spread` row (docs/predict.md,
// "A fleet's static spread"):
//
//   "gpu_spread": {"cv": 0.08, "source": "Sinha et al., SC'22: ..."}
//
// GPUs of one part differ (manufacturing, power management, cooling): each rank's compute is the mean μ
// times its GPU's own factor, constant over the run, whose spread over the fleet is `cv` (standard deviation /
// mean). A synchronous step waits for the slowest rank, so N GPUs drawn from the fleet add, on their own,
// cv · μ · e_N, e_N the expected largest of N standard normals (e_2 = 1/√π, e_128 ≈ 2.6). On top of the
// input's measured spread D(N) = E[max of N] − mean (compute_spread.h), the two are combined as independent
// normal factors combine:
//
//   excess(N) = √( D(N)² + (cv · μ · e_N)² ),   straggler(N) = excess(N) − excess(N0)
//
// exact where both are normal (the sum of independent normals is normal, and E[max] − mean is linear in σ);
// for a measured spread that is not normal it lies between the larger of the two (a lower bound of
// E[max of a sum]) and their sum (an upper one). N0 is the input's ranks (excess(1) = 0): a multi-rank input's
// own GPUs are taken as drawn from the fleet. `source` is required: the row is a cited figure, never a knob.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/predict/compute_spread.h"
#include "experiments/predict/json_fields.h"

namespace dtbench::predict {

// E[max of N independent standard normals]: 0 for N = 1, 1/√π for 2, ≈ 2.604 for 128, ≈ 3.04 for 512
// (numerical integration of ∫ (1 − Φ(x)^N) dx − ∫ Φ(x)^N dx, to about 1e-7).
double expectedMaxOfNormals(int64_t n);

struct GpuSpread {
  double cv = 0;       // the fleet's per-GPU standard deviation / mean of a GPU's compute time
  std::string source;  // where the figure comes from

  // The straggler term at N with this spread on top of the input's measured one, unscaled seconds; `meanS` the
  // mean per-rank compute (μ). With cv 0, exactly spread.stragglerS(n).
  double stragglerS(const ComputeSpread& spread, double meanS, int64_t n) const;
  // One line for the Assumed table.
  std::string assumed() const;
};

// The file's `gpu_spread` row; refusals name the key (common::UsageError through `f`).
GpuSpread gpuSpreadFromJson(const nlohmann::json& row, const JsonFields& f);
nlohmann::json toJson(const GpuSpread& spread);

}  // namespace dtbench::predict
