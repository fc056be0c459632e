#pragma once
// runGlooRanks: N ranks as threads of this process, each with a GlooCommunicator over loopback
// (docs/reference.md, "LibTorch, Gloo and Open MPI": a HashStore can back several ProcessGroupGloo
// in one process). Each rank's body returns its result; exceptions are rethrown on the calling
// thread (in_process_fixture.h).

#include <chrono>
#include <functional>
#include <vector>

#include "comm/backends/gloo_communicator.h"
#include "comm/in_process_fixture.h"
#include "comm/store.h"

namespace dtbench::comm::testing {

// Every rank meets through `storeOf(rank)`: one shared HashStore by default.
template <typename Result>
std::vector<Result> runGlooRanks(int worldSize, const std::function<Result(Communicator&)>& body,
                                 std::function<Store(int)> storeOf = {}) {
  Store shared = Store::hash(std::chrono::seconds(30));
  if (!storeOf) storeOf = [&](int) { return shared; };
  return runThreads<Result>(worldSize, [&](int rank) {
    GlooOptions options;
    options.hostname = "127.0.0.1";
    options.timeout = std::chrono::seconds(30);
    options.threads = 1;
    GlooCommunicator gloo(storeOf(rank), rank, worldSize, options);
    return body(gloo);
  });
}

}  // namespace dtbench::comm::testing
