#pragma once
// runGlooRanks: N ranks as threads of this process, each with a GlooCommunicator over loopback
// (docs/reference.md, "LibTorch, Gloo and Open MPI": a HashStore can back several ProcessGroupGloo
// in one process). Each rank's body returns its result; exceptions are rethrown on the calling
// thread (in_process_fixture.h).

#include <stdlib.h>

#include <chrono>
#include <functional>
#include <vector>

#include "comm/backends/gloo_communicator.h"
#include "comm/in_process_fixture.h"
#include "comm/store.h"

namespace dtbench::comm::testing {

// Several ProcessGroupGloo in one process, each driven by its own thread, race in c10d's process-wide
// flight recorder (its record of every collective): measured with LibTorch 2.11, two ranks exchanging
// their settings at once crashed in FlightRecorder::recordWithResetEnabled in 6 of 60 runs, and in 0
// of 60 with the recorder off. A run of dtbench has one group per process, and dtbench never reads
// the recorder. So every test executable that uses this fixture turns it off before main(), before
// any group exists (the recorder reads its buffer size once).
inline const bool kFlightRecorderOff = [] { return setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/1) == 0; }();

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
