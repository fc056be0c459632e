#include <catch2/catch.hpp>

#include "common/usage_error.h"
#include "experiments/sweep/local_launcher.h"
#include "experiments/sweep/out_of_memory.h"
#include "experiments/sweep/point_attempts.h"
#include "experiments/sweep/sweep_grid.h"
#include "experiments/sweep/sweep_report.h"
#include "experiments/sweep/sweep_runner.h"
#include "temp_dir.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// The local launcher's points that the kernel's out-of-memory killer ends: told from another SIGKILL
// by the cgroup's oom_kill counter, here a memory.events file the test writes, raised by a stand-in
// for dtbench (a shell script) before it kills itself, as the kernel raises it before its SIGKILL.

namespace fs = std::filesystem;
using dtbench::sweep::GridPoint;
using dtbench::sweep::LocalLauncher;
using dtbench::sweep::PointOutcome;
using dtbench::sweep::SweepSettings;
using dtbench::testing::TempDir;

namespace {

GridPoint pointOf(const std::vector<std::string>& axes, size_t index) {
  dtbench::sweep::Grid grid;
  for (const std::string& axis : axes) dtbench::sweep::addAxis(grid, dtbench::sweep::parseGridAxis(axis));
  return dtbench::sweep::expandGrid(grid).at(index);
}

std::string readText(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// A stand-in for dtbench that runs `body` (sh) for every point; `SweepSettings` pointing at it and at
// `events` for the oom_kill counter.
SweepSettings standIn(const TempDir& dir, const std::string& body, const std::string& events, int retries) {
  const std::string script = dir / "dtbench";
  std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
  chmod(script.c_str(), 0755);
  std::ofstream(events) << "oom 0\noom_kill 0\n";
  SweepSettings settings;
  settings.outDir = dir / "sweep";
  settings.executable = script;
  settings.retries = retries;
  settings.memoryEvents = events;
  return settings;
}

// Runs the points and returns their outcomes and the progress lines.
std::pair<std::vector<PointOutcome>, std::string> runAll(const SweepSettings& settings,
                                                         const std::vector<GridPoint>& points) {
  std::FILE* progress = std::tmpfile();
  std::vector<PointOutcome> outcomes = LocalLauncher(settings).run(points, progress);
  std::rewind(progress);
  std::string text;
  for (int c; (c = std::fgetc(progress)) != EOF;) text += static_cast<char>(c);
  std::fclose(progress);
  return {outcomes, text};
}

}  // namespace

TEST_CASE("a point the out-of-memory killer ended is not run again and fails saying what to change",
          "[sweep][oom]") {
  TempDir dir;
  const std::string events = dir / "memory.events";
  const SweepSettings settings =
      standIn(dir, "printf 'oom 1\\noom_kill 1\\n' > '" + events + "'\nkill -KILL $$", events, 2);
  const auto [outcomes, progress] = runAll(settings, {pointOf({"batch=8"}, 0)});
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].attemptsRun == 1);
  CHECK(outcomes[0].exitCode == 137);
  CHECK(outcomes[0].state() == "failed");
  CHECK_THAT(outcomes[0].error, Catch::Contains("exit code 137: killed by the kernel's out-of-memory killer") &&
                                    Catch::Contains("lower --batch-size"));
  CHECK_THAT(progress, Catch::Contains("failed (out of memory)"));
  CHECK_FALSE(fs::exists(dir / "sweep/batch8.attempt-1"));
  // The job table records the failure with its reason.
  dtbench::sweep::writeSweepReport(settings.outDir, outcomes);
  const std::string jobs = readText(dir / "sweep/jobs.csv");
  CHECK_THAT(jobs, Catch::Contains("batch8,") && Catch::Contains(",failed,") &&
                       Catch::Contains("killed by the kernel's out-of-memory killer"));
}

