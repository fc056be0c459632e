#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "experiments/cli/command_line.h"
#include "experiments/cli/commands.h"
#include "models/classifier.h"
#include "models/registry.h"

namespace dtbench::experiments {

int runModelsCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::printf(
        "Usage: dtbench models\n"
        "Lists every model with its trainable parameters, parameter tensors and fp32 size\n"
        "(MB = 10^6 bytes) for 3x32x32 input and 10 classes.\n");
    return 0;
  }
  if (!args.empty()) throwUsage("models", "dtbench models takes no arguments, got '" + args[0] + "'");
  std::printf("%-12s %12s %8s %10s\n", "model", "parameters", "tensors", "fp32_MB");
  for (const std::string& name : models::modelNames()) {
    const models::ParameterStats stats = models::parameterStats(models::makeModel(name)->module());
    std::printf("%-12s %12lld %8lld %10.2f\n", name.c_str(), static_cast<long long>(stats.parameters),
                static_cast<long long>(stats.tensors), stats.fp32Megabytes());
  }
  return 0;
}

}  // namespace dtbench::experiments
