#include <catch2/catch.hpp>

#include "experiments/launch/launch_supervisor.h"
#include "common/oom_kills.h"
#include "experiments/launch/rank_end.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

// How dtbench launch names a rank's end: an out-of-memory kill told from another SIGKILL by the
// cgroup's oom_kill counter, read from a memory.events file the test writes (the rank raises the
// count itself before it kills itself, as the kernel's killer raises it before its SIGKILL lands).

using dtbench::experiments::describeRankEnd;
using dtbench::experiments::LaunchOptions;
using dtbench::common::memoryEventsFile;
using dtbench::common::oomKills;
using dtbench::experiments::RankEnd;
using dtbench::experiments::superviseLaunch;
using dtbench::testing::TempDir;

namespace {

// superviseLaunch's exit code and what it wrote to stderr.
std::pair<int, std::string> launchCapturingStderr(const LaunchOptions& options, const std::string& file) {
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, STDERR_FILENO);
  close(fd);
  const int code = superviseLaunch(options);
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::stringstream text;
  text << std::ifstream(file).rdbuf();
  return {code, text.str()};
}

RankEnd killed(int signal, std::optional<long long> before, std::optional<long long> after, bool byLaunch = false) {
  RankEnd end;
  end.rank = 1;
  end.signal = signal;
  end.exitCode = 128 + signal;
  end.signalFromLaunch = byLaunch;
  end.oomKillsBefore = before;
  end.oomKillsAfter = after;
  return end;
}

}  // namespace

TEST_CASE("a rank's end is named: exit code, out-of-memory kill, another SIGKILL, the launcher's own signal",
          "[launch]") {
  RankEnd exited;
  exited.rank = 1;
  exited.exitCode = 3;
  CHECK(describeRankEnd(exited) == "rank 1 exited with code 3");
  const std::string oom = describeRankEnd(killed(SIGKILL, 4, 5));
  CHECK_THAT(oom, Catch::StartsWith("rank 1 was killed by the kernel's out-of-memory killer (exit code 137): lower "
                                    "--batch-size"));
  CHECK_THAT(describeRankEnd(killed(SIGKILL, 4, 4)),
             Catch::StartsWith("rank 1 was killed by SIGKILL (not sent by dtbench launch; this cgroup's out-of-memory "
                               "kill count did not rise"));
  CHECK_THAT(describeRankEnd(killed(SIGKILL, std::nullopt, std::nullopt)),
             Catch::Contains("killed by SIGKILL (not sent by dtbench launch; the kernel's out-of-memory killer is the "
                             "usual sender; exit code 137)"));
  // A SIGKILL the launcher sent (after the grace period) is no out-of-memory kill, whatever the count did.
  CHECK(describeRankEnd(killed(SIGKILL, 4, 5, true)) == "rank 1 was killed by dtbench launch (SIGKILL, exit code 137)");
  CHECK_THAT(describeRankEnd(killed(SIGSEGV, 4, 5)), Catch::StartsWith("rank 1 was killed by signal 11 ("));
}

TEST_CASE("the oom_kill counter is read from memory.events (v2) and memory.oom_control (v1) alike", "[launch]") {
  TempDir dir;
  std::ofstream(dir / "memory.events") << "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
  std::ofstream(dir / "memory.oom_control") << "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n";
  std::ofstream(dir / "other") << "max 1\n";
  CHECK(oomKills(dir / "memory.events") == 2);
  CHECK(oomKills(dir / "memory.oom_control") == 7);
  CHECK_FALSE(oomKills(dir / "other").has_value());
  CHECK_FALSE(oomKills(dir / "missing").has_value());
  CHECK_FALSE(oomKills("").has_value());
  // This process's own file, where the host has one, holds the counter.
  const std::string own = memoryEventsFile();
  if (!own.empty()) CHECK(oomKills(own).has_value());
}

TEST_CASE("a rank SIGKILLed while the cgroup's out-of-memory kill count rises is named an out-of-memory kill",
          "[launch]") {
  TempDir dir;
  const std::string events = dir / "memory.events";
  std::ofstream(events) << "oom 0\noom_kill 0\n";
  LaunchOptions options;
  options.worldSize = 2;
  options.grace = std::chrono::milliseconds(2000);
  options.memoryEvents = events;
  options.command = {"sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then printf 'oom 1\\noom_kill 1\\n' > '" + events +
                         "'; kill -KILL $$; fi; sleep 5"};
  const auto [code, err] = launchCapturingStderr(options, dir / "stderr");
  CHECK(code == 137);
  CHECK_THAT(err, Catch::Contains("dtbench launch: rank 1 was killed by the kernel's out-of-memory killer (exit code "
                                  "137): lower --batch-size"));
  CHECK_THAT(err, Catch::Contains("stopping the other ranks"));
}

TEST_CASE("a rank SIGKILLed by someone else is named so, even when it is the only rank", "[launch]") {
  TempDir dir;
  const std::string events = dir / "memory.events";
  std::ofstream(events) << "oom_kill 5\n";
  LaunchOptions options;
  options.worldSize = 1;
  options.memoryEvents = events;
  options.command = {"sh", "-c", "kill -KILL $$"};
  const auto [code, err] = launchCapturingStderr(options, dir / "stderr");
  CHECK(code == 137);
  CHECK_THAT(err, Catch::Contains("dtbench launch: rank 0 was killed by SIGKILL (not sent by dtbench launch; this "
                                  "cgroup's out-of-memory kill count did not rise"));
  CHECK_THAT(err, !Catch::Contains("out-of-memory killer ("));
}
