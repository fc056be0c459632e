#pragma once
// superviseLaunch: the engine of `dtbench launch` (launch_command.cpp). Starts N local ranks of one
// command with torchrun-style variables and watches them until all have ended.
//
// Contract:
//  - Rank r gets RANK=r, WORLD_SIZE=N, LOCAL_RANK=r mod K, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1,
//    MASTER_PORT (a free port unless given), DTBENCH_RANKS_PER_HOST=K (K = ranksPerHost, default N:
//    one emulated host), and its own process group.
//  - Every line a rank writes to stdout or stderr is copied to the same stream prefixed "[r] ".
//  - The first SIGINT or SIGTERM sent to the launcher is forwarded to every running rank, which
//    then stop at an agreed step (dtbench train exits 75 after a checkpoint); the launcher does not
//    kill them on a timer of its own (under Slurm the scheduler's grace period rules). A second
//    signal kills every rank with SIGKILL.
//  - When a rank fails (non-zero exit other than 75, or killed by a signal), every other rank gets
//    SIGTERM, then SIGKILL once `grace` has passed; the return value is the first failing rank's
//    exit code (128 + signal when killed by one). Otherwise the first non-zero code (75 when the
//    ranks were interrupted), or 0 when all ranks succeeded.
//  - The first failing rank is named on stderr with how it ended (rank_end.h): a SIGKILL the
//    launcher did not send is an out-of-memory kill when the cgroup's oom_kill counter
//    (`memoryEvents`, else memoryEventsFile()) rose between the start and that rank's end.
//  - Never leaves a rank running when it returns, and no rank outlives the launcher's process:
//    every rank gets SIGKILL when the launcher dies, even by SIGKILL (Note [No rank outlives its
//    launcher]). Call it on a thread that lives as long as the process (the main thread): the
//    kernel sends that signal when the thread that forked the rank ends.
// Throws std::runtime_error when the ranks cannot be started (no pipe or fork for rank r, e.g. out
// of file descriptors), after killing and reaping the ranks already started. A command that cannot
// be executed is reported as the rank's exit code 127 with a message.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::experiments {

struct LaunchOptions {
  int worldSize = 1;
  int ranksPerHost = 0;  // 0: all ranks on one emulated host
  int masterPort = 0;    // 0: pick a free port
  std::chrono::milliseconds grace{std::chrono::seconds(5)};
  std::vector<std::string> command;
  // The file with the cgroup's "oom_kill N" counter; nullopt: this process's (memoryEventsFile()).
  std::optional<std::string> memoryEvents;
};

int superviseLaunch(const LaunchOptions& options);

// A TCP port on 127.0.0.1 that was free a moment ago.
int freeLocalPort();

}  // namespace dtbench::experiments
