// Rank discovery as pure functions over environment maps: each launcher's variables, precedence,
// disagreements, Slurm node lists and ports.
#include "catch_torch.h"

#include "comm/rank_discovery.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace dtbench::comm;

TEST_CASE("no launcher means rank 0 of 1", "[rank_discovery]") {
  const RankInfo info = discoverRank({}, {});
  CHECK(info.rank == 0);
  CHECK(info.worldSize == 1);
  CHECK(info.source == "none");
  CHECK(info.masterAddr.empty());
}

TEST_CASE("torchrun variables", "[rank_discovery]") {
  const RankInfo info = discoverRank(
      {}, {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}});
  CHECK(info.rank == 3);
  CHECK(info.worldSize == 4);
  CHECK(info.localRank == 1);
  CHECK(info.masterAddr == "10.0.0.1");
  CHECK(info.masterPort == 29500);
  CHECK(info.source == "torchrun");
}

TEST_CASE("explicit flags win for addresses and must agree on the rank", "[rank_discovery]") {
  ExplicitRank flags;
  flags.rank = 1;
  flags.worldSize = 2;
  flags.masterAddr = "node7";
  const RankInfo info = discoverRank(flags, {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "x"}});
  CHECK(info.masterAddr == "node7");
  CHECK(info.source == "flags");
  CHECK_THROWS_WITH(discoverRank(flags, {{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
                    Catch::Contains("disagree") && Catch::Contains("flags") && Catch::Contains("torchrun"));
  ExplicitRank half;
  half.rank = 1;
  CHECK_THROWS_WITH(discoverRank(half, {}), Catch::Contains("--world-size"));
}

TEST_CASE("Open MPI variables and their disagreement with torchrun variables", "[rank_discovery]") {
  const Environment ompi{{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}};
  const RankInfo info = discoverRank({}, ompi);
  CHECK(info.rank == 2);
  CHECK(info.worldSize == 3);
  CHECK(info.source == "openmpi");
  Environment both = ompi;
  both["RANK"] = "1";
  both["WORLD_SIZE"] = "3";
  CHECK_THROWS_WITH(discoverRank({}, both), Catch::Contains("disagree") && Catch::Contains("OMPI_COMM_WORLD"));
}

TEST_CASE("Slurm variables give the master from the step node list and the port from job and step", "[rank_discovery]") {
  const Environment slurm{{"SLURM_PROCID", "5"},       {"SLURM_NTASKS", "8"},  {"SLURM_LOCALID", "1"},
                          {"SLURM_STEP_NODELIST", "gpu[01-03,07],cpu5"}, {"SLURM_JOB_ID", "123456"},
                          {"SLURM_STEP_ID", "2"}};
  const RankInfo info = discoverRank({}, slurm);
  CHECK(info.rank == 5);
  CHECK(info.worldSize == 8);
  CHECK(info.localRank == 1);
  CHECK(info.source == "slurm");
  CHECK(info.masterAddr == "gpu01");
  CHECK(info.masterPort == slurmPort(123456, 2));
  CHECK(info.masterPort >= 10000);
  CHECK(info.masterPort < 30000);
  Environment withPort = slurm;
  withPort["MASTER_PORT"] = "4242";
  CHECK(discoverRank({}, withPort).masterPort == 4242);
}

TEST_CASE("Slurm's per-task variables yield to a launcher below it", "[rank_discovery]") {
  // mpirun inside an allocation: the ranks inherit the orted daemon's SLURM_PROCID.
  const Environment env{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_JOB_NODELIST", "n[3-4]"},
                        {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}};
  const RankInfo info = discoverRank({}, env);
  CHECK(info.rank == 1);
  CHECK(info.source == "openmpi");
  CHECK(info.masterAddr == "n3");
}

TEST_CASE("malformed variables are named", "[rank_discovery]") {
  CHECK_THROWS_WITH(discoverRank({}, {{"RANK", "one"}, {"WORLD_SIZE", "2"}}), Catch::Contains("RANK"));
  CHECK_THROWS_WITH(discoverRank({}, {{"RANK", "1"}}), Catch::Contains("WORLD_SIZE"));
  CHECK_THROWS_WITH(discoverRank({}, {{"RANK", "2"}, {"WORLD_SIZE", "2"}}), Catch::Contains("not in a world"));
}

TEST_CASE("Slurm node lists expand bracket ranges", "[rank_discovery]") {
  CHECK(expandNodelist("gpu[01-03,07],cpu5") == std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu07", "cpu5"});
  CHECK(expandNodelist("node1") == std::vector<std::string>{"node1"});
  CHECK(expandNodelist("a[8-10]") == std::vector<std::string>{"a8", "a9", "a10"});
  CHECK(expandNodelist("r[1-2]-n[01-02]") == std::vector<std::string>{"r1-n01", "r1-n02", "r2-n01", "r2-n02"});
  CHECK_THROWS(expandNodelist("gpu[01-03"));
  CHECK_THROWS(expandNodelist("gpu[05-03]"));
}
