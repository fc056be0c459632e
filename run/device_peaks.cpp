#include "run/device_peaks.h"

#include <cctype>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>

#include "run/json_values.h"
#include "run/run_facts.h"

namespace dtbench::run {
using json = nlohmann::json;
namespace {

// The datasheets. NVIDIA prints the 2:4 structured-sparsity figure of every tensor-core precision
// from Ampere on with an asterisk ("* with sparsity"); the dense figure is half of it. Volta and
// Turing have no sparsity: their tensor figure is dense fp16 with fp32 accumulate.
const char* const kV100Source =
    "NVIDIA Tesla V100 GPU Accelerator datasheet, document 1165301-r5 (January 2020), "
    "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf: "
    "single precision 15.7 (SXM2), 14 (PCIe), 16.4 (V100S PCIe); tensor performance 125, 112, 130 (Volta: dense "
    "fp16 with fp32 accumulate; no TF32, no BF16)";
const char* const kA100Source =
    "NVIDIA A100 Tensor Core GPU datasheet, document 1758950-r4 (June 2021), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf: FP32 19.5; TF32 156 | 312*; BF16 312 | 624*; "
    "FP16 312 | 624* (* with sparsity), the same for the 40GB and 80GB, PCIe and SXM";
const char* const kH100SxmSource =
    "NVIDIA H100 Tensor Core GPU datasheet (2023-2024 revision, H100 SXM and H100 NVL columns), "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet: H100 SXM FP32 67; "
    "TF32 989*; BF16 1,979*; FP16 1,979* (* with sparsity); dense is half: 494.7, 989.4 as NVIDIA's Hopper "
    "architecture whitepaper prints them";
const char* const kH100PcieSource =
    "NVIDIA H100 Tensor Core GPU datasheet (2022 revision, H100 SXM and H100 PCIe columns; later revisions "
    "list SXM and NVL only), https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet: "
    "H100 PCIe FP32 51; TF32 756*; BF16 1,513*; FP16 1,513* (* with sparsity); dense 378 and 756 (half of "
    "1,513 is 756.5; 756 taken)";
const char* const kH100NvlSource =
    "NVIDIA H100 Tensor Core GPU datasheet (2023-2024 revision, per GPU, 94GB), "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet: H100 NVL FP32 60; "
    "TF32 835*; BF16 1,671*; FP16 1,671* (* with sparsity); dense 417.5, 835.5 (the first revision listed "
    "H100 NVL as a pair of boards, FP32 134: not per GPU)";
const char* const kH200SxmSource =
    "NVIDIA H200 Tensor Core GPU datasheet (November 2024 revision, H200 SXM and H200 NVL columns) and "
    "https://www.nvidia.com/en-us/data-center/h200/: H200 SXM FP32 67; TF32 989*; BF16 1,979*; FP16 1,979* "
    "(* with sparsity); dense 494.7, 989.4, the H100 SXM's (the same GH100 at the same clocks; pages that "
    "call 1,979 dense have dropped the asterisk)";
const char* const kH200NvlSource =
    "NVIDIA H200 Tensor Core GPU datasheet (November 2024 revision, H200 SXM and H200 NVL columns) and "
    "https://www.nvidia.com/en-us/data-center/h200/: H200 NVL FP32 60; TF32 835*; BF16 1,671*; "
    "FP16 1,671* (* with sparsity); dense 417.5, 835.5";
const char* const kL40sSource =
    "NVIDIA L40S GPU datasheet (2023), https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413: "
    "FP32 91.6; TF32 183 | 366*; BF16 362.05 | 733*; FP16 362.05 | 733* (* with sparsity; the dense figures "
    "are the datasheet's own)";
const char* const kL4Source =
    "NVIDIA L4 Tensor Core GPU datasheet (2023), "
    "https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet: FP32 30.3; TF32 120*; "
    "BF16 242*; FP16 242* (* with sparsity); dense 60, 121";
const char* const kA10Source =
    "NVIDIA A10 Tensor Core GPU datasheet (2021), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/datasheet-new/"
    "nvidia-a10-datasheet.pdf: FP32 31.2; TF32 62.5 | 125*; BF16 125 | 250*; FP16 125 | 250* "
    "(* with sparsity)";
const char* const kRtx8000Source =
    "NVIDIA Quadro RTX 8000 datasheet, document 946977-r1, "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/quadro-product-literature/"
    "quadro-rtx-8000-us-nvidia-946977-r1-web.pdf: FP32 16.3; tensor performance 130.5 (Turing: dense fp16; "
    "no TF32, no BF16)";

constexpr std::nullopt_t kNone = std::nullopt;

// key, part, cudaDeviceProp names, SMs, memory sizes (GiB), compute capability,
// fp32, tf32, bf16, fp16 (dense TFLOP/s), source.
// clang-format off
const std::vector<GpuPeaks>& table() {
  static const std::vector<GpuPeaks> rows = {
      {"v100-sxm2", "NVIDIA Tesla V100 SXM2", {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"}, 80, {16, 32}, "7.0",
       15.7, kNone, kNone, 125.0, kV100Source},
      {"v100-pcie", "NVIDIA Tesla V100 PCIe", {"Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB"}, 80, {16, 32}, "7.0",
       14.0, kNone, kNone, 112.0, kV100Source},
      {"v100s-pcie", "NVIDIA Tesla V100S PCIe", {"Tesla V100S-PCIE-32GB"}, 80, {32}, "7.0",
       16.4, kNone, kNone, 130.0, kV100Source},
      {"a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB", {"NVIDIA A100-SXM4-40GB"}, 108, {40}, "8.0",
       19.5, 156.0, 312.0, 312.0, kA100Source},
      {"a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB", {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM-80GB"}, 108, {80}, "8.0",
       19.5, 156.0, 312.0, 312.0, kA100Source},
      {"a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", {"NVIDIA A100-PCIE-40GB"}, 108, {40}, "8.0",
       19.5, 156.0, 312.0, 312.0, kA100Source},
      {"a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", {"NVIDIA A100 80GB PCIe"}, 108, {80}, "8.0",
       19.5, 156.0, 312.0, 312.0, kA100Source},
      {"h100-sxm", "NVIDIA H100 SXM5 80GB", {"NVIDIA H100 80GB HBM3"}, 132, {80}, "9.0",
       67.0, 494.7, 989.4, 989.4, kH100SxmSource},
      {"h100-pcie", "NVIDIA H100 PCIe 80GB", {"NVIDIA H100 PCIe"}, 114, {80}, "9.0",
       51.0, 378.0, 756.0, 756.0, kH100PcieSource},
      {"h100-nvl", "NVIDIA H100 NVL 94GB (one GPU)", {"NVIDIA H100 NVL"}, 132, {94}, "9.0",
       60.0, 417.5, 835.5, 835.5, kH100NvlSource},
      {"h200-sxm", "NVIDIA H200 SXM 141GB", {"NVIDIA H200"}, 132, {141}, "9.0",
       67.0, 494.7, 989.4, 989.4, kH200SxmSource},
      {"h200-nvl", "NVIDIA H200 NVL 141GB", {"NVIDIA H200 NVL"}, 132, {141}, "9.0",
       60.0, 417.5, 835.5, 835.5, kH200NvlSource},
      {"l40s", "NVIDIA L40S 48GB", {"NVIDIA L40S"}, 142, {48}, "8.9",
       91.6, 183.0, 362.05, 362.05, kL40sSource},
      {"l4", "NVIDIA L4 24GB", {"NVIDIA L4"}, 58, {24}, "8.9",
       30.3, 60.0, 121.0, 121.0, kL4Source},
      {"a10", "NVIDIA A10 24GB", {"NVIDIA A10"}, 72, {24}, "8.6",
       31.2, 62.5, 125.0, 125.0, kA10Source},
      {"rtx8000", "NVIDIA Quadro RTX 8000 48GB", {"Quadro RTX 8000"}, 72, {48}, "7.5",
       16.3, kNone, kNone, 130.5, kRtx8000Source},
  };
  return rows;
}
// clang-format on

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;
// totalGlobalMem is the board's memory less what the driver, and ECC on GDDR parts, keep: about
// 79.2 GiB on an 80 GB H100, 39.6 GiB on a 40 GB A100.
constexpr double kMemoryLow = 0.85;
constexpr double kMemoryHigh = 1.05;

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// Lower case, without surrounding whitespace or a leading "nvidia ".
std::string normalName(const std::string& name) {
  std::string text = trimmed(name);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string prefix = "nvidia ";
  if (text.compare(0, prefix.size(), prefix) == 0) text = text.substr(prefix.size());
  return text;
}

// The row one of whose names `model` is (names are unique across the table), or nullptr.
const GpuPeaks* rowNamed(const std::string& model) {
  const std::string name = normalName(model);
  if (name.empty()) return nullptr;
  for (const GpuPeaks& row : table())
    for (const std::string& listed : row.names)
      if (normalName(listed) == name) return &row;
  return nullptr;
}

std::string gibText(double gib) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gib);
  return text;
}

std::string sizesText(const std::vector<int>& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i == 0 ? "" : i + 1 == sizes.size() ? " or " : ", ") + std::to_string(sizes[i]);
  return text + " GiB";
}

// How the recorded facts of `device` disagree with `row`: "" when every recorded one agrees.
std::string disagreement(const GpuPeaks& row, const DeviceFacts& device) {
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : "; ") + part; };
  if (device.smCount && *device.smCount != row.smCount)
    add(std::to_string(*device.smCount) + " SMs, not " + std::to_string(row.smCount));
  if (device.memoryBytes) {
    const double gib = static_cast<double>(*device.memoryBytes) / kGib;
    bool agrees = false;
    for (int size : row.memoryGib) agrees = agrees || (gib >= kMemoryLow * size && gib <= kMemoryHigh * size);
    if (!agrees) add(gibText(gib) + " GiB of memory, not " + sizesText(row.memoryGib));
  }
  if (device.computeCapability && trimmed(*device.computeCapability) != row.computeCapability)
    add("compute capability " + *device.computeCapability + ", not " + row.computeCapability);
  return text;
}

