// trainer/record/gemm_probe.h and speed_of_light.h: the CPU's GEMM probe (measured once per boot,
// thread count and size, then read from its cache; a damaged cache measured again) and config.json's
// speed_of_light as the trainer describes a CPU run (the GPU's peaks: tests/run/test_speed_of_light.cpp).

#include "catch_torch.h"

#include <fstream>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "models/flop_count.h"
#include "run/run_facts.h"
#include "temp_dir.h"
#include "trainer/config.h"
#include "trainer/record/gemm_probe.h"
#include "trainer/record/speed_of_light.h"

namespace trainer = dtbench::trainer;
namespace run = dtbench::run;
using dtbench::testing::TempDir;

TEST_CASE("the GEMM probe measures once per boot and thread count, then reads its cache", "[speed_of_light]") {
  const TempDir cache;
  const std::string dir = cache.path().string();
  const int threads = at::get_num_threads();
  const run::GemmProbe first = trainer::probeGemm(dir, "boot-a");
  CHECK(first.gflops > 0);
  CHECK(first.threads == threads);
  CHECK(first.size == trainer::kProbeSize);
  CHECK(first.seconds > 0);
  const std::string file = dir + "/boot-a-threads" + std::to_string(threads) + "-size512.json";
  REQUIRE(std::ifstream(file).good());

  // The same boot and threads: the cached figure, to the digit, with its first date.
  const run::GemmProbe cached = trainer::probeGemm(dir, "boot-a");
  CHECK(cached.gflops == first.gflops);
  CHECK(cached.measured == first.measured);
  CHECK(cached.seconds == first.seconds);

  // Another boot is another machine state: measured again, into a file of its own.
  trainer::probeGemm(dir, "boot-b");
  CHECK(std::ifstream(dir + "/boot-b-threads" + std::to_string(threads) + "-size512.json").good());

  // A damaged cache is measured again and rewritten, never an error.
  std::ofstream(file) << "{ not json";
  const run::GemmProbe again = trainer::probeGemm(dir, "boot-a");
  CHECK(again.gflops > 0);
  std::ifstream rewritten(file);
  const std::string text((std::istreambuf_iterator<char>(rewritten)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"gflops\"") != std::string::npos);

  // Without a cache: measured every time.
  CHECK(trainer::probeGemm("", "boot-a").gflops > 0);
}

TEST_CASE("a CPU run's speed_of_light: the model's counted FLOPs, fp32, and the probe as its peak",
          "[speed_of_light]") {
  const TempDir cache;
  setenv("DTBENCH_CACHE_DIR", cache.path().c_str(), 1);
  dtbench::data::Dataset train;
  train.images = at::zeros({4, 3, 32, 32}, at::kByte);
  train.labels = at::zeros({4}, at::kLong);
  train.numClasses = 10;
  trainer::RunConfig config;
  config.model = "mobilenetv2";
  run::DeviceFacts cpu;
  cpu.type = "cpu";
  cpu.bootId = "boot-c";
  const std::optional<run::SpeedOfLight> s = trainer::describeSpeedOfLight(config, train, c10::Device("cpu"), cpu);
  unsetenv("DTBENCH_CACHE_DIR");
  REQUIRE(s);
  const dtbench::models::FlopCount count = dtbench::models::countModelFlops("mobilenetv2");
  CHECK(s->flops.forward == count.forwardFlops());
  CHECK(s->flops.training() == count.trainingFlops());
  CHECK(s->flops.trainingLinear == 2.0 * static_cast<double>(count.trainingMacs("linear")));
  CHECK(s->convolutionPrecision == run::Precision::fp32);
  CHECK_FALSE(s->tf32Cudnn);
  REQUIRE(s->gemmProbe);
  CHECK(*s->peakFlopsPerS() == s->gemmProbe->gflops * 1e9);
  CHECK(std::ifstream(cache.path().string() + "/gemm-probe/boot-c-threads" + std::to_string(at::get_num_threads()) +
                      "-size512.json")
            .good());

  // Images that are not square: no count, no figure.
  train.images = at::zeros({4, 3, 32, 16}, at::kByte);
  CHECK_FALSE(trainer::describeSpeedOfLight(config, train, c10::Device("cpu"), cpu));
}
