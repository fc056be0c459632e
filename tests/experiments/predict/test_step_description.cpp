// The step description (experiments/predict/step_description.h): a step written as data predicts as
// the step it was written from; backward order, ready fractions, defaults, and what is refused.
#include <catch2/catch.hpp>

#include "hand_step.h"

#include <string>
#include <utility>
#include <vector>

#include "common/usage_error.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/step_description.h"
#include "experiments/predict/step_model.h"

using namespace dtbench::predict;

namespace {

// p0 = 2 MiB, p1 = 1 MiB in model order; backward 40 ms, p1 ready at 10 ms, p0 at 30 ms.
MeasuredStep handStep() {
  MeasuredStep run = handMeasuredStep({{"p0", 524288, 4, 0.03}, {"p1", 262144, 4, 0.01}});
  run.datasetLabel = "synthetic";
  run.segmentBytes.reset();  // unknown, as a description without the key reads
  run.computeS = 0.075;
  run.bufferElements = 100;
  run.bufferElementsKnown = true;
  return run;
}

Hardware twoPerNode() {
  Hardware h;
  h.ranksPerNode = 2;
  h.intra = {1e9, 5e-6};
  h.inter = {1e8, 20e-6};
  return h;
}

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({"format": "dtbench-step-description/1", "model": "m", "batch_size": 8,
    "train_samples": 80, "compute_s": {"forward": 0.01, "backward": 0.02},
    "parameters": [{"name": "last", "elements": 300, "ready_fraction": 0.25},
                   {"name": "first", "elements": 100, "dtype": "bfloat16", "ready_s": 0.02}]})");
}

