// run/device_peaks.h: the GPU peak table (dense figures, each with its datasheet), a device identified
// by its name and every fact it recorded, and the peak a run's MFU takes: never a fallback figure.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/device_peaks.h"
#include "run/run_facts.h"

namespace run = dtbench::run;
using run::Precision;

namespace {

// A GPU as describeCudaDevice records it; memory in GiB, about as cudaDeviceProp.totalGlobalMem
// reports it (the board's memory less what the driver and ECC keep).
run::DeviceFacts gpu(const std::string& name, int64_t sms, double memoryGib, const std::string& capability) {
  run::DeviceFacts d;
  d.type = "cuda";
  d.model = name;
  d.host = "node1";
  d.smCount = sms;
  d.memoryBytes = static_cast<int64_t>(memoryGib * 1024 * 1024 * 1024);
  d.computeCapability = capability;
  return d;
}

std::string keyOf(const run::GpuPeaks* row) { return row == nullptr ? "(none)" : row->key; }

struct Known {
  const char* name;
  int64_t sms;
  double memoryGib;
  const char* capability;
  const char* key;
};

const std::vector<Known> kKnown = {
    {"Tesla V100-SXM2-16GB", 80, 15.8, "7.0", "v100-sxm2"},
    {"Tesla V100-SXM2-32GB", 80, 31.7, "7.0", "v100-sxm2"},
    {"Tesla V100-PCIE-16GB", 80, 15.8, "7.0", "v100-pcie"},
    {"Tesla V100-PCIE-32GB", 80, 31.7, "7.0", "v100-pcie"},
    {"Tesla V100S-PCIE-32GB", 80, 31.7, "7.0", "v100s-pcie"},
    {"NVIDIA A100-SXM4-40GB", 108, 39.6, "8.0", "a100-sxm4-40gb"},
    {"NVIDIA A100-SXM4-80GB", 108, 79.3, "8.0", "a100-sxm4-80gb"},
    {"NVIDIA A100-PCIE-40GB", 108, 39.6, "8.0", "a100-pcie-40gb"},
    {"NVIDIA A100 80GB PCIe", 108, 79.3, "8.0", "a100-pcie-80gb"},
    {"NVIDIA H100 80GB HBM3", 132, 79.2, "9.0", "h100-sxm"},
    {"NVIDIA H100 PCIe", 114, 79.2, "9.0", "h100-pcie"},
    {"NVIDIA H100 NVL", 132, 93.6, "9.0", "h100-nvl"},
    {"NVIDIA H200", 132, 140.4, "9.0", "h200-sxm"},
    {"NVIDIA H200 NVL", 132, 140.4, "9.0", "h200-nvl"},
    {"NVIDIA L40S", 142, 44.4, "8.9", "l40s"},
    {"NVIDIA L4", 58, 22.0, "8.9", "l4"},
    {"NVIDIA A10", 72, 22.2, "8.6", "a10"},
    {"Quadro RTX 8000", 72, 47.5, "7.5", "rtx8000"},
};

}  // namespace

TEST_CASE("every listed GPU name with its SM count and memory is identified as its row", "[run][device_peaks]") {
  for (const Known& k : kKnown) {
    INFO(k.name);
    CHECK(keyOf(run::identifyGpu(gpu(k.name, k.sms, k.memoryGib, k.capability))) == k.key);
  }
  // Case, surrounding whitespace and a leading "NVIDIA " (drivers before R470 left it off) do not matter.
  CHECK(keyOf(run::identifyGpu(gpu("  nvidia a100-sxm4-40gb\n", 108, 39.6, "8.0"))) == "a100-sxm4-40gb");
  CHECK(keyOf(run::identifyGpu(gpu("A100-SXM4-40GB", 108, 39.6, "8.0"))) == "a100-sxm4-40gb");
  CHECK(keyOf(run::identifyGpu(gpu("A100-SXM-80GB", 108, 79.3, "8.0"))) == "a100-sxm4-80gb");
  // A fact the device did not record is not checked (the name alone identifies it then).
  run::DeviceFacts bare;
  bare.type = "cuda";
  bare.model = "NVIDIA H100 PCIe";
  CHECK(keyOf(run::identifyGpu(bare)) == "h100-pcie");
}

