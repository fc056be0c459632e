// The pieces of the job-trace tables (docs/report.md, "Job traces"): state normalisation, trace
// time stamps, the CDF points and the CDFs of job_distributions.h's worked example, and the column
// map of --trace-columns.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/report/jobs/job_state.h"
#include "experiments/report/jobs/job_trace.h"
#include "experiments/report/jobs/job_distributions.h"
#include "experiments/report/jobs/cluster_trace_file.h"
#include "experiments/report/jobs/job_clock.h"
#include "experiments/report/jobs/sacct_file.h"
#include "temp_dir.h"

using namespace dtbench::report;

TEST_CASE("states normalise to the three final states", "[report][traces]") {
  CHECK(normaliseState("COMPLETED") == JobState::kCompleted);
  CHECK(normaliseState("Pass") == JobState::kCompleted);
  CHECK(normaliseState("TIMEOUT") == JobState::kFailed);
  CHECK(normaliseState("NODE_FAIL") == JobState::kFailed);
  CHECK(normaliseState("OUT_OF_MEMORY") == JobState::kFailed);
  CHECK(normaliseState("CANCELLED by 1000") == JobState::kCancelled);
  CHECK(normaliseState("PREEMPTED") == JobState::kCancelled);
  CHECK(normaliseState("Killed") == JobState::kCancelled);
  CHECK(normaliseState("REQUEUED") == JobState::kRequeued);
  CHECK(normaliseState("RUNNING") == JobState::kUnfinished);
  CHECK(normaliseState("PENDING") == JobState::kUnfinished);
  CHECK(normaliseState("LOST") == JobState::kUnknown);
  CHECK(normaliseState("") == JobState::kUnknown);
}

TEST_CASE("trace times read as Unix seconds in the local time zone", "[report][traces]") {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  JobClock clock;
  double t = 0;
  REQUIRE(clock.parse("2026-11-20T11:10:00", &t));
  CHECK(t == 1795173000);
  REQUIRE(clock.parse("2026-11-20 11:10:52", &t));
  CHECK(t == 1795173052);
  REQUIRE(clock.parse("1795173002", &t));
  CHECK(t == 1795173002);
  for (const char* none : {"", "Unknown", "None", "NaN"}) {
    REQUIRE(clock.parse(none, &t));
    CHECK(std::isnan(t));
  }
  CHECK_FALSE(clock.parse("2026-11-20 9:25", &t));
  CHECK_FALSE(clock.parse("2026-13-20 10:00:00", &t));
  CHECK_FALSE(clock.parse("yesterday", &t));
  CHECK_FALSE(clock.parse("-5", &t));
}

TEST_CASE("CDF points are 1 2 5 per decade up to the longest", "[report][traces]") {
  CHECK(logPoints(3600, false) == std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000});
  CHECK(logPoints(0, true) == std::vector<double>{0, 1});
  CHECK(logPoints(1000, true) == std::vector<double>{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000});
}

TEST_CASE("the duration CDF by count and by GPU time", "[report][traces]") {
  JobTrace trace;
  for (auto [duration, gpus] : {std::pair<double, int>{10, 1}, {30, 2}, {100, 4}}) {
    JobRecord job;
    job.state = JobState::kCompleted;
    job.rawState = "COMPLETED";
    job.gpus = gpus;
    job.submitS = 0;
    job.startS = 0;
    job.durationS = duration;
    job.gpuSeconds = duration * gpus;
    trace.add(job);
  }
  const std::vector<CdfPoint> cdf = durationCdf(trace, {50, 100});
  CHECK(cdf[0].jobs == 2);
  CHECK(cdf[0].share == Approx(2.0 / 3));
  CHECK(cdf[0].gpuTimeShare == Approx(70.0 / 470));
  CHECK(cdf[1].share == 1);
  CHECK(cdf[1].gpuTimeShare == 1);
}

TEST_CASE("jobs left out of the distributions are listed with their reason", "[report][traces]") {
  JobTrace trace;
  JobRecord running;
  running.state = JobState::kUnfinished;
  running.rawState = "RUNNING";
  running.line = 7;
  trace.add(running);
  JobRecord cpu;
  cpu.state = JobState::kCompleted;
  cpu.rawState = "COMPLETED";
  cpu.startS = 0;
  cpu.line = 9;
  trace.add(cpu);
  CHECK(trace.unfinished == 1);
  CHECK(trace.jobs == 1);
  CHECK(trace.gpuJobs.empty());
  REQUIRE(trace.skipped.size() == 2);
  CHECK(trace.reasons[trace.skipped[0].reason] == "not ended (RUNNING)");
  CHECK(trace.skipped[1].line == 9);
}

TEST_CASE("the trace column map renames Helios columns", "[report][traces]") {
  const TraceColumnMap map = parseTraceColumnMap("gpu_num=num_gpus,submit_time=submitted_time");
  CHECK(map.at("gpu_num") == "num_gpus");
  CHECK(map.at("submit_time") == "submitted_time");
  CHECK_THROWS_WITH(parseTraceColumnMap("gpus=num_gpus"), Catch::Contains("'gpus' is not a column"));
  CHECK_THROWS_WITH(parseTraceColumnMap("gpu_num"), Catch::Contains("is not HELIOS_NAME=FILE_NAME"));
}

TEST_CASE("a sacct file whose job's attempts are apart reads as the one whose attempts are together", "[report][traces]") {
  dtbench::testing::TempDir dir;
  const std::string header = std::string(kSacctHeader) + "\n";
  const std::string a1 = "7|a|u|gpu|REQUEUED|0:0|2026-11-20T09:00:00|2026-11-20T09:01:00|2026-11-20T09:02:00|60|1|gres/gpu=2\n";
  const std::string a2 = "7|a|u|gpu|COMPLETED|0:0|2026-11-20T09:02:00|2026-11-20T09:03:00|2026-11-20T09:13:00|600|1|gres/gpu=2\n";
  const std::string b = "8|b|u|gpu|COMPLETED|0:0|2026-11-20T09:00:30|2026-11-20T09:00:40|2026-11-20T09:01:40|60|1|gres/gpu=1\n";
  std::ofstream(dir / "together.txt") << header << a1 << a2 << b;
  std::ofstream(dir / "apart.txt") << header << a1 << b << a2;
  for (const char* name : {"together.txt", "apart.txt"}) {
    INFO(name);
    const JobTrace trace = readSacct(dir / name, {"7"});
    CHECK(trace.rows == 3);
    CHECK(trace.jobs == 2);
    CHECK(trace.attempts == 3);
    REQUIRE(trace.gpuJobs.size() == 2);
    CHECK(trace.gpuJobs[0].durationS == 660);
    CHECK(trace.gpuJobs[0].gpuSeconds == 1320);
    CHECK(trace.gpuJobs[0].queueS == 60);  // the first start − the first submit
    CHECK(trace.gpuJobs[1].durationS == 60);
    REQUIRE(trace.slurmJobs.size() == 1);  // only the ids asked for
    CHECK(trace.slurmJobs.at("7").attempts == 2);
    CHECK(trace.slurmJobs.at("7").state == "COMPLETED");
  }
}
