#include "experiments/launch/rank_end.h"

#include <signal.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace dtbench::experiments {
namespace {

// The signals the launcher sends by name, any other by number.
std::string signalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace


bool killedForMemory(const RankEnd& end) {
  return end.signal == SIGKILL && !end.signalFromLaunch && end.oomKillsBefore && end.oomKillsAfter &&
         *end.oomKillsAfter > *end.oomKillsBefore;
}

std::string describeRankEnd(const RankEnd& end) {
  const std::string rank = "rank " + std::to_string(end.rank);
  if (end.signal == 0) return rank + " exited with code " + std::to_string(end.exitCode);
  const std::string code = "exit code " + std::to_string(end.exitCode);
  if (killedForMemory(end))
    return rank + " was killed by the kernel's out-of-memory killer (" + code +
           "): lower --batch-size (or --workers, or the ranks on this machine), or run it where it has more memory";
  if (end.signalFromLaunch)
    return rank + " was killed by dtbench launch (" + signalName(end.signal) + ", " + code + ")";
  if (end.signal == SIGKILL)
    return rank + " was killed by SIGKILL (not sent by dtbench launch; " +
           (end.oomKillsBefore && end.oomKillsAfter
                ? std::string("this cgroup's out-of-memory kill count did not rise, so another process sent it, e.g. a "
                              "user or the scheduler")
                : std::string("the kernel's out-of-memory killer is the usual sender")) +
           "; " + code + ")";
  return rank + " was killed by " + signalName(end.signal) + " (" + strsignal(end.signal) + ", " + code + ")";
}

}  // namespace dtbench::experiments
