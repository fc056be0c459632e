#pragma once
// runThreads / runRanks: N ranks as threads of this process over one InProcessWorld (comm/backends/in_process_transport.h).
// Each rank's function returns its result; exceptions thrown by any rank are rethrown here, on the
// calling (main) thread, after every rank finished: Catch2 assertions stay on the main thread.

#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "comm/backends/in_process_transport.h"

namespace dtbench::comm::testing {

// Runs body(rank) for rank 0 .. worldSize-1, each on its own thread, and returns the results in
// rank order. The first rank's exception (by rank) is rethrown after every thread has joined.
template <typename Result>
std::vector<Result> runThreads(int worldSize, const std::function<Result(int)>& body) {
  std::vector<Result> results(worldSize);
  std::vector<std::exception_ptr> errors(worldSize);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < worldSize; ++rank)
    threads.emplace_back([&, rank] {
      try {
        results[rank] = body(rank);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

template <typename Result>
std::vector<Result> runRanks(int worldSize, const std::function<Result(PointToPoint&)>& body,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  InProcessWorld world(worldSize, timeout);
  return runThreads<Result>(worldSize, [&](int rank) {
    InProcessPointToPoint p2p(world, rank);
    return body(p2p);
  });
}

}  // namespace dtbench::comm::testing