TEST_CASE("a name that matches but a recorded fact that does not is not identified", "[run][device_peaks]") {
  SECTION("an A100's memory tells 40 GB from 80 GB") {
    CHECK(keyOf(run::identifyGpu(gpu("NVIDIA A100-SXM4-40GB", 108, 39.6, "8.0"))) == "a100-sxm4-40gb");
    CHECK(keyOf(run::identifyGpu(gpu("NVIDIA A100-SXM4-80GB", 108, 79.3, "8.0"))) == "a100-sxm4-80gb");
    CHECK(run::identifyGpu(gpu("NVIDIA A100-SXM4-80GB", 108, 39.6, "8.0")) == nullptr);
    CHECK(run::identifyGpu(gpu("NVIDIA A100-SXM4-40GB", 108, 79.3, "8.0")) == nullptr);
    CHECK(run::identifyGpu(gpu("NVIDIA A100 80GB PCIe", 108, 39.6, "8.0")) == nullptr);
  }
  SECTION("an H100's SM count tells PCIe from SXM") {
    CHECK(keyOf(run::identifyGpu(gpu("NVIDIA H100 PCIe", 114, 79.2, "9.0"))) == "h100-pcie");
    CHECK(keyOf(run::identifyGpu(gpu("NVIDIA H100 80GB HBM3", 132, 79.2, "9.0"))) == "h100-sxm");
    CHECK(run::identifyGpu(gpu("NVIDIA H100 PCIe", 132, 79.2, "9.0")) == nullptr);
    CHECK(run::identifyGpu(gpu("NVIDIA H100 80GB HBM3", 114, 79.2, "9.0")) == nullptr);
  }
  SECTION("a MIG slice keeps its GPU's name") {
    const run::DeviceFacts slice = gpu("NVIDIA H100 80GB HBM3", 16, 9.8, "9.0");
    CHECK(run::identifyGpu(slice) == nullptr);
    const run::PeakUsed peak = run::peakFor(slice, Precision::bf16);
    CHECK(peak.gpu == "unknown");
    CHECK_FALSE(peak.tflops);
    CHECK(peak.source.empty());
    CHECK_THAT(peak.reason, Catch::Contains("16 SMs, not 132") && Catch::Contains("9.8 GiB of memory, not 80 GiB") &&
                                Catch::Contains("no MFU"));
  }
  SECTION("a compute capability that disagrees") {
    CHECK(run::identifyGpu(gpu("NVIDIA L4", 58, 22.0, "8.6")) == nullptr);
  }
}

TEST_CASE("an unknown GPU or a CPU gets no figure and a reason: never a neighbour's", "[run][device_peaks]") {
  const std::vector<run::DeviceFacts> unknown = {
      gpu("AMD Instinct MI300X", 304, 191.5, "9.4"),
      gpu("NVIDIA GeForce RTX 4090", 128, 23.6, "8.9"),
      gpu("NVIDIA H100", 132, 79.2, "9.0"),  // no row is named "NVIDIA H100" alone: SXM, PCIe or NVL?
      gpu("NVIDIA H100", 114, 79.2, "9.0"),
      gpu("NVIDIA A10G", 80, 22.1, "8.6"),  // not an A10
      gpu("NVIDIA L40", 142, 44.4, "8.9"),  // not an L40S
      gpu("", 132, 79.2, "9.0"),
  };
  for (const run::DeviceFacts& d : unknown) {
    INFO(d.model);
    CHECK(run::identifyGpu(d) == nullptr);
    for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16}) {
      const run::PeakUsed peak = run::peakFor(d, p);
      CHECK(peak.gpu == "unknown");
      CHECK(peak.precision == p);
      CHECK_FALSE(peak.tflops);
      CHECK(peak.source.empty());
    }
  }
  CHECK(run::peakFor(unknown[0], Precision::bf16).reason ==
        "GPU 'AMD Instinct MI300X' (304 SMs) is not in dtbench's peak table (run/device_peaks.cpp): no MFU; "
        "add its row with its datasheet");

  run::DeviceFacts cpu;
  cpu.type = "cpu";
  cpu.model = "AMD EPYC 7742 64-Core Processor";
  cpu.cores = 16;
  CHECK(run::identifyGpu(cpu) == nullptr);
  const run::PeakUsed onCpu = run::peakFor(cpu, Precision::fp32);
  CHECK(onCpu.gpu == "unknown");
  CHECK_FALSE(onCpu.tflops);
  CHECK_THAT(onCpu.reason, Catch::Contains("not a GPU"));
  cpu.model = "NVIDIA H100 80GB HBM3";  // a "cpu" device is never a GPU, whatever its name
  CHECK(run::identifyGpu(cpu) == nullptr);
}

