#pragma once
// How a rank of `dtbench launch` ended, in words (launch_supervisor.cpp), and what tells a rank the
// kernel's out-of-memory killer ended from one killed by another SIGKILL: the cgroup's "oom_kill"
// counter (common/oom_kills.h) rose while it ended, and the ranks share the launcher's cgroup.
//
// Contract:
//  - describeRankEnd(end): one sentence starting "rank R ...": "exited with code C"; for a rank
//    killed by SIGKILL that the launcher did not send, "was killed by the kernel's out-of-memory
//    killer: ..." (with what to lower) when the counter rose between the two readings, else "was
//    killed by SIGKILL (not sent by dtbench launch; ...)"; "was killed by dtbench launch (SIG...)" for
//    a signal the launcher sent; "was killed by signal N (description)" for any other signal.

#include <optional>
#include <string>

namespace dtbench::experiments {

struct RankEnd {
  int rank = 0;
  int exitCode = 0;               // the exit code, or 128 + the signal that killed the rank
  int signal = 0;                 // the signal that killed the rank; 0 when it exited
  bool signalFromLaunch = false;  // the launcher itself sent the rank that signal
  std::optional<long long> oomKillsBefore;  // the cgroup's counter before the ranks started
  std::optional<long long> oomKillsAfter;   // and when the rank had ended
};

// True when `end` is a SIGKILL the launcher did not send while the out-of-memory kill count rose.
bool killedForMemory(const RankEnd& end);

std::string describeRankEnd(const RankEnd& end);

}  // namespace dtbench::experiments
