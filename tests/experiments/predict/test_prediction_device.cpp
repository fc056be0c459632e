// Whose compute a prediction takes and what it is measured against (experiments/predict/compute_device.h,
// prediction_peak.h, the `gpu` fields of hardware files and step descriptions, the Assumed table).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "common/usage_error.h"
#include "experiments/predict/compute_device.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/prediction_peak.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_description.h"
#include "experiments/predict/step_model.h"

using namespace dtbench::predict;
using dtbench::run::Precision;

namespace {

ComputeDevice gpu(const std::string& key) { return *deviceFromGpuField(key); }

ComputeDevice ranOn(const std::string& type, const std::string& model, int64_t sms, double memoryGib,
                    const std::string& cc) {
  dtbench::run::RunFacts facts;
  dtbench::run::DeviceFacts d;
  d.type = type;
  d.model = model;
  if (type == "cuda") {
    d.smCount = sms;
    d.memoryBytes = static_cast<int64_t>(memoryGib * (1 << 30));
    d.computeCapability = cc;
  }
  facts.devices.push_back(d);
  return deviceOfRun(facts);
}

nlohmann::json hardwareJson() {
  return nlohmann::json::parse(R"({"ranks_per_node": 8, "intra_node": {"bandwidth_gbit_s": 1000, "latency_us": 3},
                                   "inter_node": {"bandwidth_gbit_s": 400, "latency_us": 6}})");
}

nlohmann::json describedStep() {
  return nlohmann::json::parse(R"({"format": "dtbench-step-description/1", "model": "m", "batch_size": 100,
    "train_samples": 10000, "compute_s": {"forward": 0.01, "backward": 0.02},
    "parameters": [{"name": "w", "elements": 1000, "ready_fraction": 0.5}]})");
}