std::string refusal(nlohmann::json json) {
  try {
    stepFromDescription(json, "step.json");
  } catch (const dtbench::common::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("A step's description predicts what the step itself predicts", "[predict][description]") {
  const MeasuredStep run = handStep();
  const MeasuredStep again = stepFromDescription(describeStep(run, "hand-made"), "step.json");
  CHECK(again.described);
  CHECK(again.description == "hand-made");
  CHECK(again.datasetLabel == "synthetic");
  REQUIRE(again.parameters.size() == 2);
  CHECK(again.parameters[0].name == "p0");  // back in model order
  CHECK(again.parameters[1].readyS == 0.01);
  for (const int world : {1, 2, 4, 8}) {
    const StepPrediction a = predictStep(run, twoPerNode(), world, {});
    const StepPrediction b = predictStep(again, twoPerNode(), world, {});
    CHECK(a.stepS == b.stepS);
    CHECK(a.commExposedS == b.commExposedS);
    CHECK(a.gradBytes == b.gradBytes);
    CHECK(a.stepsPerEpoch == b.stepsPerEpoch);
  }
}

TEST_CASE("A description lists parameters in backward order and reads fractions of backward", "[predict][description]") {
  const nlohmann::json written = describeStep(handStep(), "");
  CHECK(written.at("parameters").at(0).at("name") == "p1");
  const MeasuredStep step = stepFromDescription(minimal(), "step.json");
  REQUIRE(step.parameters.size() == 2);
  CHECK(step.parameters[0].name == "first");
  CHECK(step.parameters[0].elementBytes == 2);
  CHECK(step.parameters[0].readyS == 0.02);
  CHECK(step.parameters[1].readyS == Approx(0.005));
  CHECK(step.computeS == Approx(0.03));
  CHECK(step.settings.comm.connection.backend == dtbench::comm::Backend::kNccl);
  CHECK(step.settings.comm.topology.native());
  CHECK(!step.bufferElementsKnown);
}

TEST_CASE("A description's bucket layout is c10d's unless it says Horovod's fusion", "[predict][description]") {
  CHECK(stepFromDescription(minimal(), "step.json").bucketLayout == dtbench::comm::BucketLayout::kDdp);
  nlohmann::json j = minimal();
  j["settings"] = {{"bucket_layout", "fusion"}, {"bucket_mb", 64}};
  const MeasuredStep step = stepFromDescription(j, "step.json");
  CHECK(step.bucketLayout == dtbench::comm::BucketLayout::kFusion);
  CHECK(step.settings.sync.bucketMb == 64);
  const nlohmann::json written = describeStep(step, "");
  CHECK(written.at("settings").at("bucket_layout") == "fusion");
  CHECK(stepFromDescription(written, "again.json").bucketLayout == dtbench::comm::BucketLayout::kFusion);
  CHECK(describeStep(handStep(), "").at("settings").at("bucket_layout") == "ddp");
}

TEST_CASE("A description that cannot describe a step is refused, naming the field", "[predict][description]") {
  nlohmann::json j = minimal();
  j["colour"] = "red";
  CHECK_THAT(refusal(j), Catch::Contains("unknown key 'colour'") && Catch::Contains("The step description"));
  j = minimal();
  j["format"] = "other/2";
  CHECK_THAT(refusal(j), Catch::Contains("format must be"));
  j = minimal();
  j["parameters"][0]["ready_s"] = 0.01;
  CHECK_THAT(refusal(j), Catch::Contains("parameters[0] (last) takes exactly one of ready_fraction (0 to 1 of "
                                         "backward) or ready_s (seconds from backward's start), and has both"));
  j = minimal();
  j["parameters"][0].erase("ready_fraction");
  CHECK_THAT(refusal(j), Catch::Contains("parameters[0] (last) needs one of ready_fraction"));
  // A gradient is made by backward (0.02 s here): ready at its end at the latest.
  j = minimal();
  j["parameters"][1]["ready_s"] = 0.03;
  CHECK_THAT(refusal(j), Catch::Contains("parameters[1].ready_s (first) is 0.03 s, past backward's end: at most "
                                         "compute_s.backward, 0.02 s"));
  j = minimal();
  j["parameters"][1]["dtype"] = "int8";
  CHECK_THAT(refusal(j), Catch::Contains("dtype 'int8'"));
  j = minimal();
  j["compute_s"]["total"] = 0.02;
  CHECK_THAT(refusal(j), Catch::Contains("compute_s.total is shorter"));
  j = minimal();
  j["settings"] = {{"backend", "carrier-pigeon"}};
  CHECK_THAT(refusal(j), Catch::Contains("carrier-pigeon"));
  j = minimal();
  j["settings"] = {{"bucket_mb", 0}};
  CHECK_THAT(refusal(j), Catch::Contains("settings.bucket_mb must be a positive number"));
  j = minimal();
  j["settings"] = {{"bucket_layout", "horovod"}};
  // Named by its key in the file, once, not by the command-line flag.
  CHECK_THAT(refusal(j), Catch::Contains("settings.bucket_layout: 'horovod' is none of ddp, fusion"));
  CHECK_THAT(refusal(j), !Catch::Contains("--bucket-layout"));
  for (const auto& [key, flag] : std::vector<std::pair<std::string, std::string>>{
           {"backend", "--backend"}, {"topology", "--topology"}, {"sync", "--sync"}, {"compress", "--compress"}}) {
    j = minimal();
    j["settings"] = {{key, "horovod"}};
    CHECK_THAT(refusal(j), Catch::Contains("settings." + key + ": 'horovod' is none of "));
    CHECK_THAT(refusal(j), !Catch::Contains(flag));
  }
  j = minimal();
  j["parameters"] = nlohmann::json::array();
  CHECK_THAT(refusal(j), Catch::Contains("parameters must be a non-empty list"));
  j = minimal();
  j["batch_size"] = 0;
  CHECK_THAT(refusal(j), Catch::Contains("batch_size must be a whole number from 1"));
}

TEST_CASE("Every description written is one predict reads", "[predict][description]") {
  // A run's median ready time may fall past its median backward (the hooks run inside backward): it is
  // written as backward's end, where the model places it, and predicts the same.
  MeasuredStep run = handStep();
  run.parameters[0].readyS = 0.05;
  const nlohmann::json written = describeStep(run, "late gradient");
  CHECK(written.at("parameters").at(1).at("ready_s") == 0.04);
  CHECK_NOTHROW(checkDescriptionReads(written, "--describe run"));
  const MeasuredStep again = stepFromDescription(written, "again.json");
  CHECK(predictStep(again, twoPerNode(), 4, {}).stepS == predictStep(run, twoPerNode(), 4, {}).stepS);
  // Phases no description takes are refused before anything is written, naming the writer and the field.
  run.backwardS = 1e297;
  run.computeS = 1e297;
  CHECK_THROWS_WITH(checkDescriptionReads(describeStep(run, ""), "--describe-model resnet18"),
                    Catch::Contains("the description --describe-model resnet18 would write: compute_s.backward must be "
                                    "a positive number, at most 1e+15") &&
                        Catch::Contains("nothing written"));
}
