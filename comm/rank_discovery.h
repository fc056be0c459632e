#pragma once
// Rank discovery (docs/design.md, "Rank discovery"): who this process is, from flags and the launcher's environment.
// Pure functions over an environment map, so every launcher's case is unit-tested.
//
// Sources, in order of precedence for addresses:
//   1. explicit flags (--rank, --world-size, --local-rank, --master-addr, --master-port);
//   2. torchrun / dtbench launch: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT;
//   3. mpirun: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK (gloo under
//      mpirun still needs MASTER_ADDR);
//   4. Slurm (srun): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; master = first host of
//      SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), bracket ranges expanded; port = MASTER_PORT,
//      else slurmPort(SLURM_JOB_ID, SLURM_STEP_ID).
// Every present source must agree on rank and world size (and local rank where both give one): a
// disagreement is an error naming both, never a guess. With no source: rank 0 of 1.
//
// Note [Nested launchers]
// A launcher below Slurm sees Slurm's variables of the process that started it: mpirun's ranks
// inherit SLURM_PROCID of the orted daemon (one per node), torchrun's workers that of torchrun.
// Those describe the launcher, not this rank, so Slurm's per-task variables count as a source only
// when neither torchrun's nor Open MPI's are present. (Slurm's node list still supplies the master
// address.)

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::comm {

using Environment = std::map<std::string, std::string>;

// This process's environment (the one impure helper; everything else takes the map).
Environment currentEnvironment();

struct ExplicitRank {
  std::optional<int> rank;
  std::optional<int> worldSize;
  std::optional<int> localRank;
  std::optional<std::string> masterAddr;
  std::optional<int> masterPort;
};

struct RankInfo {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr;  // "" when no source gives one
  int masterPort = 0;      // 0 when no source gives one
  std::string source;      // "flags", "torchrun", "openmpi", "slurm" or "none" (the rank's source)
};

// Throws std::invalid_argument with the disagreeing sources, or a malformed variable, named.
RankInfo discoverRank(const ExplicitRank& flags, const Environment& env);

// "gpu[01-03,07],cpu5" -> gpu01 gpu02 gpu03 gpu07 cpu5 (Slurm's hostlist syntax, zero padding
// kept; several bracket groups in one name are expanded left to right). Throws on unbalanced
// brackets or bad ranges.
std::vector<std::string> expandNodelist(const std::string& nodelist);

// The rendezvous port of a Slurm job step when MASTER_PORT is unset: 10000 + (31·job + step) mod
// 20000, below Linux's ephemeral range, the same on every task of the step.
int slurmPort(long long jobId, long long stepId);

}  // namespace dtbench::comm