TEST_CASE("a point killed by another SIGKILL is run again: that may pass", "[sweep][oom]") {
  TempDir dir;
  const std::string events = dir / "memory.events";
  const SweepSettings settings = standIn(dir, "kill -KILL $$", events, 1);
  const auto [outcomes, progress] = runAll(settings, {pointOf({"batch=8"}, 0)});
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].attemptsRun == 2);
  CHECK_THAT(outcomes[0].error, Catch::Contains("killed by SIGKILL (not sent by dtbench sweep; this cgroup's "
                                                "out-of-memory kill count did not rise)"));
  CHECK_THAT(progress, Catch::Contains("failed (retrying)"));
  CHECK(fs::exists(dir / "sweep/batch8.attempt-1"));
}

TEST_CASE("an attempt's log naming an out-of-memory kill, or Slurm's OUT_OF_MEMORY, is not retried", "[sweep][oom]") {
  TempDir dir;
  const std::string log = dir / "point.log";
  std::ofstream(log) << "==== dtbench sweep: p attempt 1\n"
                     << "slurmstepd: error: Detected 1 oom_kill event in StepId=12.0. Some of the step tasks have "
                        "been OOM Killed.\n";
  CHECK(dtbench::sweep::unchangingFailure(137, log, 0) == "out of memory");
  // Only from the attempt's own offset on: an earlier attempt's kill is not this one's.
  CHECK(dtbench::sweep::unchangingFailure(137, log, static_cast<std::streamoff>(fs::file_size(log))).empty());
  std::ofstream(dir / "older.log") << "slurmstepd: error: Detected 2 oom-kill event(s) in step 7.batch cgroup.\n";
  CHECK(dtbench::sweep::outOfMemoryInLog(dir / "older.log", 0));
  std::ofstream(dir / "launch.log") << "[0] step 3\ndtbench launch: rank 1 was killed by the kernel's out-of-memory "
                                       "killer (exit code 137): lower --batch-size\n";
  CHECK(dtbench::sweep::unchangingFailure(137, dir / "launch.log", 0) == "out of memory");
  std::ofstream(dir / "plain.log") << "dtbench launch: rank 1 was killed by SIGKILL (not sent by dtbench launch)\n";
  CHECK(dtbench::sweep::unchangingFailure(137, dir / "plain.log", 0).empty());
  CHECK(dtbench::sweep::unchangingFailure(0, dir / "plain.log", 0, "OUT_OF_MEMORY") == "out of memory");
}

TEST_CASE("a --mode dp point sees as many GPUs as its world", "[sweep][mode]") {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before ? before : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  using Environment = std::vector<std::pair<std::string, std::string>>;
  const GridPoint dp = pointOf({"mode=ddp,dp", "world=1,2"}, 3);
  CHECK(dtbench::sweep::pointEnvironment(dp) == Environment{{"CUDA_VISIBLE_DEVICES", "0,1"}});
  CHECK(dtbench::sweep::pointEnvironment(pointOf({"mode=ddp,dp", "world=1,2"}, 1)).empty());
  setenv("CUDA_VISIBLE_DEVICES", "3,GPU-5a,1", 1);
  CHECK(dtbench::sweep::pointEnvironment(dp) == Environment{{"CUDA_VISIBLE_DEVICES", "3,GPU-5a"}});
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  CHECK_THROWS_WITH(dtbench::sweep::pointEnvironment(dp),
                    Catch::Contains("point mode_dp-world2 drives 2 GPUs") &&
                        Catch::Contains("CUDA_VISIBLE_DEVICES='3' names 1"));
  // A dp point is one `dtbench train`, never under dtbench launch.
  SweepSettings settings;
  settings.outDir = "runs";
  settings.executable = "/opt/dtbench";
  CHECK(dtbench::sweep::pointCommand(dp, settings) ==
        std::vector<std::string>{"/opt/dtbench", "train", "--mode", "dp", "--out", "runs/mode_dp-world2"});
  if (before) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1); else unsetenv("CUDA_VISIBLE_DEVICES");
}
