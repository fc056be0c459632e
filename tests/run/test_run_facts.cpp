// run/run_facts.h: config.json as a whole (settings and facts) read back, and the run directories of
// the report's fixtures, written by earlier versions of dtbench, read without a problem.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dtbench/build_config.h"
#include "run/config_schema.h"
#include "run/run_facts.h"

namespace run = dtbench::run;
namespace fs = std::filesystem;

TEST_CASE("the facts of a run of several ranks read back as written", "[run][facts]") {
  run::RunFacts facts;
  facts.environment = {{"libtorch_version", "2.11.0"}};
  facts.slurmJobId = "1234_5";
  facts.modelParameters = 62006;
  facts.trainSamples = 1024;
  facts.testSamples = 64;
  facts.clusterFile = "/tmp/cluster.json";
  facts.linkRateBps = std::map<std::string, std::optional<double>>{{"node1", 1e9}, {"node2", std::nullopt}};
  run::WorldFacts& world = facts.world.emplace();
  world.hosts = {"node1", "node2"};
  world.segmentBytes = 1 << 20;
  world.buckets = run::BucketFacts{{{9, 8}, {7, 6, 5}}, {120, 4001}, {"float32", "float32"}};
  run::RunConfig settings = run::resolveDefaults(run::RunConfig{});  // as a run writes them
  settings.comm.connection.worldSize = 2;                               // one host per rank
  const nlohmann::json written = run::configJson(settings, facts);
  CHECK(written.at("link_rate_bps").at("node1") == 1000000000);  // a whole rate as an integer
  CHECK(written.at("link_rate_bps").at("node2").is_null());
  std::vector<std::string> problems;
  const run::RunRecord read = run::readConfigJson(written, problems);
  CAPTURE(problems);  // a value of the wrong type, or one that breaks its setting's rule
  CHECK(problems.empty());
  CHECK(run::configJson(read.settings, read.facts) == written);

  run::RunFacts alone;  // one rank, off the cluster, off Slurm: no world, null links
  const nlohmann::json one = run::configJson(run::resolveDefaults(run::RunConfig{}), alone);
  CHECK_FALSE(one.contains("hosts"));
  CHECK(one.at("link_rate_bps").is_null());
  CHECK(one.at("slurm_job_id").is_null());
  CHECK_FALSE(run::readConfigJson(one, problems).facts.world);
  CHECK(problems.empty());

  // Counts that no run has (negative, or so large their products overflow) are damage, named: they gave
  // a negative busbw, grad_bytes -4 and negative steps in predict.
  for (const auto& [key, value] : {std::pair<std::string, nlohmann::json>{"bucket_elements", {120, -61707}},
                                   {"bucket_elements", {120, INT64_MAX}},
                                   {"train_samples", INT64_MAX},
                                   {"test_samples", -1}}) {
    nlohmann::json damaged = written;
    damaged[key] = value;
    problems.clear();
    run::readConfigJson(damaged, problems);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems.front(), Catch::Contains(key) && Catch::Contains("a count from 0 to 1099511627776"));
  }
}

TEST_CASE("every key written is the schema's or a fact's", "[run][facts]") {
  run::RunFacts facts;
  facts.world.emplace().buckets.emplace().collectives = {{{"gradients", 1, "float32"}}};
  facts.dpDevices = 1;
  facts.linkRateBps.emplace();
  facts.speedOfLight.emplace();
  facts.segments = {run::RunSegment{}, run::RunSegment{}};  // written once there are two
  facts.segments[1].firstGlobalStep = 5;
  const nlohmann::json written = run::configJson(run::RunConfig{}, facts);
  for (const auto& [key, value] : written.items()) {
    INFO(key);
    const run::Setting* setting = run::findSettingByKey(key);
    const bool fact = std::find(run::factKeys().begin(), run::factKeys().end(), key) != run::factKeys().end();
    CHECK((setting && setting->recorded) != fact);
  }
  CHECK(written.size() == run::settingsJson(run::RunConfig{}).size() + run::factKeys().size());
}

TEST_CASE("the report's fixture runs, written before the schema, read without a problem", "[run][facts]") {
  int read = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(DTBENCH_SOURCE_DIR) / "tests/experiments/report")) {
    if (entry.path().filename() != "config.json") continue;
    INFO(entry.path().string());
    std::ifstream in(entry.path());
    const nlohmann::json config = nlohmann::json::parse(in);
    std::vector<std::string> problems;
    const run::RunRecord record = run::readConfigJson(config, problems);
    CHECK(problems.empty());
    for (const std::string& p : problems) UNSCOPED_INFO(p);
    CHECK(record.settings.model == config.at("model").get<std::string>());
    ++read;
  }
  CHECK(read >= 15);
}

