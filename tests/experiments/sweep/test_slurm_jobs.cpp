#include <catch2/catch.hpp>

#include "experiments/sweep/slurm_jobs.h"
#include "common/usage_error.h"

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

using dtbench::sweep::jobHasEnded;
using dtbench::sweep::parsableJobId;
using dtbench::sweep::parseSqueue;
using dtbench::sweep::scontrolField;
using dtbench::sweep::splitWords;

TEST_CASE("the sbatch args split into words like a shell's plain words", "[sweep][slurm]") {
  CHECK(splitWords("") == std::vector<std::string>{});
  CHECK(splitWords("  --time=60   -p cpu\t--cpus-per-task=4 ") ==
        std::vector<std::string>{"--time=60", "-p", "cpu", "--cpus-per-task=4"});
  CHECK(splitWords("--comment='two words' --job-name=\"a \\\"b\\\"\"") ==
        std::vector<std::string>{"--comment=two words", "--job-name=a \"b\""});
  CHECK(splitWords("--x=a\\ b ''") == std::vector<std::string>{"--x=a b", ""});
  CHECK_THROWS_AS(splitWords("--comment='open"), dtbench::common::UsageError);
  CHECK_THROWS_WITH(splitWords("--comment=\"open"), Catch::Contains("unclosed \" quote"));
}

TEST_CASE("sbatch --parsable gives the job id with or without a cluster", "[sweep][slurm]") {
  CHECK(parsableJobId("1234\n") == "1234");
  CHECK(parsableJobId("1234;cluster\n") == "1234");
  CHECK(parsableJobId("sbatch: warning: x\n77\n") == "77");
  CHECK(parsableJobId("") == "");
}

TEST_CASE("squeue lines become job states, and ended states are told from waiting ones", "[sweep][slurm]") {
  const auto states = parseSqueue("12,RUNNING\n13,PENDING\n\ngarbage\n14,COMPLETING \n");
  REQUIRE(states.size() == 3);
  CHECK(states.at("12") == "RUNNING");
  CHECK(states.at("14") == "COMPLETING");
  for (const char* state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"})
    CHECK(jobHasEnded(state));
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD", "SUSPENDED", "CONFIGURING"})
    CHECK_FALSE(jobHasEnded(state));
}

TEST_CASE("scontrol -o fields are read by their exact name", "[sweep][slurm]") {
  const std::string line = "JobId=7 JobName=x UserId=root(0) JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 "
                           "DerivedExitCode=0:0\n";
  CHECK(scontrolField(line, "JobState") == "FAILED");
  CHECK(scontrolField(line, "ExitCode") == "2:0");
  CHECK(scontrolField(line, "JobId") == "7");
  CHECK(scontrolField(line, "Missing") == "");
}
