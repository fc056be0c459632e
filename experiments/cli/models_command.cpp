#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "experiments/cli/command_line.h"
#include "experiments/cli/commands.h"
#include "models/classifier.h"
#include "models/flop_count.h"
#include "models/registry.h"

namespace dtbench::experiments {

int runModelsCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::printf(
        "Usage: dtbench models\n"
        "Lists every model for 3x32x32 input and 10 classes: its trainable parameters, parameter tensors,\n"
        "fp32 size (MB = 10^6 bytes), and per image the GFLOP (10^9 floating-point operations, 2 per\n"
        "multiply-add) of its convolutions and linear layers in the forward pass and in the training\n"
        "step (forward + backward), and the elementwise operations apart (batch norm, activations,\n"
        "additions, pooling, the loss; millions). docs/report.md, \"FLOPs and the speed of light\",\n"
        "says how they are counted.\n");
    return 0;
  }
  if (!args.empty()) throwUsage("models", "dtbench models takes no arguments, got '" + args[0] + "'");
  std::printf("%-12s %12s %8s %10s %10s %12s %12s\n", "model", "parameters", "tensors", "fp32_MB", "fwd_GFLOP",
              "train_GFLOP", "elementwise_M");
  for (const std::string& name : models::modelNames()) {
    const models::ClassifierPtr model = models::makeModel(name);
    const models::ParameterStats stats = models::parameterStats(model->module());
    const models::FlopCount flops = models::countFlops(*model, 3, 32, 10);
    std::printf("%-12s %12lld %8lld %10.2f %10.4f %12.4f %12.3f\n", name.c_str(),
                static_cast<long long>(stats.parameters), static_cast<long long>(stats.tensors), stats.fp32Megabytes(),
                flops.forwardFlops() / 1e9, flops.trainingFlops() / 1e9,
                static_cast<double>(flops.elementwiseOps) / 1e6);
  }
  return 0;
}

}  // namespace dtbench::experiments
