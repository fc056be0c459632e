#pragma once
// What a run's arithmetic could have gone at, as config.json's "speed_of_light" records it (docs/report.md,
// "FLOPs and the speed of light"): the model's FLOPs per image (models/flop_count.h, counted by the
// trainer when the run starts), the precision they ran in, and the peak they are measured against:
// - on a GPU, the datasheet's dense peak of the identified part for that precision (run/device_peaks.h),
//   convolutions and linear layers each at their own (an fp32 run's convolutions run in TF32 where cuDNN's
//   TF32 flag is on, its matrix products where cuBLAS's is): the peak rate is the FLOPs over the time
//   they take at their peaks, Σ flops / Σ (flops_k / peak_k). An unidentified GPU has none: no MFU;
// - on the CPU, which has no datasheet peak, the rate of a matrix product measured on the machine with
//   the run's threads (the GEMM probe): the report's figure is then the "fraction of the measured GEMM
//   rate", never called MFU, and shown above 1 where the run beat the probe.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "run/device_peaks.h"
#include "run/settings.h"

namespace dtbench::run {

struct ModelFlops {                  // per image, FLOPs = 2 x multiply-adds
  double forward = 0;                // "forward": the convolutions and linear layers of the forward pass
  double trainingConvolution = 0;    // "training_convolution": the convolutions' forward and backward
  double trainingLinear = 0;         // "training_linear": the linear layers' forward and backward
  double elementwise = 0;            // "elementwise": batch norm, activations, additions, pooling, loss
  double training() const { return trainingConvolution + trainingLinear; }  // "training" (written, derived)
};

struct GemmProbe {        // "gemm_probe"
  double gflops = 0;      // "gflops": the best rate of its timed products
  int64_t threads = 0;    // "threads": the intra-op threads it ran with (the run's)
  int64_t size = 0;       // "size": the square fp32 matrices' side
  double seconds = 0;     // "seconds": what it took when it was measured
  std::string measured;   // "measured": when (ISO 8601, UTC); a cached probe keeps its first date
};

struct SpeedOfLight {
  ModelFlops flops;                                  // "flops_per_image"
  Precision convolutionPrecision = Precision::fp32;  // "convolution_precision"
  Precision linearPrecision = Precision::fp32;       // "linear_precision"
  std::optional<bool> tf32Cudnn, tf32Cublas;         // "tf32": {"cudnn", "cublas"}; CUDA runs only
  std::optional<PeakUsed> convolutionPeak, linearPeak;  // "convolution_peak", "linear_peak": GPU runs
  std::optional<GemmProbe> gemmProbe;                // "gemm_probe": CPU runs

  // The rate the run's training FLOPs could go at, FLOP/s: the GPU's peaks as above, the CPU's probe;
  // nullopt where there is none (an unidentified GPU, a peak the part lacks, a run without FLOPs).
  std::optional<double> peakFlopsPerS() const;
  // "MFU" on a GPU, "of_gemm_probe" on the CPU: what a fraction of peakFlopsPerS() is called.
  bool onGpu() const { return convolutionPeak.has_value(); }
  // One line for the report's notes: "h100-sxm: tf32 494.7 TFLOP/s (convolutions), fp32 67 (linear);
  // NVIDIA H100 Tensor Core GPU datasheet ..." / "CPU GEMM probe: 85.2 GFLOP/s, 1 thread, 512x512 fp32"
  // / "unknown: <reason>".
  std::string peakLabel() const;
};

// A run's SpeedOfLight from what it found: on a GPU, autocast's bf16 or fp16 for both kinds, else TF32
// where the kind's flag is on (convolutions: cuDNN's; linear layers: cuBLAS's) and fp32 where it is off,
// each kind's peak peakFor(device, its precision); on the CPU, the precision as autocast has it and the
// probe as the peak.
SpeedOfLight gpuSpeedOfLight(const ModelFlops& flops, Amp amp, bool tf32Cudnn, bool tf32Cublas,
                             const DeviceFacts& device);
// The same on the part of the peak table's row `row` (a hardware file's "gpu", for predict), the
// precisions given (TF32 on a part without it: fp32, as above).
SpeedOfLight gpuRowSpeedOfLight(const ModelFlops& flops, Precision convolution, Precision linear, const GpuPeaks& row);
SpeedOfLight cpuSpeedOfLight(const ModelFlops& flops, Amp amp, const GemmProbe& probe);

nlohmann::json speedOfLightJson(const SpeedOfLight& s);
// Throws std::invalid_argument naming the key for a value of the wrong type.
SpeedOfLight readSpeedOfLightJson(const nlohmann::json& value);

}  // namespace dtbench::run
