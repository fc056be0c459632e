#pragma once
// runRanks: N ranks as threads of this process over one InProcessWorld (comm/in_process_transport.h).
// Each rank's function returns its result; exceptions thrown by any rank are rethrown here, on the
// calling (main) thread, after every rank finished: Catch2 assertions stay on the main thread.

#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "comm/in_process_transport.h"

namespace dtbench::comm::testing {

template <typename Result>
std::vector<Result> runRanks(int worldSize, const std::function<Result(PointToPoint&)>& body,
                             std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  InProcessWorld world(worldSize, timeout);
  std::vector<Result> results(worldSize);
  std::vector<std::exception_ptr> errors(worldSize);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < worldSize; ++rank)
    threads.emplace_back([&, rank] {
      try {
        InProcessPointToPoint p2p(world, rank);
        results[rank] = body(p2p);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

}  // namespace dtbench::comm::testing
