// dtbench allreduce: the nccl-tests-style all-reduce benchmark over every backend x topology
// (experiments/allreduce/allreduce_benchmark.h defines its columns).

#include <ATen/Parallel.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "comm/backends/make_communicator.h"
#include "comm/communicator.h"
#include "comm/rank_discovery.h"
#include "experiments/allreduce/allreduce_benchmark.h"
#include "experiments/cli/allreduce_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/rank_options.h"

namespace dtbench::experiments {

int runAllreduceCommand(const std::vector<std::string>& args) {
  const AllreduceOptions o = parseAllreduceOptions(args, comm::currentEnvironment());
  if (o.help) {
    std::printf("%s", o.helpText.c_str());
    return 0;
  }
  // Rank 0 writes the outputs: a path it cannot write fails now, not after the whole benchmark.
  if (o.ranks.connection.rank == 0) checkOutputsWritable(o.settings);
  at::set_num_threads(o.settings.threads);
  const std::unique_ptr<comm::Communicator> c = comm::makeCommunicator(o.ranks.connection);
  const int64_t wrong = runAllreduceBenchmark(*c, o.ranks.ranksPerHost, o.settings, o.ranks.connection.timeoutS);
  if (wrong > 0) {
    std::fprintf(stderr, "dtbench allreduce: %lld element(s) differ from the exact sum\n",
                 static_cast<long long>(wrong));
    return 1;
  }
  return 0;
}

}  // namespace dtbench::experiments
