#pragma once
// ComputeDevice: what a step's compute ran on, and what a hardware file's ranks are (docs/predict.md,
// "Whose compute"). A prediction takes the step's compute as the hardware's ranks' (× compute_scale),
// so the two must be one kind of device: a CPU run is no A100's step, an H100's no A100's. Both name
// the device in one vocabulary, the `gpu` field of hardware files and step descriptions:
//   - a key of the GPU peak table (run/device_peaks.h: "h100-sxm", "a100-sxm4-80gb", ...);
//   - "none": CPU ranks (a CPU run, the emulated cluster).
// A run directory's device comes from config.json's devices (rank 0's): "none" for a CPU, the
// identified row's key for a GPU, "unidentified" for a GPU the table does not name. A run written
// before devices were recorded has its "device" setting: cpu is a CPU, cuda a GPU it does not name
// (which a CPU's hardware file refuses and a GPU's cannot check). A file or run that says nothing (a
// hardware file without `gpu`) is unknown.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/predict/json_fields.h"
#include "run/run_facts.h"
#include "run/settings.h"

namespace dtbench::predict {

struct ComputeDevice {
  // kUnnamedGpu: a GPU whose model the run did not record (its "device" setting says cuda, no "devices").
  enum class Kind { kUnknown, kCpu, kGpu, kUnidentifiedGpu, kUnnamedGpu };
  Kind kind = Kind::kUnknown;
  std::string key;    // kGpu: the peak table's key
  std::string label;  // what it is, for messages: "cpu Intel(R) Xeon(R) ...", "h100-sxm (NVIDIA H100 SXM5 80GB)"

  bool known() const { return kind != Kind::kUnknown; }
  // The `gpu` field's value: "none", the key; "" for unknown and unidentified (not writable).
  std::string gpuField() const;
};

// Rank 0's device of a run: config.json's "devices", else its "device" setting (`setting`, where
// config.json has the key); unknown when it says neither.
ComputeDevice deviceOfRun(const run::RunFacts& facts, std::optional<run::DeviceKind> setting = std::nullopt);

// The device a `gpu` field names: "none" or a key of the peak table; nullopt for any other text.
std::optional<ComputeDevice> deviceFromGpuField(const std::string& value);
// "none, v100-sxm2, v100-pcie, ...": every value a `gpu` field takes.
std::string gpuFieldChoices();
// The `gpu` key of a hardware file or step description (unknown when absent); fails through `fields`,
// naming the value and every choice, for any other text.
ComputeDevice readGpuField(const nlohmann::json& object, const JsonFields& fields);

// Why the step's compute cannot stand for the hardware's ranks' ("the run was measured on cpu ...,
// the hardware file describes a100-sxm4-80gb GPUs"), or nullopt where it can: both known and the same
// device. Where either is unknown there is nothing to compare: nullopt (predict's Assumed table says
// so); a GPU the run did not name is compared only with CPU ranks.
std::optional<std::string> deviceMismatch(const ComputeDevice& step, const ComputeDevice& hardware);

}  // namespace dtbench::predict
