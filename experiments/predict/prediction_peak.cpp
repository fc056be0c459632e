#include "experiments/predict/prediction_peak.h"

#include "run/device_peaks.h"

namespace dtbench::predict {

PredictionPeak predictionPeak(const MeasuredStep& step, const Hardware& hardware) {
  using Kind = ComputeDevice::Kind;
  using run::Precision;
  PredictionPeak out;
  if (!step.flops) {
    out.note = "the step records no FLOPs (a run written before they were recorded, a description without "
               "flops_per_image): no achieved rate, no MFU";
    return out;
  }
  run::SpeedOfLight s;
  s.flops = *step.flops;
  if (hardware.device.kind == Kind::kGpu) {
    const run::GpuPeaks& row = *run::findGpuPeaks(hardware.device.key);
    Precision convolution = Precision::tf32, linear = Precision::fp32;  // LibTorch's defaults for fp32
    std::string how = "an fp32 run's defaults (TF32 convolutions, fp32 matrix products)";
    if (step.convolutionPrecision && step.linearPrecision) {
      const bool autocast = *step.convolutionPrecision == Precision::bf16 || *step.convolutionPrecision == Precision::fp16;
      if (step.device.kind != Kind::kCpu || autocast) {
        convolution = *step.convolutionPrecision;
        linear = *step.linearPrecision;
        how = "the step's own precisions";
      }
    }
    s = run::gpuRowSpeedOfLight(*step.flops, convolution, linear, row);
    out.note = "hardware gpu " + row.key + " at " + how + ": " + s.peakLabel();
  } else if (hardware.device.kind == Kind::kCpu) {
    if (step.gemmProbe) {
      s.gemmProbe = step.gemmProbe;
      out.note = "hardware gpu none (CPU ranks): the run's own " + s.peakLabel() +
                 "; a fraction of that measured rate, not of a datasheet peak";
    } else {
      out.note = "hardware gpu none (CPU ranks), and the step has no GEMM probe to measure against: no fraction";
    }
  } else {
    out.note = "the hardware file names no gpu: no peak, the achieved rate alone";
  }
  out.speedOfLight = s;
  return out;
}

}  // namespace dtbench::predict
