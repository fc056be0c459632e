// dtbench: data-parallel training benchmarks. `dtbench SUBCOMMAND --help` for each subcommand.

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "dtbench/build_config.h"
#include "experiments/commands.h"
#include "trainer/config.h"
#include "trainer/environment.h"

namespace {

const char* kUsage =
    "Usage: dtbench SUBCOMMAND [OPTIONS]\n"
    "\n"
    "Subcommands:\n"
    "  train    train one model (one process per rank, data-parallel) and write a run directory\n"
    "  models   list the model zoo with parameter counts\n"
    "  launch   start N local ranks of a command with torchrun-style variables\n"
    "  allreduce  all-reduce benchmark (nccl-tests style) over gloo, mpi, nccl and topologies\n"
    "  report   tables (time and speedup, compute vs communication, bandwidth, traffic, batch\n"
    "           times, cost, accuracy, jobs) and figures from run directories\n"
    "  sweep    run dtbench train over a grid (batch sizes x world sizes x ...) on this machine\n"
    "           or as Slurm jobs, skipping completed points, then write the job table and the report\n"
    "\n"
    "`dtbench SUBCOMMAND --help` shows a subcommand's options. Exit codes: 0 success,\n"
    "1 failure (bad data, failed run), 2 usage error.\n";

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "train") return dtbench::experiments::runTrainCommand(args);
  if (command == "models") return dtbench::experiments::runModelsCommand(args);
  if (command == "launch") return dtbench::experiments::runLaunchCommand(args);
  if (command == "allreduce") return dtbench::experiments::runAllreduceCommand(args);
  if (command == "report") return dtbench::experiments::runReportCommand(args);
  if (command == "sweep") return dtbench::experiments::runSweepCommand(args);
  if (command == "-h" || command == "--help" || command == "help") {
    std::printf("%s", kUsage);
    return 0;
  }
  if (command == "--version") {
    std::printf("dtbench %s\n", DTBENCH_VERSION);
    return 0;
  }
  throw dtbench::trainer::UsageError("unknown subcommand '" + command + "'; valid subcommands: train, models, launch, allreduce, report, sweep");
}

}  // namespace

int main(int argc, char** argv) {
  // A rank that dies closes its sockets; Gloo's writes to them must fail with EPIPE, which the
  // communicator turns into an error naming the dead peer, instead of killing this rank silently.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], args);
  } catch (const dtbench::trainer::UsageError& e) {
    std::fprintf(stderr, "dtbench: usage error: %s\n", e.what());
    return 2;
  } catch (const dtbench::data::DataError& e) {
    std::fprintf(stderr, "dtbench: data error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtbench: error: %s\n", dtbench::trainer::errorMessage(e).c_str());
    return 1;
  }
}
