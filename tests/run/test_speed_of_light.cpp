// run/speed_of_light.h: the precision a run's FLOPs ran in, the peak they are measured against (the
// GPU's datasheet figures per kind, or the CPU's GEMM probe), and config.json's "speed_of_light".

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/device_peaks.h"
#include "run/run_facts.h"
#include "run/speed_of_light.h"

namespace run = dtbench::run;

namespace {

run::DeviceFacts gpuDevice(const std::string& name, int64_t sms, double gib, const std::string& capability) {
  run::DeviceFacts d;
  d.type = "cuda";
  d.model = name;
  d.smCount = sms;
  d.memoryBytes = static_cast<int64_t>(gib * 1024 * 1024 * 1024);
  d.computeCapability = capability;
  return d;
}

run::ModelFlops flops(double convolution, double linear) {
  run::ModelFlops f;
  f.forward = (convolution + linear) / 3;
  f.trainingConvolution = convolution;
  f.trainingLinear = linear;
  f.elementwise = 1e6;
  return f;
}

run::GemmProbe gemmProbe(double gflops, int64_t threads, const std::string& measured) {
  run::GemmProbe p;
  p.gflops = gflops;
  p.threads = threads;
  p.size = 512;
  p.seconds = 0.18;
  p.measured = measured;
  return p;
}

// The problems that name speed_of_light (a default RunConfig's other settings have their own).
std::vector<std::string> aboutSpeedOfLight(const std::vector<std::string>& problems) {
  std::vector<std::string> named;
  for (const std::string& p : problems)
    if (p.find("speed_of_light") != std::string::npos) named.push_back(p);
  return named;
}

}  // namespace

TEST_CASE("an fp32 run with cuDNN's TF32 on: its convolutions against the TF32 peak, its matrix products fp32's",
          "[speed_of_light]") {
  const run::DeviceFacts a100 = gpuDevice("NVIDIA A100-SXM4-80GB", 108, 79.2, "8.0");
  const run::SpeedOfLight s = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, true, false, a100);
  CHECK(s.convolutionPrecision == run::Precision::tf32);
  CHECK(s.linearPrecision == run::Precision::fp32);
  REQUIRE(s.convolutionPeak->tflops);
  CHECK(*s.convolutionPeak->tflops == 156);
  CHECK(*s.linearPeak->tflops == 19.5);
  CHECK(s.convolutionPeak->gpu == "a100-sxm4-80gb");
  // The step's FLOPs over the time they take at their peaks.
  REQUIRE(s.peakFlopsPerS());
  CHECK(*s.peakFlopsPerS() == Approx(3.1e9 / (3e9 / 156e12 + 1e8 / 19.5e12)));
  CHECK(s.onGpu());
  CHECK(s.peakLabel().find("a100-sxm4-80gb: convolutions tf32 156 TFLOP/s, linear layers fp32 19.5 TFLOP/s "
                           "(TF32: cuDNN on, cuBLAS off)") == 0);

  // Both flags off: fp32 throughout.
  const run::SpeedOfLight off = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, false, false, a100);
  CHECK(*off.peakFlopsPerS() == Approx(19.5e12));
}

TEST_CASE("autocast's precision is both kinds' - TF32 before Ampere is fp32 - a precision the part lacks has no peak",
          "[speed_of_light]") {
  const run::DeviceFacts h100 = gpuDevice("NVIDIA H100 80GB HBM3", 132, 79.1, "9.0");
  const run::SpeedOfLight bf16 = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kBf16, true, false, h100);
  CHECK(bf16.convolutionPrecision == run::Precision::bf16);
  CHECK(bf16.linearPrecision == run::Precision::bf16);
  CHECK(*bf16.peakFlopsPerS() == Approx(989.4e12));

  const run::DeviceFacts v100 = gpuDevice("Tesla V100-SXM2-32GB", 80, 31.7, "7.0");
  const run::SpeedOfLight tf32 = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, true, true, v100);
  CHECK(tf32.convolutionPrecision == run::Precision::fp32);  // the TF32 flags do nothing on a V100
  CHECK(*tf32.peakFlopsPerS() == Approx(15.7e12));

  const run::SpeedOfLight none = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kBf16, true, false, v100);
  CHECK_FALSE(none.peakFlopsPerS());
  CHECK(none.peakLabel().find("bf16") != std::string::npos);
}

