#pragma once
// Configuration: the grouping key of dtbench report (docs/report.md, "Which runs"). Runs that
// differ only in their repeats share a key; runs of one rank have no setup and are the baseline
// T(1) of every setup with the same model, dataset, device and mode.

#include <string>
#include <tuple>

#include "experiments/report/run_data.h"

namespace dtbench::report {

struct Configuration {
  std::string model, dataset, device;
  std::string mode;  // "ddp" or "dp", then ", amp bf16" / ", amp fp16" and ", channels-last" when used
  // "backend/topology sync[, no overlap][, bucket B MB][, local BN][, delay D ms][, rate R Gbps][, loss L%]";
  // "" for one rank
  std::string setup;
  int batch = 0;
  int world = 1;

  // Everything but batch and world: what a Table 1 series shares.
  auto series() const { return std::tie(model, dataset, device, mode, setup); }
  auto baseline() const { return std::tie(model, dataset, device, mode); }
  bool operator<(const Configuration& o) const {
    return std::tie(model, dataset, device, mode, setup, batch, world) <
           std::tie(o.model, o.dataset, o.device, o.mode, o.setup, o.batch, o.world);
  }
  bool operator==(const Configuration& o) const { return !(*this < o) && !(o < *this); }
};

Configuration configurationOf(const RunData& run);

// "resnet18 synthetic B=32 N=2 gloo/ring ssgd": the configuration in one line (job table).
std::string describe(const Configuration& configuration);

}  // namespace dtbench::report
