#pragma once
// The cores this process may run on, and the intra-op threads of a rank run with --threads 0: its
// share of those cores.
//
// Each rank may run on a set of CPUs (its affinity: all of the machine's, a Slurm job's, or the
// few mpirun or srun bound it to). Ranks on one machine whose sets overlap share those CPUs, so
// a rank counts each CPU of its set as 1/k of a core, k the ranks of the machine whose sets hold
// it, and runs that many threads, rounded down, at least one.
// Worked example: 2 ranks on 8 CPUs, unbound: each 8 × 1/2 = 4 threads; bound to 4 CPUs each: 4;
// 3 ranks on 2 CPUs: each 2 × 1/3, rounded down to 0, so 1 (the machine is oversubscribed whatever
// the threads, and the report says so).

#include <cstddef>
#include <string>
#include <vector>

namespace dtbench::trainer {

// The cores this process may run on (its CPU affinity: under Slurm, what the job was given).
int availableCores();
// Those cores' ids, ascending.
std::vector<int> availableCpus();

// `cpusOfRanksHere`: the CPU sets of the ranks on this machine (this rank's among them, at `self`).
int sharedCoreThreads(const std::vector<std::vector<int>>& cpusOfRanksHere, size_t self);

// A CPU set as text and back: "0,1,2,5" (the order kept, every id once).
std::string cpuListText(const std::vector<int>& cpus);
std::vector<int> parseCpuList(const std::string& text);

}  // namespace dtbench::trainer
