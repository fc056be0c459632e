#include "experiments/cli/sweep_options.h"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <memory>
#include <utility>

#include <cxxopts.hpp>

#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"
#include "experiments/cli/train_options.h"
#include "experiments/sweep/point_attempts.h"
#include "experiments/sweep/slurm_launcher.h"
#include "experiments/sweep/slurm_jobs.h"

namespace dtbench::experiments {

using common::UsageError;

const common::NamedValues<Launcher>& launcherNames() {
  static const common::NamedValues<Launcher> names("--launcher",
                                                   {{Launcher::kLocal, "local"}, {Launcher::kSlurm, "slurm"}});
  return names;
}

namespace {

// A grid key other than world and batch (which the grid checks itself) is a dtbench train flag that
// takes a value; values of a numeric flag are compared as numbers.
void checkGridKey(const sweep::GridAxis& axis) {
  if (axis.key == "world" || axis.key == "nodes" || axis.key == "batch") return;
  switch (trainFlagKind(axis.key)) {
    case ValueKind::kUnknown:
      throw UsageError(axis.where + ": '" + axis.key + "' is not a dtbench train flag (--" + axis.key +
                       "); keys are world, nodes, batch or a flag of dtbench train --help without its dashes");
    case ValueKind::kSwitch:
      throw UsageError(axis.where + ": --" + axis.key +
                       " takes no value, so it cannot be a grid key; give it after -- to set it for every point");
    case ValueKind::kNumber: sweep::checkNumericAxis(axis, false); return;
    case ValueKind::kInteger:
    case ValueKind::kCount: sweep::checkNumericAxis(axis, true); return;
    case ValueKind::kText: return;
  }
}

using SweepRow = OptionRow<SweepOptions>;

// A refusal of a Slurm flag unless --launcher slurm (read before it: its row comes first).
void slurmOnly(const SweepOptions& o, const std::string& flag) {
  if (o.launcher != Launcher::kSlurm) throw UsageError(flag + " is for --launcher slurm; add --launcher slurm or drop it");
}

// A flag of `dtbench sweep` that takes a text value for one string of SweepOptions.
SweepRow sweepTextRow(const std::string& name, const std::string& help, std::string SweepOptions::*field,
                 bool slurm = false) {
  return {name, "", help, ValueKind::kText, nullptr,
          [field, slurm](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
            if (slurm) slurmOnly(o, flag);
            o.*field = optionText(v);
          }};
}

// `dtbench sweep`'s flags, in --help's order (--launcher before the Slurm flags that check it); the
// defaults are SweepOptions' member initializers. The --grid values are read after the rows, in the
// order given and after the --grid-file's axes (readGrid).
const std::vector<SweepRow>& sweepRows() {
  static const std::vector<SweepRow> rows{
      {"out", "", "The sweep's directory: one run directory per point, their logs, jobs.csv, report.md",
       ValueKind::kText, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.outDir = optionText(v); }, "DIR",
       true},
      {"grid", "",
       "KEY=V1,V2,... (repeatable): world (or gpus) = ranks, nodes = nodes the ranks are placed on (slurm), batch = "
       "--batch-size, mode = ddp or dp (dp: one process driving world GPUs), any other key K = the train flag --K",
       ValueKind::kText, nullptr, [](SweepOptions&, const cxxopts::OptionValue&, const std::string&) {}},
      {"grid-file", "", "A file with one KEY=V1,V2 per line ('#' comments); its keys come before --grid's",
       ValueKind::kText, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         for (sweep::GridAxis& axis : sweep::readGridFile(optionText(v))) sweep::addAxis(o.grid, std::move(axis));
       }},
      {"retries", "", "Run a failed point again up to R more times", ValueKind::kInteger,
       [](const SweepOptions& o) { return std::to_string(o.retries); },
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long retries = v.as<long long>();
         if (retries < 0 || retries > sweep::kMostRetries)
           throw UsageError(flag + " is from 0 to " + std::to_string(sweep::kMostRetries) + ", got " +
                            std::to_string(retries));
         o.retries = static_cast<int>(retries);
       }},
      {"ranks-per-node", "",
       "With a nodes axis: ranks on each node, so a point's world is nodes × K (sbatch --nodes=M --ntasks-per-node=K)",
       ValueKind::kInteger, [](const SweepOptions& o) { return std::to_string(o.ranksPerNode); },
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long ranks = v.as<long long>();
         if (ranks < 1 || ranks > 1'000'000)
           throw UsageError(flag + " must be at least 1 (ranks on each node), got " + std::to_string(ranks));
         o.ranksPerNode = static_cast<int>(ranks);
       }},
      {"min-nodes", "",
       "slurm, with a nodes axis: submit a point on M nodes as the node range --nodes=MIN-M (M when M <= MIN), so "
       "that a job that Slurm requeues after a preemption or a node failure continues on the nodes that are free, "
       "resuming at their world with the global batch kept (slurm/README.md, \"Node ranges\")",
       ValueKind::kInteger, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.minNodes = static_cast<int>(std::clamp<long long>(v.as<long long>(), INT_MIN, INT_MAX));
       }},
      {"launcher", "",
       "Where the points run: local (one after another on this machine) or slurm (one sbatch job per point, all "
       "submitted at once, then waited for)",
       ValueKind::kText, [](const SweepOptions& o) { return std::string(launcherNames().name(o.launcher)); },
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.launcher = launcherNames().parse(optionText(v));
       }},
      sweepTextRow("slurm-script",
              "slurm: the job script (default: slurm/train_cpu.sbatch, or slurm/train_gpus.sbatch with --device cuda; "
              "the slurm/ folder is $DTBENCH_SLURM_DIR, else the sources')",
              &SweepOptions::slurmScript, true),
      {"sbatch-args", "",
       "slurm: words added to every sbatch command, e.g. \"--account=A -p P --time=60 --cpus-per-task=4\"",
       ValueKind::kText, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         slurmOnly(o, flag);
         o.sbatchArgs = sweep::splitWords(optionText(v));
       }},
      {"slurm-timeout", "", "slurm: give up after S seconds, cancelling the jobs left (0: no limit)",
       ValueKind::kNumber, [](const SweepOptions& o) { return numberText(o.slurmTimeout); },
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         slurmOnly(o, flag);
         o.slurmTimeout = v.as<double>();
         if (!(o.slurmTimeout >= 0))
           throw UsageError(flag + " must be >= 0 seconds (0: no limit), got " + std::to_string(o.slurmTimeout));
       }},
      {"gpu-type", "",
       "slurm: the GPU model every point asks for, as the cluster names it in its gres (a100 gives "
       "--gres=gpu:a100:N), so that no point and its baseline run on different GPU models",
       ValueKind::kText, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         slurmOnly(o, flag);
         o.gpuType = optionText(v);
         // A gres type is one word of Slurm's: letters, digits, '_', '-' and '.'.
         if (o.gpuType.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
             std::string::npos)
           throw UsageError(flag + " must be one gres type name as the cluster's gres.conf spells it (letters, "
                                   "digits, '_', '-', '.'), e.g. a100, got '" + o.gpuType + "'");
       }},
      sweepTextRow("constraint",
              "slurm: sbatch --constraint for every point (node features, e.g. a100|h100 as the cluster defines them)",
              &SweepOptions::constraint, true),
      {"allow-overlap", "",
       "slurm: let Slurm run points at the same time even where they share one machine (the emulated cluster, "
       "DTBENCH_CLUSTER, whose nodes are one machine): by default each waits for the one before, since points that "
       "share cores measure each other",
       ValueKind::kSwitch, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue&, const std::string& flag) {
         slurmOnly(o, flag);
         o.allowOverlap = true;
       }},
      sweepTextRow("plots",
              "At the end, draw the report's figures of the sweep's runs into DIR (speedup, compute vs communication, "
              "...: PNG and PDF, as dtbench report --plots)",
              &SweepOptions::plotsDir),
      {"dry-run", "", "Print the points and their commands; run nothing", ValueKind::kSwitch, nullptr,
       [](SweepOptions& o, const cxxopts::OptionValue&, const std::string&) { o.dryRun = true; }},
  };
  return rows;
}