std::string deviceText(const DeviceFacts& device) {
  return "GPU '" + device.model + "' (" +
         (device.smCount ? std::to_string(*device.smCount) + " SMs" : std::string("SM count not recorded")) + ")";
}

// Why `device` has no row.
std::string unidentifiedReason(const DeviceFacts& device) {
  if (device.type != "cuda")
    return "device '" + device.label() +
           "' is not a GPU: no MFU (dtbench's peak table, run/device_peaks.cpp, holds GPUs only)";
  if (const GpuPeaks* row = rowNamed(device.model))
    return deviceText(device) + " has " + row->key + "'s name but " + disagreement(*row, device) +
           " (a MIG slice, or another part under that name): not identified, no MFU; add its row with its "
           "datasheet if it is a part of its own";
  return deviceText(device) +
         " is not in dtbench's peak table (run/device_peaks.cpp): no MFU; add its row with its datasheet";
}

}  // namespace

std::string precisionName(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  throw std::logic_error("a precision without a name");
}

std::optional<Precision> parsePrecision(const std::string& name) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16})
    if (name == precisionName(p)) return p;
  return std::nullopt;
}

std::optional<double> GpuPeaks::tflops(Precision precision) const {
  switch (precision) {
    case Precision::fp32: return fp32;
    case Precision::tf32: return tf32;
    case Precision::bf16: return bf16;
    case Precision::fp16: return fp16;
  }
  return std::nullopt;
}

