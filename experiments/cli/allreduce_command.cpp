// dtbench allreduce: the nccl-tests-style all-reduce benchmark over every backend x topology
// (experiments/allreduce/allreduce_benchmark.h defines its columns).

#include <ATen/Parallel.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/backends/make_communicator.h"
#include "comm/communicator.h"
#include "comm/failure/peer_table.h"
#include "comm/rank_discovery.h"
#include "comm/traffic/message_log_files.h"
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
  std::unique_ptr<comm::Communicator> c = comm::makeCommunicator(o.ranks.connection);
  // --message-log: every operation from here on is recorded (docs/wire.md, "Message log").
  std::optional<comm::MessageLogFiles> messageLog;
  if (!o.ranks.connection.messageLog.empty()) {
    messageLog.emplace(o.ranks.connection.messageLog, c->rank(), comm::thisHostName());
    c = messageLog->wrap(std::move(c));
  }
  int64_t wrong = 0;
  try {
    wrong = runAllreduceBenchmark(*c, o.ranks.ranksPerHost, o.settings, o.ranks.connection.timeoutS);
  } catch (const std::exception&) {
    if (messageLog) messageLog->writeBestEffort(std::cerr);
    throw;
  }
  if (messageLog) messageLog->write();
  if (wrong > 0) {
    std::fprintf(stderr, "dtbench allreduce: %lld element(s) differ from the exact sum\n",
                 static_cast<long long>(wrong));
    return 1;
  }
  return 0;
}

}  // namespace dtbench::experiments
