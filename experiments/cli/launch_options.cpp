#include "experiments/cli/launch_options.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <cxxopts.hpp>

#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"

namespace dtbench::experiments {
namespace {

const char kLaunchOverview[] =
    "Starts N local ranks of COMMAND with torchrun-style variables: RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT (a free port unless given) and\n"
    "DTBENCH_RANKS_PER_HOST (K: emulated hosts of K ranks; default N, one host).\n"
    "Each output line is prefixed with its rank, e.g. \"[1] \". SIGINT and SIGTERM are forwarded to\n"
    "the ranks. When a rank fails, the others get SIGTERM, then SIGKILL after the grace period\n"
    "(--grace), and launch exits with the failing rank's code (128 + signal if it was killed),\n"
    "after naming how it ended: a SIGKILL launch did not send, while the out-of-memory kill count of\n"
    "its cgroup rose, is named as the kernel's out-of-memory killer.\n"
    "No rank outlives launch: if launch itself is killed (even with SIGKILL), the kernel sends every\n"
    "rank SIGKILL, and a launch that cannot start all N ranks kills those it started.\n\n"
    "Synopsis: dtbench launch -n N [--ranks-per-host K] [--grace SECONDS] [--master-port P] -- COMMAND...\n"
    "Example: dtbench launch -n 2 -- dtbench allreduce --backend gloo --topology ring --check";

constexpr int kMostGraceS = 86400;  // a day: beyond it the grace period is no longer one

using LaunchRow = OptionRow<LaunchCommandLine>;

// A whole number from 1 to `most`, else a usage error naming the flag and the range.
int wholeFrom1(const std::string& flag, const cxxopts::OptionValue& value, int most = std::numeric_limits<int>::max()) {
  const long long number = value.as<long long>();
  if (number < 1 || number > most)
    throwUsage("launch", flag + " needs a whole number from 1 to " + std::to_string(most) + ", got '" +
                             std::to_string(number) + "'");
  return static_cast<int>(number);
}

// `dtbench launch`'s flags, in --help's order; the defaults are LaunchOptions' member initializers.
const std::vector<LaunchRow>& launchRows() {
  static const std::vector<LaunchRow> rows{
      {"n,nproc", "", "The number of ranks", ValueKind::kInteger, nullptr,
       [](LaunchCommandLine& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.launch.worldSize = wholeFrom1(flag, v);
       },
       "N", true},
      {"ranks-per-host", "", "Emulated hosts of K ranks each (DTBENCH_RANKS_PER_HOST; default N, one host)",
       ValueKind::kInteger, nullptr,
       [](LaunchCommandLine& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.launch.ranksPerHost = wholeFrom1(flag, v);
       },
       "K"},
      {"grace", "", "Seconds from SIGTERM to SIGKILL for the other ranks when one fails", ValueKind::kInteger,
       [](const LaunchCommandLine& o) {
         return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(o.launch.grace).count());
       },
       [](LaunchCommandLine& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.launch.grace = std::chrono::seconds(wholeFrom1(flag, v, kMostGraceS));
       },
       "SECONDS"},
      {"master-port", "", "MASTER_PORT (default: a free port)", ValueKind::kInteger, nullptr,
       [](LaunchCommandLine& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.launch.masterPort = wholeFrom1(flag, v, 65535);
       },
       "P"},
  };
  return rows;
}

}  // namespace

LaunchCommandLine parseLaunchOptions(const std::vector<std::string>& args) {
  LaunchCommandLine o;
  cxxopts::Options options("dtbench launch", kLaunchOverview);
  options.set_width(100);
  addOptionRows(options, launchRows());
  options.add_options()("h,help", "Show this help");
  const auto split = std::find(args.begin(), args.end(), "--");
  const ParsedOptions result = parseOptions(options, "launch", std::vector<std::string>(args.begin(), split),
                                            "the command goes after '--', e.g. dtbench launch -n 2 -- dtbench "
                                            "allreduce");
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  applyOptionRows(result.result, launchRows(), o);
  if (split == args.end() || split + 1 == args.end())
    throwUsage("launch", "dtbench launch needs the command after '--', e.g. dtbench launch -n 2 -- dtbench allreduce");
  o.launch.command.assign(split + 1, args.end());
  return o;
}

}  // namespace dtbench::experiments