TEST_CASE("a rank's device reads back as written, GPU and CPU", "[run][facts]") {
  run::DeviceFacts gpu;
  gpu.type = "cuda";
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.host = "node1";
  gpu.bootId = "0c1f-boot";
  gpu.cores = 16;
  gpu.threads = 1;
  gpu.index = 0;
  gpu.smCount = 132;
  gpu.memoryBytes = 85'045'395'456;
  gpu.clockMhz = 1980;
  gpu.computeCapability = "9.0";
  gpu.driverVersion = "13.0";
  gpu.cudaRuntimeVersion = "13.0";
  run::DeviceFacts cpu;
  cpu.type = "cpu";
  cpu.model = "AMD EPYC 7742 64-Core Processor";
  cpu.host = "node2";
  cpu.bootId = "7d2a-boot";
  cpu.cores = 2;
  cpu.threads = 1;
  const nlohmann::json written = run::deviceJson(cpu);
  CHECK_FALSE(written.contains("sm_count"));  // what does not apply is left out
  for (const run::DeviceFacts& d : {gpu, cpu})
    CHECK(run::deviceJson(run::readDeviceJson(run::deviceJson(d))) == run::deviceJson(d));

  run::RunFacts facts;
  facts.devices = {gpu, gpu, cpu};
  facts.world.emplace().hosts = {"node1", "node1", "node2"};
  run::RunConfig three = run::resolveDefaults(run::RunConfig{});
  three.comm.connection.worldSize = 3;  // one device a rank
  CHECK(run::devicesLabel(facts) == "cuda NVIDIA H100 80GB HBM3 + cpu AMD EPYC 7742 64-Core Processor");
  CHECK(run::devicesLabel(run::RunFacts{}).empty());  // a run written before devices were recorded
  std::vector<std::string> problems;
  const run::RunRecord read = run::readConfigJson(run::configJson(three, facts), problems);
  CHECK(problems.empty());
  REQUIRE(read.facts.devices.size() == 3);
  CHECK(read.facts.devices[0].smCount == 132);
  CHECK(read.facts.devices[2].model == cpu.model);

  nlohmann::json mistyped = run::configJson(three, facts);
  mistyped["devices"][1]["sm_count"] = "many";
  run::readConfigJson(mistyped, problems);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("devices") && Catch::Contains("sm_count") && Catch::Contains("whole number"));
}

// The facts a run measured and the plans it recorded are range-checked like its settings: a value no run can
// have is damage, named, and the run is left out of the report's tables (it gave false "oversubscribed" flags,
// a compression ratio of 0.006 and a busbw of 2.28 GB/s).
TEST_CASE("measured facts and recorded plans out of range are damage, named", "[run][facts]") {
  run::DeviceFacts cpu;
  cpu.type = "cpu";
  cpu.model = "AMD EPYC 7742 64-Core Processor";
  cpu.host = "node1";
  cpu.bootId = "b";
  cpu.cores = 2;
  cpu.threads = 1;
  run::RunFacts facts;
  facts.devices = {cpu, cpu};
  run::WorldFacts& world = facts.world.emplace();
  world.hosts = {"node1", "node1"};
  // LeNet's one bucket at powersgd rank 2 (comm/compressed_sizes.h's worked example).
  world.buckets = run::BucketFacts{{{0, 1}}, {62007}, {"float32"},
                                   {{{"uncompressed", 237, "float32"}, {"p", 472, "float32"}, {"q", 1658, "float32"}}}};
  facts.speedOfLight.emplace().gemmProbe = run::GemmProbe{12.5, 1, 512, 0.1, "2026-12-01T00:00:00Z"};
  run::RunConfig settings = run::resolveDefaults(run::RunConfig{});
  settings.comm.connection.worldSize = 2;
  settings.sync.compress = run::Compression::kPowerSgd;
  const nlohmann::json written = run::configJson(settings, facts);
  std::vector<std::string> problems;
  run::readConfigJson(written, problems);
  CAPTURE(problems);
  REQUIRE(problems.empty());

  const auto damage = [&](const std::function<void(nlohmann::json&)>& change, const std::vector<std::string>& words) {
    nlohmann::json damaged = written;
    change(damaged);
    problems.clear();
    run::readConfigJson(damaged, problems);
    CAPTURE(damaged.dump());
    REQUIRE(problems.size() == 1);
    for (const std::string& word : words) CHECK_THAT(problems.front(), Catch::Contains(word));
  };
  damage([](nlohmann::json& c) { c["devices"][0]["cores"] = 0; }, {"cores", ">= 1"});
  damage([](nlohmann::json& c) { c["devices"][1]["threads"] = -2; }, {"threads", ">= 1"});
  damage([](nlohmann::json& c) { c["devices"][0]["type"] = "tpu"; }, {"type", "cpu or cuda"});
  damage([](nlohmann::json& c) { c["devices"].erase(1); }, {"devices lists 1 devices for world_size 2"});
  damage([](nlohmann::json& c) { c["speed_of_light"]["gemm_probe"]["gflops"] = 0; }, {"gflops", "> 0"});
  damage([](nlohmann::json& c) { c["speed_of_light"]["gemm_probe"]["seconds"] = -1; }, {"seconds", "> 0"});
  damage([](nlohmann::json& c) { c["speed_of_light"]["convolution_peak"] = {{"gpu", "h900"}, {"precision", "fp32"}}; },
         {"h900", "peak table"});
  // bucket_collectives against the buckets: the factors hold under half of the compressed matrices' elements.
  damage([](nlohmann::json& c) { c["bucket_collectives"][0][1]["elements"] = 472 * 166; }, {"bucket_collectives", "do not fit"});
  damage([](nlohmann::json& c) { c["bucket_collectives"][0][0]["elements"] = 70000; }, {"bucket_collectives", "do not fit"});
  damage([](nlohmann::json& c) { c["bucket_collectives"][0].erase(2); }, {"P and Q together"});
  damage([](nlohmann::json& c) { c["bucket_collectives"][0][2]["dtype"] = "float16"; }, {"float32"});
  damage([](nlohmann::json& c) { c["bucket_collectives"].push_back(c["bucket_collectives"][0]); }, {"lists 2 buckets"});
  damage([](nlohmann::json& c) { c["compress"] = "fp16"; }, {"one all-reduce of its 62007 elements in float16"});
  damage([](nlohmann::json& c) {
    c["compress"] = "none";
    c["bucket_collectives"] = {{{{"what", "gradients"}, {"elements", 62006}, {"dtype", "float32"}}}};
  }, {"one all-reduce of its 62007 elements in float32"});
}

