#include "experiments/sweep_options.h"

#include <algorithm>

#include <cxxopts.hpp>

#include "trainer/config.h"

namespace dtbench::experiments {

SweepOptions parseSweepOptions(const std::vector<std::string>& args) {
  SweepOptions o;
  cxxopts::Options options("dtbench sweep",
                           "Runs dtbench train once per point of a grid (the cartesian product of the --grid\n"
                           "values; the last key varies fastest), each into DIR/<name> (e.g. batch32-world2),\n"
                           "skipping points already completed and retrying failed ones; then writes\n"
                           "DIR/jobs.csv and DIR/report.md and prints Tables 1-3. docs/sweep.md has the details.\n\n"
                           "Usage: dtbench sweep --out DIR --grid KEY=V1,V2 [--grid ...] [OPTIONS] -- TRAIN FLAGS\n"
                           "Example: dtbench sweep --out runs/s --grid batch=32,64 --grid world=1,2 -- \\\n"
                           "           --model resnet18 --dataset synthetic --epochs 2 --max-steps 4");
  options.set_width(100);
  // clang-format off
  options.add_options()
    ("out", "The sweep's directory: one run directory per point, their logs, jobs.csv, report.md",
     cxxopts::value<std::string>())
    ("grid", "KEY=V1,V2,... (repeatable): world (or gpus) = ranks, batch = --batch-size, any other key K = "
             "the train flag --K", cxxopts::value<std::string>())
    ("grid-file", "A file with one KEY=V1,V2 per line ('#' comments); its keys come before --grid's",
     cxxopts::value<std::string>())
    ("retries", "Run a failed point again up to R more times", cxxopts::value<int>()->default_value("1"))
    ("launcher", "Where the points run: local (one after another on this machine)",
     cxxopts::value<std::string>()->default_value("local"))
    ("dry-run", "Print the points and their commands; run nothing")
    ("h,help", "Show this help");
  // clang-format on
  const auto split = std::find(args.begin(), args.end(), "--");
  std::vector<const char*> argv{"dtbench sweep"};
  for (auto it = args.begin(); it != split; ++it) argv.push_back(it->c_str());
  if (split != args.end()) o.trainFlags.assign(split + 1, args.end());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    throw trainer::UsageError(std::string(e.what()) + " (see dtbench sweep --help)");
  }
  if (parsed.count("help")) {
    o.help = true;
    o.helpText = options.help();
    return o;
  }
  if (!parsed.unmatched().empty())
    throw trainer::UsageError("unexpected '" + parsed.unmatched().front() +
                              "'; dtbench train flags go after '--' (see dtbench sweep --help)");
  o.launcher = parsed["launcher"].as<std::string>();
  if (o.launcher == "slurm")
    throw trainer::UsageError("--launcher slurm is not available in this build yet; use --launcher local, or submit "
                              "the sbatch scripts in slurm/ (slurm/README.md)");
  if (o.launcher != "local") throw trainer::UsageError("--launcher must be local, got '" + o.launcher + "'");
  if (!parsed.count("out")) throw trainer::UsageError("--out DIR is required: the directory that holds the sweep's runs");
  o.outDir = parsed["out"].as<std::string>();
  if (o.outDir.empty()) throw trainer::UsageError("--out needs a directory name");
  o.retries = parsed["retries"].as<int>();
  if (o.retries < 0) throw trainer::UsageError("--retries must be >= 0, got " + std::to_string(o.retries));
  o.dryRun = parsed.count("dry-run") > 0;
  if (parsed.count("grid-file"))
    for (sweep::GridAxis& axis : sweep::readGridFile(parsed["grid-file"].as<std::string>()))
      sweep::addAxis(o.grid, std::move(axis));
  for (const cxxopts::KeyValue& argument : parsed.arguments())
    if (argument.key() == "grid") sweep::addAxis(o.grid, sweep::parseGridAxis(argument.value()));
  if (o.grid.axes.empty())
    throw trainer::UsageError("give the grid: at least one --grid KEY=V1,V2 (e.g. --grid batch=32,64) or --grid-file");
  sweep::checkTrainFlags(o.grid, o.trainFlags);
  return o;
}

}  // namespace dtbench::experiments
