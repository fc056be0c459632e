#pragma once
// The peak dense TFLOP/s of the GPUs dtbench knows, and which of them a run's device was: the
// denominator of MFU (achieved / peak; docs/gpu-peaks.md). A wrong peak is worse than none, so:
//   - every figure is the dense one from the part's NVIDIA datasheet (the datasheets print the 2:4
//     sparse figure with an asterisk; dense is half of it), and every row names its datasheet;
//   - a device is identified only when its name (cudaDeviceProp.name, DeviceFacts::model) is one the
//     row lists AND every fact the device recorded that the row checks agrees: SM count, memory (one
//     of the part's sizes: a 40 GB A100 is not an 80 GB one), compute capability. A MIG slice or a
//     cut-down part with a known name is not identified;
//   - an unidentified device (a CPU, a GPU not in the table) gets no figure and a reason, never a
//     figure borrowed from a neighbouring part.
// The table is in one place, run/device_peaks.cpp; adding a GPU is its row there and its line in
// docs/gpu-peaks.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>


namespace dtbench::run {

struct DeviceFacts;  // run/run_facts.h

// The arithmetic a run's FLOPs ran in: fp32 (CUDA cores), tf32 (fp32 tensors through the TF32 tensor
// cores), bf16 and fp16 (autocast's tensor-core matmuls and convolutions).
enum class Precision { fp32, tf32, bf16, fp16 };

std::string precisionName(Precision precision);  // "fp32", "tf32", "bf16", "fp16"
// The precision named `name` (exactly as precisionName writes it); nullopt for any other text.
std::optional<Precision> parsePrecision(const std::string& name);

// One part: how it is recognised and its dense peaks. A figure is absent where the part has no such
// tensor-core path (V100 and Quadro RTX 8000: no TF32, no BF16).
struct GpuPeaks {
  std::string key;   // short, lower case, stable: hardware files' "gpu", config.json's peaks' "gpu"
  std::string part;  // the product as its datasheet names it: "NVIDIA H100 SXM5 80GB"
  // cudaDeviceProp.name as the drivers report it; compared without case, surrounding whitespace or a
  // leading "NVIDIA " (drivers before R470 left it off: "A100-SXM4-40GB").
  std::vector<std::string> names;
  int64_t smCount = 0;            // cudaDeviceProp.multiProcessorCount
  std::vector<int> memoryGib;     // the part's memory sizes (nominal GiB: 16 and 32 for a V100)
  std::string computeCapability;  // "9.0"
  std::optional<double> fp32;     // CUDA-core fp32
  std::optional<double> tf32;     // tensor cores, dense
  std::optional<double> bf16;     // tensor cores, dense, fp32 accumulate
  std::optional<double> fp16;     // tensor cores, dense, fp32 accumulate
  std::string source;             // the datasheet: title, NVIDIA's URL, revision or date

  // The figure for `precision` as the row has it (no substitution); nullopt where absent.
  std::optional<double> tflops(Precision precision) const;
};

// Every row, in the order docs/gpu-peaks.md lists them.
const std::vector<GpuPeaks>& gpuPeakTable();
// The row whose key is `key` (exactly); nullptr for an unknown key.
const GpuPeaks* findGpuPeaks(const std::string& key);

// The row `device` is, or nullptr: a "cuda" device whose name is one of exactly one row's names and
// whose recorded SM count, memory and compute capability (each checked when recorded) agree with it.
// memory_bytes (cudaDeviceProp.totalGlobalMem: the board's memory less what the driver and ECC keep)
// agrees with a size S GiB when it lies within [0.85 S, 1.05 S] GiB.
const GpuPeaks* identifyGpu(const DeviceFacts& device);

// The peak a run's MFU is taken against (config.json's "speed_of_light": its "convolution_peak" and
// "linear_peak", run/speed_of_light.h).
struct PeakUsed {
  std::string gpu;                        // the row's key, or "unknown"
  Precision precision = Precision::fp32;  // what the figure is for (tf32 on a part without it: fp32)
  std::optional<double> tflops;           // dense TFLOP/s; nullopt: no MFU
  std::string source;                     // the row's datasheet; "" when unknown
  std::string reason;                     // why tflops is absent; "" when present
};

// The identified row's figure for `precision`. TF32 on a part without TF32 tensor cores (before
// Ampere the TF32 flags do nothing) ran in fp32: the fp32 figure, with precision fp32. BF16 on a
// part without bf16 tensor cores: no figure, and the reason says so. An unidentified device: gpu
// "unknown", no figure, and the reason names the device and the table. Never a fallback figure.
PeakUsed peakFor(const DeviceFacts& device, Precision precision);
// The same for a row named without a device (a hardware file's "gpu", for predict).
PeakUsed peakOfRow(const GpuPeaks& row, Precision precision);

// {"gpu", "precision", "peak_tflops" (null when absent), "source", "reason"}.
nlohmann::json peakJson(const PeakUsed& peak);
// Throws std::invalid_argument "KEY takes ..., got ..." for a value of the wrong type, and
// "KEY is missing" for a missing "gpu" or "precision" (the other keys default to absent and "").
PeakUsed readPeakJson(const nlohmann::json& peak);

}  // namespace dtbench::run