TEST_CASE("a resized run's segments and their resize latency read back, damage named", "[run][facts]") {
  run::RunFacts facts;
  run::RunSegment first;
  first.worldSize = 4;
  first.batchSize = 3;
  first.globalBatchSize = 12;
  first.lr = 0.1;
  run::RunSegment second = first;
  second.firstGlobalStep = 9;
  second.worldSize = 2;
  second.batchSize = 6;
  second.previousStepAt = 1795400002.5;
  second.firstStepAt = 1795400010.0;
  facts.segments = {first, second};
  const nlohmann::json written = run::configJson(run::resolveDefaults(run::RunConfig{}), facts);
  const nlohmann::json& list = written.at("segments");
  CHECK_FALSE(list[0].contains("resize_latency_s"));  // the first segment has no resize
  CHECK(list[1].at("resize_latency_s").get<double>() == Approx(7.5));
  std::vector<std::string> problems;
  const run::RunRecord read = run::readConfigJson(written, problems);
  CAPTURE(problems);
  CHECK(problems.empty());
  REQUIRE(read.facts.segments.size() == 2);
  CHECK(read.facts.segments[1].resizeLatencyS() == Approx(7.5));
  CHECK(run::segmentOfStep(read.facts.segments, 8) == 0);
  CHECK(run::segmentOfStep(read.facts.segments, 9) == 1);
  // A first step not yet started: null latency.
  facts.segments[1].firstStepAt.reset();
  CHECK(run::configJson(run::resolveDefaults(run::RunConfig{}), facts).at("segments")[1].at("resize_latency_s").is_null());
  for (const auto& [key, value, named] :
       {std::tuple<std::string, nlohmann::json, std::string>{"world_size", 0, "world_size takes a whole number from 1"},
        {"global_batch_size", 13, "global_batch_size is 13, not batch_size x world_size 12"},
        {"first_global_step", 1, ""},
        {"resize_latency_s", 3.0, "resize_latency_s takes first_step_at - previous_step_at"},
        {"first_step_at", "soon", "first_step_at takes Unix seconds"}}) {
    nlohmann::json damaged = written;
    damaged["segments"][1][key] = value;
    problems.clear();
    run::readConfigJson(damaged, problems);
    CAPTURE(key, problems);
    if (named.empty()) {  // a second segment from step 1 is allowed (the first trained none)
      CHECK(problems.empty());
      continue;
    }
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems.front(), Catch::Contains("config.json: segments [1].") && Catch::Contains(named));
  }
}