TEST_CASE("the peak of a run's precision: TF32 before Ampere is fp32 and bf16 without bf16 tensor cores is none",
          "[run][device_peaks]") {
  const run::DeviceFacts a100 = gpu("NVIDIA A100-SXM4-80GB", 108, 79.3, "8.0");
  const run::DeviceFacts v100 = gpu("Tesla V100-SXM2-32GB", 80, 31.7, "7.0");
  const run::DeviceFacts rtx = gpu("Quadro RTX 8000", 72, 47.5, "7.5");
  const run::DeviceFacts h100 = gpu("NVIDIA H100 80GB HBM3", 132, 79.2, "9.0");

  run::PeakUsed peak = run::peakFor(a100, Precision::tf32);  // an fp32 run with TF32 on
  CHECK(peak.gpu == "a100-sxm4-80gb");
  CHECK(peak.precision == Precision::tf32);
  CHECK(peak.tflops == 156.0);
  CHECK(peak.reason.empty());
  CHECK_THAT(peak.source, Catch::Contains("A100") && Catch::Contains("https://"));
  CHECK(run::peakFor(a100, Precision::fp32).tflops == 19.5);

  peak = run::peakFor(v100, Precision::tf32);  // the TF32 flags do nothing on Volta: fp32 ran
  CHECK(peak.gpu == "v100-sxm2");
  CHECK(peak.precision == Precision::fp32);
  CHECK(peak.tflops == 15.7);
  CHECK(peak.reason.empty());
  peak = run::peakFor(rtx, Precision::tf32);
  CHECK(peak.precision == Precision::fp32);
  CHECK(peak.tflops == 16.3);

  peak = run::peakFor(v100, Precision::bf16);
  CHECK(peak.gpu == "v100-sxm2");
  CHECK(peak.precision == Precision::bf16);
  CHECK_FALSE(peak.tflops);
  CHECK_THAT(peak.reason, Catch::Contains("no bf16 tensor cores"));
  CHECK_FALSE(run::peakFor(rtx, Precision::bf16).tflops);
  CHECK(run::peakFor(v100, Precision::fp16).tflops == 125.0);

  CHECK(run::peakFor(h100, Precision::bf16).tflops == 989.4);
  CHECK(run::peakFor(h100, Precision::fp16).tflops == 989.4);
  CHECK(run::peakFor(h100, Precision::tf32).tflops == 494.7);
  CHECK(run::peakFor(h100, Precision::fp32).tflops == 67.0);
}

TEST_CASE("every row is whole and named once and its figures are dense", "[run][device_peaks]") {
  const std::vector<run::GpuPeaks>& table = run::gpuPeakTable();
  REQUIRE(table.size() == 16);
  std::set<std::string> keys;
  for (const run::GpuPeaks& row : table) {
    INFO(row.key);
    CHECK(keys.insert(row.key).second);
    for (char c : row.key) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'));
    CHECK(run::findGpuPeaks(row.key) == &row);
    CHECK_FALSE(row.part.empty());
    CHECK_FALSE(row.names.empty());
    CHECK(row.smCount > 0);
    CHECK_FALSE(row.memoryGib.empty());
    CHECK_FALSE(row.computeCapability.empty());
    CHECK_THAT(row.source, Catch::Contains("datasheet") && Catch::Contains("https://"));
    REQUIRE(row.fp32);
    REQUIRE(row.fp16);
    // Each of the row's names, with the row's facts, is that row and no other (no name in two rows).
    for (const std::string& name : row.names)
      for (int size : row.memoryGib)
        CHECK(keyOf(run::identifyGpu(gpu(name, row.smCount, 0.95 * size, row.computeCapability))) == row.key);
    // TF32 and BF16 tensor cores came together (Ampere).
    CHECK(row.tf32.has_value() == row.bf16.has_value());
    // Dense figures keep these relations; a sparse one (twice the dense) slipped into a row breaks one:
    // bf16 = fp16 ~ 2 x tf32 (L40S: 362.05 vs 2 x 183), tf32 <= 8 x fp32, fp16 <= 16 x fp32 (A100: 8 and 16;
    // H100 SXM with sparse figures: 14.8 and 29.5).
    CHECK(*row.fp16 <= 16 * *row.fp32);
    if (row.tf32 && row.bf16) {
      CHECK(*row.bf16 == *row.fp16);
      CHECK(*row.bf16 >= 1.95 * *row.tf32);
      CHECK(*row.bf16 <= 2.05 * *row.tf32);
      CHECK(*row.tf32 <= 8 * *row.fp32);
    }
  }
  CHECK(run::findGpuPeaks("a100") == nullptr);
  CHECK(run::findGpuPeaks("H100-SXM") == nullptr);
  CHECK(run::findGpuPeaks("") == nullptr);
}

