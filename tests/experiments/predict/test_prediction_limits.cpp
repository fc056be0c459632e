// Where a prediction reaches the edge of what it can say: a global batch larger than the epoch, a
// hardware file silent on its message overhead, a simulation too large for memory, and the refusals
// that must name what the user gave (experiments/predict/step_model.h, hardware.h, network_model.h).
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "common/usage_error.h"
#include "experiments/predict/hardware.h"
#include "experiments/predict/measured_step.h"
#include "experiments/predict/prediction_tables.h"
#include "experiments/predict/step_description.h"
#include "experiments/predict/step_model.h"

using namespace dtbench::predict;
using Catch::Contains;

namespace {

// CIFAR-10's 50,000 images at batch 128, one 1 MiB gradient ready at backward's end.
MeasuredStep cifarStep() {
  MeasuredStep run;
  run.settings.model = "hand";
  run.settings.comm.connection.backend = dtbench::comm::Backend::kNccl;
  run.path = "run";
  run.batchSize = 128;
  run.trainSamples = 50000;
  run.forwardS = 0.01;
  run.backwardS = 0.02;
  run.computeS = 0.03;
  MeasuredParameter p;
  p.name = "w";
  p.elements = 262144;
  p.readyS = 0.02;
  run.parameters = {p};
  return run;
}

Hardware eightPerNode() {
  Hardware h;
  h.ranksPerNode = 8;
  h.intra = {1e11, 3e-6};
  h.inter = {1e10, 6e-6};
  return h;
}

std::string predictRefusal(const MeasuredStep& run, const Hardware& hw, int world, const WhatIf& w) {
  try {
    predictStep(run, hw, world, w);
  } catch (const dtbench::common::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

std::string assumedOf(const MeasuredStep& run, const Hardware& hw, int world) {
  const auto tables = predictionTables(run, hw, "hw.json", {predictStep(run, hw, world, {})}, predictStep(run, hw, 1, {}));
  std::string text;
  for (const auto& row : tables.front().rows) text += row[0].text + ": " + row[1].text + "\n";
  return text;
}

nlohmann::json limitsHardwareJson(const std::string& interOverhead) {
  return nlohmann::json::parse(R"({"ranks_per_node": 8, "intra_node": {"bandwidth_gbit_s": 800, "latency_us": 3},
      "inter_node": {"bandwidth_gbit_s": 80, "latency_us": 6)" + interOverhead + "}}");
}

}  // namespace

TEST_CASE("A global batch beyond the epoch is said with the steps it assumes, and refused under drop_last",
          "[predict][limits]") {
  const MeasuredStep run = cifarStep();
  // 390 × 128 = 49,920 images fit in 50,000: nothing to say.
  CHECK_FALSE(globalBatchNote(run, 390));
  // 512 × 128 = 65,536: one step of ⌈50,000 / 512⌉ = 98 images a rank, the dataset padded to 50,176.
  const std::optional<std::string> note = globalBatchNote(run, 512);
  REQUIRE(note);
  CHECK_THAT(*note, Contains("N = 512: the global batch (512 × 128 = 65536 images) exceeds the epoch's 50000: "
                             "1 step an epoch, of 98 images a rank (the dataset padded to 50176, 176 of them repeated)") &&
                        Contains("compute of a full batch of 128"));
  // 391 ranks hold ⌈50,000 / 391⌉ = 128 each: full batches, 48 images repeated, and no word of overstatement.
  CHECK_THAT(*globalBatchNote(run, 391), Contains("of 128 images a rank (the dataset padded to 50048, 48 of them repeated)") &&
                                             !Contains("overstates"));
  const StepPrediction p = predictStep(run, eightPerNode(), 512, {});
  CHECK(p.stepsPerEpoch == 1);
  CHECK(p.imagesPerS == Approx(98.0 * 512 / p.stepS));  // the images the step holds, not 128 a rank
  CHECK_THAT(assumedOf(run, eightPerNode(), 512), Contains("epoch: N = 512: the global batch"));
  CHECK_THAT(assumedOf(run, eightPerNode(), 8), !Contains("epoch:"));

  MeasuredStep dropLast = run;
  dropLast.settings.data.dropLast = true;
  CHECK_THAT(predictRefusal(dropLast, eightPerNode(), 512, {}),
             Contains("--world 512: with drop_last the sampler deals each rank 50000 / 512 = 97 images, fewer than "
                      "one batch of 128, so an epoch has no step: predict at most 390 ranks"));
  CHECK(predictStep(dropLast, eightPerNode(), 384, {}).stepsPerEpoch == 1);
}

TEST_CASE("A hardware file without a message overhead takes NCCL's network post overhead across nodes, and says so",
          "[predict][limits]") {
  const Hardware absent = hardwareFromJson(limitsHardwareJson(""), "hw.json");
  CHECK_FALSE(absent.interOverheadGiven);
  CHECK(absent.inter.messageOverheadS == kDefaultNetworkOverheadS);
  CHECK(absent.intra.messageOverheadS == 0);
  CHECK_THAT(messageOverheadAssumed(absent),
             Contains("inter-node 1 us, intra-node 0 us per message a rank issues: inter-node the default, NCCL's "
                      "network post overhead") &&
                 Contains("gives no inter_node.message_overhead_us"));
  // Written back without it, so that it is read as a default again.
  CHECK_FALSE(toJson(absent).at("inter_node").contains("message_overhead_us"));

  // 0 written out is the file's own 0, told apart from absent.
  const Hardware zero = hardwareFromJson(limitsHardwareJson(R"(, "message_overhead_us": 0)"), "hw.json");
  CHECK(zero.interOverheadGiven);
  CHECK(zero.inter.messageOverheadS == 0);
  CHECK_THAT(messageOverheadAssumed(zero), Contains("the hardware file's message_overhead_us of 0") &&
                                               !Contains("gives no"));
  CHECK(toJson(zero).at("inter_node").at("message_overhead_us") == 0);
  // A figure given is the file's, as before.
  const Hardware given = hardwareFromJson(limitsHardwareJson(R"(, "message_overhead_us": 2)"), "hw.json");
  CHECK(given.inter.messageOverheadS == Approx(2e-6));
  CHECK_THAT(messageOverheadAssumed(given), Contains("inter-node 2 us") && Contains("inter-node the hardware file's"));

  // A clique across nodes pays it: at 64 ranks, 2 × 63 issues of 1 us at least, where 0 paid none.
  MeasuredStep run = cifarStep();
  WhatIf clique;
  clique.topology = dtbench::comm::Topology::parse("clique");
  const double withDefault = predictStep(run, absent, 64, clique).collectives.back().seconds;
  const double without = predictStep(run, zero, 64, clique).collectives.back().seconds;
  CHECK(withDefault >= without + 2 * 63 * 0.5e-6);
}

TEST_CASE("An --element-bytes on a compressed step names the step's compression, not a --compress never given",
          "[predict][limits]") {
  MeasuredStep run = cifarStep();
  run.settings.sync.compress = dtbench::run::Compression::kFp16;
  WhatIf w;
  w.elementBytes = 2;
  const std::string refused = predictRefusal(run, eightPerNode(), 16, w);
  CHECK_THAT(refused, Contains("--element-bytes: run compresses its gradients (fp16, its config.json's compress)") &&
                          Contains("add --compress none") && !Contains("--element-bytes and --compress"));
  run.described = true;
  CHECK_THAT(predictRefusal(run, eightPerNode(), 16, w), Contains("(fp16, its settings.compress)"));
  // Both given on the command line: both named.
  w.compress = dtbench::run::Compression::kBf16;
  CHECK_THAT(predictRefusal(run, eightPerNode(), 16, w), Contains("--element-bytes and --compress both"));
}

TEST_CASE("PowerSGD on a description without shapes says how to write one with them", "[predict][limits]") {
  MeasuredStep run = cifarStep();
  run.described = true;
  run.path = "step.json";
  run.settings.model = "resnet18";
  run.parameters.front().elements = 6;  // a matrix, which needs its shape
  WhatIf psgd;
  psgd.compress = dtbench::run::Compression::kPowerSgd;
  CHECK_THAT(predictRefusal(run, eightPerNode(), 16, psgd),
             Contains("step.json does not record w's (its parameters give no shape)") &&
                 Contains("--describe-model resnet18") && !Contains("train the run again"));
}

TEST_CASE("A simulation too large for memory suggests only what lowers its messages", "[predict][limits]") {
  // One node of 65,536 ranks: hierarchical there is a ring within the node, 65,536 ranks' 2 × 65,535
  // messages; another hierarchical cannot help, fewer ranks per node and a smaller world can.
  Hardware oneNode = eightPerNode();
  oneNode.ranksPerNode = 65536;
  WhatIf hierarchical;
  hierarchical.topology = dtbench::comm::Topology::parse("hierarchical");
  const std::string refused = predictRefusal(cifarStep(), oneNode, 65536, hierarchical);
  CHECK_THAT(refused, Contains("this process may use") && Contains("a smaller --world") &&
                          Contains("fewer ranks per node") && !Contains("--topology hierarchical"));
  // A ring over two nodes of 32,768: hierarchical sends fewer a rank, and is suggested.
  oneNode.ranksPerNode = 32768;
  WhatIf ring;
  ring.topology = dtbench::comm::Topology::parse("ring");
  CHECK_THAT(predictRefusal(cifarStep(), oneNode, 65536, ring), Contains("--topology hierarchical"));
}