const std::vector<GpuPeaks>& gpuPeakTable() { return table(); }

const GpuPeaks* findGpuPeaks(const std::string& key) {
  for (const GpuPeaks& row : table())
    if (row.key == key) return &row;
  return nullptr;
}

const GpuPeaks* identifyGpu(const DeviceFacts& device) {
  if (device.type != "cuda") return nullptr;
  const GpuPeaks* row = rowNamed(device.model);
  if (row == nullptr || !disagreement(*row, device).empty()) return nullptr;
  return row;
}

PeakUsed peakFor(const DeviceFacts& device, Precision precision) {
  PeakUsed peak;
  peak.precision = precision;
  const GpuPeaks* row = identifyGpu(device);
  if (row == nullptr) {
    peak.gpu = "unknown";
    peak.reason = unidentifiedReason(device);
    return peak;
  }
  return peakOfRow(*row, precision);
}

PeakUsed peakOfRow(const GpuPeaks& row, Precision precision) {
  PeakUsed peak;
  peak.precision = precision;
  peak.gpu = row.key;
  peak.source = row.source;
  // Before Ampere the TF32 flags do nothing: the matmuls ran in fp32 on the CUDA cores.
  if (precision == Precision::tf32 && !row.tf32) peak.precision = Precision::fp32;
  peak.tflops = row.tflops(peak.precision);
  if (!peak.tflops) {
    const std::string name = precisionName(peak.precision);
    peak.reason = row.part + " (" + row.key + ") has no " + name + " tensor cores: its datasheet gives no " + name +
                  " figure, no MFU";
  }
  return peak;
}

json peakJson(const PeakUsed& peak) {
  return {{"gpu", peak.gpu},
          {"precision", precisionName(peak.precision)},
          {"peak_tflops", peak.tflops ? json(*peak.tflops) : json(nullptr)},
          {"source", peak.source},
          {"reason", peak.reason}};
}

PeakUsed readPeakJson(const json& peak) {
  if (!peak.is_object()) wrongValue("an object", peak);
  std::vector<std::string> problems;
  const JsonFields fields(peak, "", problems);
  PeakUsed p;
  fields.read(
      "gpu",
      [&](const json& v) {
        p.gpu = textValue(v);
        // A key of the peak table, or "unknown" (an unidentified device): any other names no peak.
        if (p.gpu != "unknown" && findGpuPeaks(p.gpu) == nullptr) wrongValue("a key of the peak table or unknown", v);
      },
      true);
  fields.read(
      "precision",
      [&](const json& v) {
        const std::optional<Precision> precision = parsePrecision(textValue(v));
        if (!precision) wrongValue("fp32, tf32, bf16 or fp16", v);
        p.precision = *precision;
      },
      true);
  fields.read("peak_tflops", [&](const json& v) {
    if (v.is_null()) return;
    if (!v.is_number() || v.get<double>() <= 0) wrongValue("a positive number of TFLOP/s or null", v);
    p.tflops = v.get<double>();
  });
  fields.read("source", [&](const json& v) { p.source = textValue(v); });
  fields.read("reason", [&](const json& v) { p.reason = textValue(v); });
  if (!problems.empty()) throw std::invalid_argument(problems.front());
  return p;
}

}  // namespace dtbench::run