TEST_CASE("the table's figures are the datasheets' dense ones", "[run][device_peaks]") {
  struct Figures {
    const char* key;
    double fp32;
    std::optional<double> tf32, bf16;
    double fp16;
  };
  const std::optional<double> none;
  const std::vector<Figures> expected = {
      {"v100-sxm2", 15.7, none, none, 125},    {"v100-pcie", 14, none, none, 112},
      {"v100s-pcie", 16.4, none, none, 130},   {"a100-sxm4-40gb", 19.5, 156, 312, 312},
      {"a100-sxm4-80gb", 19.5, 156, 312, 312}, {"a100-pcie-40gb", 19.5, 156, 312, 312},
      {"a100-pcie-80gb", 19.5, 156, 312, 312}, {"h100-sxm", 67, 494.7, 989.4, 989.4},
      {"h100-pcie", 51, 378, 756, 756},        {"h100-nvl", 60, 417.5, 835.5, 835.5},
      {"h200-sxm", 67, 494.7, 989.4, 989.4},   {"h200-nvl", 60, 417.5, 835.5, 835.5},
      {"l40s", 91.6, 183, 362.05, 362.05},     {"l4", 30.3, 60, 121, 121},
      {"a10", 31.2, 62.5, 125, 125},           {"rtx8000", 16.3, none, none, 130.5},
  };
  REQUIRE(expected.size() == run::gpuPeakTable().size());
  for (const Figures& f : expected) {
    INFO(f.key);
    const run::GpuPeaks* row = run::findGpuPeaks(f.key);
    REQUIRE(row != nullptr);
    CHECK(row->tflops(Precision::fp32) == f.fp32);
    CHECK(row->tflops(Precision::tf32) == f.tf32);
    CHECK(row->tflops(Precision::bf16) == f.bf16);
    CHECK(row->tflops(Precision::fp16) == f.fp16);
  }
}

TEST_CASE("precision names read back", "[run][device_peaks]") {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16})
    CHECK(run::parsePrecision(run::precisionName(p)) == p);
  CHECK(run::precisionName(Precision::bf16) == "bf16");
  CHECK_FALSE(run::parsePrecision("fp64"));
  CHECK_FALSE(run::parsePrecision("FP32"));
  CHECK_FALSE(run::parsePrecision(""));
}

TEST_CASE("the peak used reads back from config.json as written", "[run][device_peaks]") {
  const run::PeakUsed known = run::peakFor(gpu("NVIDIA H100 PCIe", 114, 79.2, "9.0"), Precision::bf16);
  const nlohmann::json written = run::peakJson(known);
  CHECK(written.at("gpu") == "h100-pcie");
  CHECK(written.at("precision") == "bf16");
  CHECK(written.at("peak_tflops") == 756.0);
  CHECK(written.at("reason") == "");
  const run::PeakUsed read = run::readPeakJson(written);
  CHECK(read.gpu == known.gpu);
  CHECK(read.precision == known.precision);
  CHECK(read.tflops == known.tflops);
  CHECK(read.source == known.source);
  CHECK(read.reason == known.reason);
  CHECK(run::peakJson(read) == written);

  const run::PeakUsed unknown = run::peakFor(gpu("AMD Instinct MI300X", 304, 191.5, "9.4"), Precision::fp16);
  const nlohmann::json none = run::peakJson(unknown);
  CHECK(none.at("gpu") == "unknown");
  CHECK(none.at("peak_tflops").is_null());
  CHECK(run::peakJson(run::readPeakJson(none)) == none);
  CHECK_FALSE(run::readPeakJson(none).tflops);

  const auto message = [](const nlohmann::json& peak) {
    try {
      run::readPeakJson(peak);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  nlohmann::json wrong = written;
  wrong["gpu"] = 3;
  CHECK_THAT(message(wrong), Catch::StartsWith("gpu takes a string"));
  wrong = written;
  wrong["precision"] = "fp64";
  CHECK_THAT(message(wrong), Catch::StartsWith("precision takes fp32, tf32, bf16 or fp16"));
  wrong = written;
  wrong["peak_tflops"] = "756";
  CHECK_THAT(message(wrong), Catch::StartsWith("peak_tflops takes"));
  wrong = written;
  wrong["peak_tflops"] = -1;
  CHECK_THAT(message(wrong), Catch::StartsWith("peak_tflops takes"));
  wrong = written;
  wrong["reason"] = nullptr;
  CHECK_THAT(message(wrong), Catch::StartsWith("reason takes a string"));
  wrong = written;
  wrong.erase("gpu");
  CHECK(message(wrong) == "gpu is missing");
  CHECK_THAT(message(nlohmann::json::array()), Catch::StartsWith("takes an object"));
}
