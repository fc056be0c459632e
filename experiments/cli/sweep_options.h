#pragma once
// The command line of `dtbench sweep` (sweep_command.cpp, docs/sweep.md), parsed once into one
// struct: the sweep's own flags before `--`, the dtbench train flags after it.

#include <string>
#include <vector>

#include "common/named_values.h"
#include "experiments/sweep/sweep_grid.h"

namespace dtbench::experiments {

enum class Launcher { kLocal, kSlurm };

// local, slurm (--launcher).
const common::NamedValues<Launcher>& launcherNames();

struct SweepOptions {
  std::string outDir;
  sweep::Grid grid;                     // the --grid-file's axes, then the --grid flags in order
  std::vector<std::string> trainFlags;  // the words after `--`
  int retries = 1;
  int ranksPerNode = 1;                 // --ranks-per-node: ranks on each node of a nodes axis
  Launcher launcher = Launcher::kLocal;
  std::string slurmScript;              // --slurm-script; empty: the default job script
  std::vector<std::string> sbatchArgs;  // --sbatch-args, split into words
  double slurmTimeout = 0;              // --slurm-timeout in seconds; 0: no limit
  std::string gpuType;                  // --gpu-type: the gres type of every point's GPUs; "" any
  std::string constraint;               // --constraint: sbatch --constraint of every point; "" none
  bool allowOverlap = false;            // --allow-overlap
  int minNodes = 0;                     // --min-nodes: each nodes point's range is --nodes=MIN-M; 0: --nodes=M
  std::string plotsDir;                 // --plots: the report's figures of the sweep's runs, drawn at its end
  bool dryRun = false;
  bool help = false;
  std::string helpText;
};

// Throws common::UsageError naming the bad flag: unknown flags, a missing --out, a bad or repeated
// grid key, a grid key that is no dtbench train flag taking a value, values of a numeric train flag
// that are not numbers or are the same number twice ("lr=0.1,0.10"), a train flag the sweep controls,
// --retries < 0, a --launcher other than local or slurm, --slurm-timeout < 0, an unclosed quote in
// --sbatch-args, the Slurm flags (--slurm-script, --sbatch-args, --slurm-timeout) without
// --launcher slurm, --ranks-per-node < 1 or without a nodes axis, --min-nodes < 1 or without a nodes axis
// (or without --launcher slurm), a nodes value above 1 with
// --launcher local, and a second `--` (one too many: dtbench train takes none).
SweepOptions parseSweepOptions(const std::vector<std::string>& args);

}  // namespace dtbench::experiments
