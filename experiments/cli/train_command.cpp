#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/backends/backend.h"
#include "comm/backends/make_communicator.h"
#include "comm/rank_discovery.h"
#include "comm/topology/registry.h"
#include "common/named_values.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/train_options.h"
#include "trainer/config.h"
#include "trainer/trainer.h"

namespace dtbench::experiments {
namespace {

void printMeasured(const trainer::RunConfig& c, const nlohmann::json& summary) {
  using namespace trainer;
  std::printf("dtbench train: %s on %s, batch %lld per rank, %d rank(s)", c.model.c_str(),
              datasetNames().name(c.data.dataset), static_cast<long long>(c.data.batchSize), c.worldSize());
  if (c.worldSize() > 1)
    std::printf(" (%s, %s over %s/%s%s)", syncNames().name(c.sync.kind),
                c.sync.overlap ? "overlapped buckets" : "fused after backward", comm::name(c.comm.connection.backend),
                c.comm.topology.name().c_str(), c.sync.kind == Sync::kSsgd ? "" : ", pairs");
  std::printf(", %s -> %s\n", deviceNames().name(c.device), c.outDir.c_str());
  std::printf("%5s %6s %10s %9s %8s %8s %9s %10s %9s %9s %9s %8s %9s\n", "epoch", "steps", "train_s", "img/s", "data_s",
              "h2d_s", "forward_s", "backward_s", "comm_s", "exposed_s", "optim_s", "loss", "test_acc");
  for (const auto& e : summary["epochs"]) {
    char accuracy[16] = "-";
    if (!e["test_accuracy"].is_null())
      std::snprintf(accuracy, sizeof accuracy, "%.4f", e["test_accuracy"].get<double>());
    std::printf("%5lld %6lld %10.3f %9.1f %8.3f %8.3f %9.3f %10.3f %9.3f %9.3f %9.3f %8.4f %9s\n",
                e["epoch"].get<long long>(), e["steps"].get<long long>(), e["train_time_s"].get<double>(),
                e["images_per_s"].get<double>(), e["data_s"].get<double>(), e["h2d_s"].get<double>(),
                e["forward_s"].get<double>(), e["backward_s"].get<double>(), e["comm_total_s"].get<double>(),
                e["comm_exposed_s"].get<double>(), e["optimizer_s"].get<double>(), e["train_loss"].get<double>(),
                accuracy);
    if (e["extrapolated"].get<bool>()) {
      std::printf("      epoch %lld cut to %lld of %lld steps: a full epoch extrapolates to %.1f s\n",
                  e["epoch"].get<long long>(), e["steps"].get<long long>(), e["full_epoch_steps"].get<long long>(),
                  e["extrapolated_epoch_s"].get<double>());
    }
  }
  if (summary["status"] == "interrupted") {
    std::printf("status interrupted after step %lld: checkpoint written; continue with the same flags and --resume\n",
                summary["interrupted_at_step"].get<long long>());
    return;
  }
  std::printf(
      "status %s, param_checksum %.6f; train_s = sum(step_s - data_s); img/s = samples of all ranks / "
      "sum(step_s); comm_s = union of collective intervals, exposed_s = end of backward to last completion\n",
      summary["status"].get<std::string>().c_str(), summary["param_checksum"].get<double>());
}

}  // namespace

int runTrainCommand(const std::vector<std::string>& args) {
  const TrainCommandLine commandLine = parseTrainOptions(args, comm::currentEnvironment());
  if (commandLine.help) {
    std::printf("%s", commandLine.helpText.c_str());
    return 0;
  }
  trainer::Trainer trainer(commandLine.config);
  const nlohmann::json summary = trainer.run();
  const trainer::RunConfig& c = commandLine.config;
  if (c.rank() == 0) printMeasured(c, summary);
  // EX_TEMPFAIL: preempted at an agreed step with a checkpoint written; "requeue me" (docs/design.md,
  // "Signals, failures and resume").
  return summary.at("status").get<std::string>() == "interrupted" ? 75 : 0;
}

}  // namespace dtbench::experiments
