#include "experiments/cli/commands.h"

namespace dtbench::experiments {

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table{
      {"train", "train one model (one process per rank, data-parallel) and write a run directory", runTrainCommand},
      {"models", "list the model zoo with parameter counts", runModelsCommand},
      {"launch", "start N local ranks of a command with torchrun-style variables", runLaunchCommand},
      {"allreduce", "all-reduce benchmark (nccl-tests style) over gloo, mpi, nccl and topologies", runAllreduceCommand},
      {"report",
       "tables (time and speedup, compute vs communication, bandwidth, traffic, batch\n"
       "times, cost, accuracy, jobs) and figures from run directories",
       runReportCommand},
      {"sweep",
       "run dtbench train over a grid (batch sizes x world sizes x ...) on this machine\n"
       "or as Slurm jobs, skipping completed points, then write the job table and the report",
       runSweepCommand},
      {"predict",
       "predict Tables 1-3 at other world sizes on a described machine from one measured run\n"
       "(--calibrate: fit the machine's links to dtbench allreduce results)",
       runPredictCommand},
      {"capture", "capture a run's packets with libpcap (record) and turn them into wire tables (analyze)",
       runCaptureCommand},
      {"audit", "check a run's sample ledger (train --sample-ledger): every sample once per epoch", runAuditCommand},
      {"status", "print how a run stands or ended (summary.json's outcome: running, completed, ...)",
       runStatusCommand},
  };
  return table;
}

}  // namespace dtbench::experiments
