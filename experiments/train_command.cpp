#include <cmath>
#include <cstdio>

#include "experiments/commands.h"
#include "experiments/train_options.h"
#include "trainer/trainer.h"

namespace dtbench::experiments {
namespace {

void printMeasured(const trainer::RunConfig& c, const nlohmann::json& summary) {
  std::printf("dtbench train: %s on %s, batch %lld, 1 rank, %s -> %s\n", c.model.c_str(), c.dataset.c_str(),
              static_cast<long long>(c.batchSize), c.device.c_str(), c.outDir.c_str());
  std::printf("%5s %6s %10s %9s %8s %8s %9s %10s %9s %8s %9s\n", "epoch", "steps", "train_s", "img/s", "data_s",
              "h2d_s", "forward_s", "backward_s", "optim_s", "loss", "test_acc");
  for (const auto& e : summary["epochs"]) {
    char accuracy[16] = "-";
    if (!e["test_accuracy"].is_null()) std::snprintf(accuracy, sizeof accuracy, "%.4f", e["test_accuracy"].get<double>());
    std::printf("%5lld %6lld %10.3f %9.1f %8.3f %8.3f %9.3f %10.3f %9.3f %8.4f %9s\n",
                e["epoch"].get<long long>(), e["steps"].get<long long>(), e["train_time_s"].get<double>(),
                e["images_per_s"].get<double>(), e["data_s"].get<double>(), e["h2d_s"].get<double>(),
                e["forward_s"].get<double>(), e["backward_s"].get<double>(), e["optimizer_s"].get<double>(),
                e["train_loss"].get<double>(), accuracy);
    if (e["extrapolated"].get<bool>()) {
      std::printf("      epoch %lld cut to %lld of %lld steps: a full epoch extrapolates to %.1f s\n",
                  e["epoch"].get<long long>(), e["steps"].get<long long>(), e["full_epoch_steps"].get<long long>(),
                  e["extrapolated_epoch_s"].get<double>());
    }
  }
  std::printf("status %s, param_checksum %.6f; train_s = sum(step_s - data_s); img/s = samples / sum(step_s)\n",
              summary["status"].get<std::string>().c_str(), summary["param_checksum"].get<double>());
}

}  // namespace

int runTrainCommand(const std::vector<std::string>& args) {
  const TrainCommandLine commandLine = parseTrainOptions(args);
  if (commandLine.help) {
    std::printf("%s", commandLine.helpText.c_str());
    return 0;
  }
  trainer::Trainer trainer(commandLine.config);
  const nlohmann::json summary = trainer.run();
  printMeasured(commandLine.config, summary);
  return 0;
}

}  // namespace dtbench::experiments