std::string hardwareRefusal(const nlohmann::json& j) {
  try {
    hardwareFromJson(j, "hw.json");
  } catch (const dtbench::common::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

std::string stepRefusal(const nlohmann::json& j) {
  try {
    stepFromDescription(j, "step.json");
  } catch (const dtbench::common::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("A run's device is its rank 0's: a CPU, an identified GPU, or one the table does not name",
          "[predict][device]") {
  const ComputeDevice cpu = ranOn("cpu", "AMD EPYC 7742 64-Core Processor", 0, 0, "");
  CHECK(cpu.kind == ComputeDevice::Kind::kCpu);
  CHECK(cpu.gpuField() == "none");
  const ComputeDevice h100 = ranOn("cuda", "NVIDIA H100 80GB HBM3", 132, 79.1, "9.0");
  CHECK(h100.kind == ComputeDevice::Kind::kGpu);
  CHECK(h100.key == "h100-sxm");
  const ComputeDevice odd = ranOn("cuda", "NVIDIA Future GPU", 200, 300, "12.0");
  CHECK(odd.kind == ComputeDevice::Kind::kUnidentifiedGpu);
  CHECK(odd.gpuField().empty());
  CHECK_FALSE(deviceOfRun(dtbench::run::RunFacts{}).known());
}

TEST_CASE("A run without devices is of the device its config.json's device setting names", "[predict][device]") {
  using dtbench::run::DeviceKind;
  // Written before devices were recorded, with "device": "cpu": a CPU, which an A100 system refuses.
  const ComputeDevice cpu = deviceOfRun(dtbench::run::RunFacts{}, DeviceKind::kCpu);
  CHECK(cpu.kind == ComputeDevice::Kind::kCpu);
  CHECK(cpu.gpuField() == "none");
  const auto cpuForA100 = deviceMismatch(cpu, gpu("a100-sxm4-80gb"));
  REQUIRE(cpuForA100);
  CHECK_THAT(*cpuForA100, Catch::Contains("measured on cpu (config.json's device; it records no devices)"));
  CHECK_FALSE(deviceMismatch(cpu, gpu("none")));
  // "device": "cuda": a GPU, not which: refused by CPU ranks, not checked against a GPU.
  const ComputeDevice cuda = deviceOfRun(dtbench::run::RunFacts{}, DeviceKind::kCuda);
  CHECK(cuda.kind == ComputeDevice::Kind::kUnnamedGpu);
  CHECK(cuda.gpuField().empty());
  CHECK(deviceMismatch(cuda, gpu("none")));
  CHECK_FALSE(deviceMismatch(cuda, gpu("h100-sxm")));
  // Devices recorded win over the setting.
  CHECK(deviceOfRun(dtbench::run::RunFacts{}, std::nullopt).kind == ComputeDevice::Kind::kUnknown);
  dtbench::run::RunFacts facts;
  facts.devices.push_back({});
  facts.devices.back().type = "cpu";
  CHECK(deviceOfRun(facts, DeviceKind::kCuda).kind == ComputeDevice::Kind::kCpu);
}

TEST_CASE("A step measured on another device than the hardware's is a mismatch, and unknown is not checked",
          "[predict][device]") {
  const ComputeDevice cpu = ranOn("cpu", "AMD EPYC", 0, 0, "");
  const ComputeDevice h100 = ranOn("cuda", "NVIDIA H100 80GB HBM3", 132, 79.1, "9.0");
  const ComputeDevice odd = ranOn("cuda", "NVIDIA Future GPU", 200, 300, "12.0");
  // The CPU run for an A100 system: the question of the issue, refused.
  const auto cpuForA100 = deviceMismatch(cpu, gpu("a100-sxm4-80gb"));
  REQUIRE(cpuForA100);
  CHECK_THAT(*cpuForA100, Catch::Contains("cpu AMD EPYC") && Catch::Contains("a100-sxm4-80gb"));
  CHECK(deviceMismatch(h100, gpu("a100-sxm4-80gb")));    // another GPU
  CHECK(deviceMismatch(h100, gpu("none")));              // a GPU step for CPU ranks
  CHECK(deviceMismatch(odd, gpu("h100-sxm")));           // cannot be matched
  CHECK_FALSE(deviceMismatch(h100, gpu("h100-sxm")));    // the same part
  CHECK_FALSE(deviceMismatch(cpu, gpu("none")));
  CHECK_FALSE(deviceMismatch(ComputeDevice{}, gpu("h100-sxm")));  // nothing recorded: not checked
  CHECK_FALSE(deviceMismatch(cpu, ComputeDevice{}));              // a file without gpu: not checked
}

TEST_CASE("Hardware files and step descriptions name the device in one vocabulary", "[predict][device]") {
  nlohmann::json hw = hardwareJson();
  CHECK_FALSE(hardwareFromJson(hw, "hw.json").device.known());
  hw["gpu"] = "h100-sxm";
  const Hardware h = hardwareFromJson(hw, "hw.json");
  CHECK(h.device.key == "h100-sxm");
  CHECK(toJson(h).at("gpu") == "h100-sxm");
  hw["gpu"] = "H100";
  CHECK_THAT(hardwareRefusal(hw), Catch::Contains("gpu 'H100'") && Catch::Contains("none, v100-sxm2") &&
                                      Catch::Contains("h100-sxm"));

  nlohmann::json step = describedStep();
  step["gpu"] = "none";
  step["flops_per_image"] = {{"forward", 1e9}, {"training_convolution", 2.9e9}, {"training_linear", 1e8}};
  step["precision"] = {{"convolution", "bf16"}, {"linear", "bf16"}};
  const MeasuredStep s = stepFromDescription(step, "step.json");
  CHECK(s.device.kind == ComputeDevice::Kind::kCpu);
  REQUIRE(s.flops);
  CHECK(s.flops->training() == Approx(3e9));
  CHECK(*s.convolutionPrecision == Precision::bf16);
  // Written back as read.
  const MeasuredStep again = stepFromDescription(describeStep(s, "again"), "again.json");
  CHECK(again.device.gpuField() == "none");
  CHECK(again.flops->trainingConvolution == Approx(2.9e9));
  CHECK(*again.linearPrecision == Precision::bf16);

  step["gpu"] = "a100";
  CHECK_THAT(stepRefusal(step), Catch::Contains("gpu 'a100'"));
  step["gpu"] = "none";
  step["precision"]["linear"] = "int8";
  CHECK_THAT(stepRefusal(step), Catch::Contains("precision.linear 'int8'"));
  step["precision"]["linear"] = "fp32";
  step["flops_per_image"]["training"] = 1;
  CHECK_THAT(stepRefusal(step), Catch::Contains("flops_per_image.training must be"));
  step["flops_per_image"].erase("training");
  step["flops_per_image"]["training_convolution"] = 0;
  step["flops_per_image"]["training_linear"] = 0;
  CHECK_THAT(stepRefusal(step), Catch::Contains("must be > 0"));
}

TEST_CASE("A prediction's peak: the hardware's GPU at the precision the step runs in, or the run's probe",
          "[predict][device]") {
  MeasuredStep step = stepFromDescription(describedStep(), "step.json");
  nlohmann::json hwJson = hardwareJson();
  hwJson["gpu"] = "a100-sxm4-80gb";
  const Hardware a100 = hardwareFromJson(hwJson, "hw.json");
  CHECK_FALSE(predictionPeak(step, a100).speedOfLight);  // no FLOPs: nothing to measure

  dtbench::run::ModelFlops flops;
  flops.forward = 1e9;
  flops.trainingConvolution = 3e9;
  flops.trainingLinear = 1e9;
  step.flops = flops;
  // Without precisions: an fp32 run's defaults on a GPU, TF32 convolutions (156) and fp32 linear (19.5).
  PredictionPeak peak = predictionPeak(step, a100);
  REQUIRE(peak.speedOfLight);
  CHECK(peak.speedOfLight->onGpu());
  CHECK(*peak.speedOfLight->peakFlopsPerS() == Approx(4e9 / (3e9 / 156e12 + 1e9 / 19.5e12)));
  CHECK_THAT(peak.note, Catch::Contains("a100-sxm4-80gb") && Catch::Contains("defaults"));
  // A step that ran in bf16 is measured against bf16 (312).
  step.convolutionPrecision = step.linearPrecision = Precision::bf16;
  peak = predictionPeak(step, a100);
  CHECK(*peak.speedOfLight->peakFlopsPerS() == Approx(312e12));
  // A CPU run's fp32 would run TF32 convolutions there: the defaults, not the CPU's fp32.
  step.convolutionPrecision = step.linearPrecision = Precision::fp32;
  step.device = *deviceFromGpuField("none");
  peak = predictionPeak(step, a100);
  CHECK(*peak.speedOfLight->peakFlopsPerS() == Approx(4e9 / (3e9 / 156e12 + 1e9 / 19.5e12)));

  // CPU ranks: the run's own probe, where it has one.
  hwJson["gpu"] = "none";
  const Hardware cpus = hardwareFromJson(hwJson, "hw.json");
  CHECK_FALSE(predictionPeak(step, cpus).speedOfLight->peakFlopsPerS());
  dtbench::run::GemmProbe probe;
  probe.gflops = 80;
  probe.threads = 1;
  probe.size = 512;
  step.gemmProbe = probe;
  peak = predictionPeak(step, cpus);
  CHECK_FALSE(peak.speedOfLight->onGpu());
  CHECK(*peak.speedOfLight->peakFlopsPerS() == Approx(80e9));
  // A file without gpu: the rate alone.
  hwJson.erase("gpu");
  peak = predictionPeak(step, hardwareFromJson(hwJson, "hw.json"));
  CHECK_FALSE(peak.speedOfLight->peakFlopsPerS());
  CHECK_THAT(peak.note, Catch::Contains("names no gpu"));
}

TEST_CASE("The tables say what was assumed and carry the achieved rate and MFU", "[predict][device]") {
  MeasuredStep step = stepFromDescription(describedStep(), "step.json");
  step.device = *deviceFromGpuField("h100-sxm");
  dtbench::run::ModelFlops flops;
  flops.forward = 1e9;
  flops.trainingConvolution = 3e9;
  step.flops = flops;
  nlohmann::json hwJson = hardwareJson();
  hwJson["gpu"] = "h100-sxm";
  hwJson["native_efficiency"] = {{"gloo", 0.5}};
  const Hardware hw = hardwareFromJson(hwJson, "hw.json");
  const std::vector<StepPrediction> predictions{predictStep(step, hw, 8, WhatIf{})};
  const StepPrediction baseline = predictStep(step, hw, 1, WhatIf{});
  const auto tables = predictionTables(step, hw, "hw.json", predictions, baseline);
  REQUIRE(tables.front().name == "assumed");
  std::string assumed;
  for (const auto& row : tables.front().rows) assumed += row[0].text + ": " + row[1].text + "\n";
  CHECK_THAT(assumed, Catch::Contains("device check: the same device: h100-sxm"));
  // The description's default backend is nccl, which this file does not list: said.
  CHECK_THAT(assumed, Catch::Contains("nccl's own all-reduce (native), efficiency 1, its model's default: the "
                                      "hardware file gives gloo only"));
  const auto& t1 = tables.at(1);
  const auto column = [&](const std::string& name) {
    return std::find(t1.columns.begin(), t1.columns.end(), name) - t1.columns.begin();
  };
  const auto& row = t1.rows.front();
  // 100 images per step per rank; achieved = images/s per rank × 3 GFLOP.
  const double achieved = 100 / predictions.front().stepS * 3e9;
  CHECK(row[column("GFLOP_s_per_rank")].value == Approx(achieved / 1e9));
  CHECK(row[column("MFU")].value == Approx(achieved / 494.7e12));
  CHECK(row[column("of_gemm_probe")].kind == dtbench::report::Cell::Kind::kEmpty);
}