// Every --grid, in the order given, after the --grid-file's axes; then what the rows cannot check
// alone: the grid's keys, the nodes axis that --ranks-per-node and --min-nodes need, the placement.
void readGridAndCheck(const cxxopts::ParseResult& parsed, SweepOptions& o) {
  for (const cxxopts::KeyValue& argument : parsed.arguments())
    if (argument.key() == "grid") sweep::addAxis(o.grid, sweep::parseGridAxis(argument.value()));
  if (o.grid.axes.empty())
    throw UsageError("give the grid: at least one --grid KEY=V1,V2 (e.g. --grid batch=32,64) or --grid-file");
  for (const sweep::GridAxis& axis : o.grid.axes) checkGridKey(axis);
  if (parsed.count("ranks-per-node") && !sweep::hasAxis(o.grid, "nodes"))
    throw UsageError("--ranks-per-node places ranks on the nodes of a nodes axis; add --grid nodes=M1,M2 (with "
                     "--launcher slurm), or use world=N1,N2 for ranks on one machine");
  if (parsed.count("min-nodes")) {
    slurmOnly(o, "--min-nodes");
    sweep::checkMinNodes(o.minNodes, o.grid);
  }
  if (o.launcher == Launcher::kLocal) sweep::checkLocalPlacement(o.grid);
  sweep::checkTrainFlags(o.grid, o.trainFlags);
}

}  // namespace

