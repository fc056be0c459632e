#include "experiments/predict/compute_device.h"

#include "run/device_peaks.h"

namespace dtbench::predict {

std::string ComputeDevice::gpuField() const {
  if (kind == Kind::kCpu) return "none";
  if (kind == Kind::kGpu) return key;
  return "";
}

ComputeDevice deviceOfRun(const run::RunFacts& facts, std::optional<run::DeviceKind> setting) {
  ComputeDevice d;
  if (facts.devices.empty()) {
    // Written before devices were recorded: the --device it ran with still says CPU or GPU.
    if (setting == run::DeviceKind::kCpu) {
      d.kind = ComputeDevice::Kind::kCpu;
      d.label = "cpu (config.json's device; it records no devices)";
    } else if (setting == run::DeviceKind::kCuda) {
      d.kind = ComputeDevice::Kind::kUnnamedGpu;
      d.label = "cuda (config.json's device; it records no devices, so not which GPU)";
    }
    return d;
  }
  const run::DeviceFacts& device = facts.devices.front();
  d.label = device.label();
  if (device.type == "cpu") {
    d.kind = ComputeDevice::Kind::kCpu;
  } else if (const run::GpuPeaks* row = run::identifyGpu(device)) {
    d.kind = ComputeDevice::Kind::kGpu;
    d.key = row->key;
    d.label = row->key + " (" + device.model + ")";
  } else {
    d.kind = ComputeDevice::Kind::kUnidentifiedGpu;
  }
  return d;
}

std::optional<ComputeDevice> deviceFromGpuField(const std::string& value) {
  ComputeDevice d;
  if (value == "none") {
    d.kind = ComputeDevice::Kind::kCpu;
    d.label = "cpu";
    return d;
  }
  const run::GpuPeaks* row = run::findGpuPeaks(value);
  if (row == nullptr) return std::nullopt;
  d.kind = ComputeDevice::Kind::kGpu;
  d.key = row->key;
  d.label = row->key + " (" + row->part + ")";
  return d;
}

std::string gpuFieldChoices() {
  std::string choices = "none";
  for (const run::GpuPeaks& row : run::gpuPeakTable()) choices += ", " + row.key;
  return choices;
}

ComputeDevice readGpuField(const nlohmann::json& object, const JsonFields& fields) {
  if (!object.contains("gpu")) return {};
  const std::string value = fields.text(object, "gpu", "");
  const std::optional<ComputeDevice> device = deviceFromGpuField(value);
  if (!device) fields.fail("gpu '" + value + "' is neither none (CPU) nor a GPU of the peak table (" + gpuFieldChoices() + ")");
  return *device;
}

std::optional<std::string> deviceMismatch(const ComputeDevice& step, const ComputeDevice& hardware) {
  using Kind = ComputeDevice::Kind;
  if (!step.known() || !hardware.known()) return std::nullopt;
  if (step.kind == Kind::kUnnamedGpu && hardware.kind != Kind::kCpu) return std::nullopt;  // which GPU is unknown
  // A hardware file names a table row or none, so an unidentified GPU step never matches it.
  const bool same = step.kind == hardware.kind && (step.kind == Kind::kCpu || step.key == hardware.key);
  if (same) return std::nullopt;
  const std::string ranks = hardware.kind == Kind::kCpu ? "CPU ranks" : hardware.label + " GPUs";
  const std::string what = step.kind == Kind::kUnidentifiedGpu
                               ? "a GPU the peak table does not name (" + step.label + "), so it cannot be matched"
                               : step.label;
  return "its compute was measured on " + what + ", and the hardware file describes " + ranks;
}

}  // namespace dtbench::predict
