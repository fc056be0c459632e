#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "experiments/cli/command_line.h"
#include "experiments/cli/commands.h"
#include "experiments/launch/launch_supervisor.h"
#include "common/whole_number.h"

namespace dtbench::experiments {
namespace {

const char* kLaunchHelp =
    "Usage: dtbench launch -n N [--ranks-per-host K] [--grace SECONDS] [--master-port P] -- COMMAND...\n"
    "Starts N local ranks of COMMAND with torchrun-style variables: RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT (a free port unless given) and\n"
    "DTBENCH_RANKS_PER_HOST (K: emulated hosts of K ranks; default N, one host).\n"
    "Each output line is prefixed with its rank, e.g. \"[1] \". SIGINT and SIGTERM are forwarded to\n"
    "the ranks. When a rank fails, the others get SIGTERM, then SIGKILL after the grace period\n"
    "(default 5 s), and launch exits with the failing rank's code (128 + signal if it was killed),\n"
    "after naming how it ended: a SIGKILL launch did not send, while the out-of-memory kill count of\n"
    "its cgroup rose, is named as the kernel's out-of-memory killer.\n"
    "No rank outlives launch: if launch itself is killed (even with SIGKILL), the kernel sends every\n"
    "rank SIGKILL, and a launch that cannot start all N ranks kills those it started.\n"
    "Example: dtbench launch -n 2 -- dtbench allreduce --backend gloo --topology ring --check\n";

// A whole number from 1 to `most`, else a usage error naming the flag and the range.
int parsePositive(const std::string& flag, const std::string& value, int most = std::numeric_limits<int>::max()) {
  const long long parsed = common::wholeNumber(value).value_or(0);
  if (parsed < 1 || parsed > most)
    throwUsage("launch", flag + " needs a whole number from 1 to " + std::to_string(most) + ", got '" + value + "'");
  return static_cast<int>(parsed);
}

constexpr int kMostGraceS = 86400;  // a day: beyond it the grace period is no longer one

}  // namespace

int runLaunchCommand(const std::vector<std::string>& args) {
  LaunchOptions options;
  options.worldSize = 0;
  size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& flag = args[i];
    if (flag == "-h" || flag == "--help") {
      std::printf("%s", kLaunchHelp);
      return 0;
    }
    if (i + 1 >= args.size() || args[i + 1] == "--") throwUsage("launch", flag + " needs a value");
    const std::string& value = args[++i];
    if (flag == "-n" || flag == "--nproc")
      options.worldSize = parsePositive(flag, value);
    else if (flag == "--ranks-per-host")
      options.ranksPerHost = parsePositive(flag, value);
    else if (flag == "--master-port")
      options.masterPort = parsePositive(flag, value, 65535);
    else if (flag == "--grace")
      options.grace = std::chrono::milliseconds(static_cast<int64_t>(parsePositive(flag, value, kMostGraceS)) * 1000);
    else
      throwUsage("launch", "unknown option '" + flag + "'");
  }
  if (options.worldSize < 1) throwUsage("launch", "dtbench launch needs -n N (the number of ranks)");
  if (i + 1 >= args.size())
    throwUsage("launch", "dtbench launch needs the command after '--', e.g. dtbench launch -n 2 -- dtbench allreduce");
  options.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  return superviseLaunch(options);
}

}  // namespace dtbench::experiments