SweepOptions parseSweepOptions(const std::vector<std::string>& args) {
  SweepOptions o;
  cxxopts::Options options(
      "dtbench sweep",
      "Runs dtbench train once per point of a grid (the cartesian product of the --grid\n"
      "values; the last key varies fastest), each into DIR/<name> (e.g. batch32-world2),\n"
      "on this machine or as Slurm jobs, skipping points already completed and retrying\n"
      "failed ones; then writes DIR/jobs.csv and DIR/report.md and prints Tables 1-3.\n"
      "docs/sweep.md has the details.\n\n"
      "Synopsis: dtbench sweep --out DIR --grid KEY=V1,V2 [--grid ...] [OPTIONS] -- TRAIN FLAGS\n"
      "Example: dtbench sweep --out runs/s --grid batch=32,64 --grid world=1,2 -- \\\n"
      "           --model resnet18 --dataset synthetic --epochs 2 --max-steps 4\n"
      "On Slurm: dtbench sweep --launcher slurm --sbatch-args \"--time=30 -p cpu\" --out runs/s ...\n"
      "On nodes: dtbench sweep --launcher slurm --grid nodes=1,2,4 --ranks-per-node 2 --out runs/n ...");
  options.set_width(100);
  addOptionRows(options, sweepRows());
  options.add_options()("h,help", "Show this help");
  const auto split = std::find(args.begin(), args.end(), "--");
  if (split != args.end()) o.trainFlags.assign(split + 1, args.end());
  // One '--' parts the sweep's flags from dtbench train's; a second one would reach dtbench train,
  // which takes no '--' (and then no flag after it).
  if (std::find(o.trainFlags.begin(), o.trainFlags.end(), "--") != o.trainFlags.end())
    throw UsageError("one '--' too many: dtbench train's flags follow the first '--' and take no '--' of their own; "
                     "give a single '--', e.g. dtbench sweep --out DIR --grid world=1,2 -- --model lenet");
  const ParsedOptions result = parseOptions(options, "sweep", std::vector<std::string>(args.begin(), split),
                                            "dtbench train's flags go after '--', e.g. dtbench sweep --out DIR "
                                            "--grid world=1,2 -- --model lenet");
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  applyOptionRows(result.result, sweepRows(), o);
  readGridAndCheck(result.result, o);
  return o;
}

}  // namespace dtbench::experiments