TEST_CASE("an unknown GPU gives 'unknown' and no peak, never another part's", "[speed_of_light]") {
  for (const run::DeviceFacts& device : {gpuDevice("AMD Instinct MI300X", 304, 191.5, "9.4"),
                                         gpuDevice("NVIDIA H100 80GB HBM3", 16, 9.8, "9.0")}) {  // a MIG slice
    INFO(device.model << " with " << *device.smCount << " SMs");
    const run::SpeedOfLight s = run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, true, false, device);
    CHECK(s.convolutionPeak->gpu == "unknown");
    CHECK_FALSE(s.convolutionPeak->tflops);
    CHECK_FALSE(s.peakFlopsPerS());
    CHECK(s.peakLabel().rfind("unknown: ", 0) == 0);
  }
}

TEST_CASE("on the CPU the peak is the GEMM probe's rate", "[speed_of_light]") {
  const run::GemmProbe probe = gemmProbe(100, 1, "2026-11-28T00:00:00Z");
  const run::SpeedOfLight s = run::cpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, probe);
  CHECK_FALSE(s.onGpu());
  CHECK(*s.peakFlopsPerS() == Approx(1e11));
  CHECK(s.peakLabel() == "CPU GEMM probe: 100 GFLOP/s (512x512 fp32 matrix products, 1 thread, measured "
                         "2026-11-28T00:00:00Z)");
  CHECK(run::cpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kBf16, probe).convolutionPrecision == run::Precision::bf16);
}

TEST_CASE("config.json's speed_of_light reads back as written, and a wrong value is named", "[speed_of_light]") {
  const run::GemmProbe probe = gemmProbe(55.5, 2, "2026-11-28T01:02:03Z");
  const run::DeviceFacts a100 = gpuDevice("NVIDIA A100-SXM4-80GB", 108, 79.2, "8.0");
  for (const run::SpeedOfLight& s : {run::cpuSpeedOfLight(flops(3e9, 0), run::Amp::kOff, probe),
                                     run::gpuSpeedOfLight(flops(3e9, 1e8), run::Amp::kOff, true, false, a100)}) {
    const nlohmann::json j = run::speedOfLightJson(s);
    CHECK(j.at("flops_per_image").at("training") == s.flops.training());
    const run::SpeedOfLight back = run::readSpeedOfLightJson(j);
    CHECK(run::speedOfLightJson(back) == j);
    CHECK(back.peakFlopsPerS() == s.peakFlopsPerS());

    run::RunFacts facts;
    facts.speedOfLight = s;
    std::vector<std::string> problems;
    const run::RunRecord record = run::readConfigJson(run::configJson(run::RunConfig{}, facts), problems);
    CHECK(aboutSpeedOfLight(problems).empty());
    REQUIRE(record.facts.speedOfLight);
    CHECK(run::speedOfLightJson(*record.facts.speedOfLight) == j);
  }
  nlohmann::json bad = run::speedOfLightJson(run::cpuSpeedOfLight(flops(3e9, 0), run::Amp::kOff, probe));
  bad["convolution_precision"] = "fp64";
  CHECK_THROWS_WITH(run::readSpeedOfLightJson(bad), Catch::Contains("convolution_precision takes fp32, tf32, bf16 or fp16"));
  bad = run::speedOfLightJson(run::cpuSpeedOfLight(flops(3e9, 0), run::Amp::kOff, probe));
  bad["gemm_probe"]["threads"] = "two";
  CHECK_THROWS_WITH(run::readSpeedOfLightJson(bad), Catch::Contains("threads takes"));
  nlohmann::json config = run::configJson(run::RunConfig{}, run::RunFacts{});
  config["speed_of_light"] = 3;
  std::vector<std::string> problems;
  const run::RunRecord record = run::readConfigJson(config, problems);
  CHECK_FALSE(record.facts.speedOfLight);
  const std::vector<std::string> named = aboutSpeedOfLight(problems);
  REQUIRE(named.size() == 1);
  CHECK(named[0].find("config.json: speed_of_light takes an object") == 0);
  // A run written before the key existed has none, and no problem.
  config.erase("speed_of_light");
  problems.clear();
  CHECK_FALSE(run::readConfigJson(config, problems).facts.speedOfLight);
  CHECK(aboutSpeedOfLight(problems).empty());
}
