#pragma once
// The speed of light of a prediction (docs/predict.md, "FLOPs and MFU"): the step's training FLOPs per
// image (a run's config.json, a description's flops_per_image) against the peak of the hardware
// file's ranks:
//   - `gpu` a row of the peak table: its dense datasheet peaks, convolutions and linear layers each at
//     the precision they run in: the step's own where it ran on a GPU, else (a CPU run, a description
//     without "precision") what a dtbench fp32 run gets on a GPU, LibTorch's defaults: TF32
//     convolutions (cuDNN's flag on), fp32 matrix products (cuBLAS's off); autocast's bf16 / fp16 as
//     recorded. The figure is MFU;
//   - `gpu` "none" (CPU ranks): the run's own GEMM probe, where it has one; the figure is the fraction of
//     that measured rate, as the report's of_gemm_probe;
//   - no `gpu`: no peak; the achieved rate alone.

#include <optional>
#include <string>

#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "run/speed_of_light.h"

namespace dtbench::predict {

struct PredictionPeak {
  std::optional<run::SpeedOfLight> speedOfLight;  // nullopt: the step has no FLOPs
  std::string note;                               // what the peak is, or why there is none
};

PredictionPeak predictionPeak(const MeasuredStep& step, const Hardware& hardware);

}  // namespace dtbench::predict
