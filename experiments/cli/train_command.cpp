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
#include "run/run_outcome.h"
#include "run/run_summary.h"
#include "trainer/config.h"
#include "trainer/sync/compression_notice.h"
#include "trainer/trainer.h"

namespace dtbench::experiments {
namespace {

void printMeasured(const trainer::RunConfig& c, const run::RunSummary& summary) {
  using namespace trainer;
  std::printf("dtbench train: %s on %s, batch %lld per rank, %d rank(s)", c.model.c_str(),
              datasetNames().name(c.data.dataset), static_cast<long long>(c.data.batchSize), c.worldSize());
  if (c.worldSize() > 1)
    std::printf(" (%s, %s over %s/%s%s%s)", syncNames().name(c.sync.kind),
                c.sync.overlap ? "overlapped buckets" : "fused after backward", comm::name(c.comm.connection.backend),
                c.comm.topology.name().c_str(), c.sync.kind == Sync::kSsgd ? "" : ", pairs",
                c.sync.kind == Sync::kSsgd ? trainer::compressionLabel(c).c_str() : "");
  std::printf(", %s -> %s\n", deviceNames().name(c.device), c.outDir.c_str());
  std::printf("%5s %6s %10s %9s %8s %8s %9s %10s %9s %9s %9s %8s %9s\n", "epoch", "steps", "train_s", "img/s", "data_s",
              "h2d_s", "forward_s", "backward_s", "comm_s", "exposed_s", "optim_s", "loss", "test_acc");
  // A phase that was not timed (--phase-timing none) is "-", as batches.csv leaves it empty.
  const auto seconds = [](double value) {
    std::string text = "-";
    if (!std::isnan(value)) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.3f", value);
      text = buffer;
    }
    return text;
  };
  for (const run::EpochStats& e : summary.epochs) {
    char accuracy[16] = "-";
    if (!std::isnan(e.testAccuracy)) std::snprintf(accuracy, sizeof accuracy, "%.4f", e.testAccuracy);
    std::printf("%5lld %6lld %10.3f %9.1f %8.3f %8s %9s %10s %9.3f %9.3f %9s %8.4f %9s\n",
                static_cast<long long>(e.epoch), static_cast<long long>(e.steps), e.trainTimeS(), e.imagesPerSec(),
                e.dataS, seconds(e.h2dS).c_str(), seconds(e.forwardS).c_str(), seconds(e.backwardS).c_str(),
                e.commTotalS, e.commExposedS, seconds(e.optimizerS).c_str(), e.meanLoss, accuracy);
    if (e.extrapolated()) {
      std::printf("      epoch %lld cut to %lld of %lld steps: a full epoch extrapolates to %.1f s\n",
                  static_cast<long long>(e.epoch), static_cast<long long>(e.steps),
                  static_cast<long long>(e.fullEpochSteps), e.extrapolatedEpochS());
    }
  }
  if (run::isContinuable(summary.status)) {
    std::printf("status %s after step %lld: checkpoint written; continue with the same flags and --resume\n",
                run::outcomeText(summary.status).c_str(), static_cast<long long>(summary.interruptedAtStep.value_or(0)));
    return;
  }
  std::printf(
      "status %s, param_checksum %.6f; train_s = sum(step_s - data_s); img/s = samples of all ranks / "
      "sum(step_s); comm_s = union of collective intervals, exposed_s = end of backward to last completion\n",
      run::outcomeText(summary.status).c_str(), summary.paramChecksum.value_or(std::nan("")));
}

}  // namespace

int runTrainCommand(const std::vector<std::string>& args) {
  const TrainCommandLine commandLine = parseTrainOptions(args, comm::currentEnvironment());
  if (commandLine.help) {
    std::printf("%s", commandLine.helpText.c_str());
    return 0;
  }
  trainer::Trainer trainer(commandLine.config);
  const run::RunSummary summary = trainer.run();
  const trainer::RunConfig& c = commandLine.config;
  if (c.rank() == 0) printMeasured(c, summary);
  // The outcome's exit code: 0 completed; run::kRequeueExitCode (EX_TEMPFAIL) when preempted at an agreed
  // step with a checkpoint written, "requeue me" (docs/design.md, "Signals, failures and resume").
  return run::factsOf(summary.status.value_or(run::RunOutcome::kFailed)).exitCode;
}

}  // namespace dtbench::experiments
