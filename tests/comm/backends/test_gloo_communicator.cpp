// The gloo backend in one process: ranks as threads, one HashStore, ProcessGroupGloo over loopback
// (docs/reference.md, "LibTorch, Gloo and Open MPI"). Checks the Communicator contract (sum,
// average, broadcast, all-gather, barrier, send/recv), the element-type table, and a topology over
// Gloo's point-to-point.
#include "catch_torch.h"
#include "comm/communicator.h"
#include "comm/element_type.h"
#include "comm/store.h"
#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"
#include "comm/work.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/allgather_values.h"
#include "comm/backends/gloo_communicator.h"
#include "comm/schedule_executor.h"
#include "comm/topology/registry.h"
#include "gloo_fixture.h"

using namespace dtbench::comm;
using dtbench::comm::testing::runGlooRanks;

TEST_CASE("gloo collectives follow the Communicator contract", "[gloo]") {
  const int world = 3;
  const auto results = runGlooRanks<std::vector<at::Tensor>>(world, [](Communicator& c) {
    const double r = c.rank();
    at::Tensor sum = at::full({5}, r + 1);
    c.allreduce(sum, ReduceOp::kSum)->wait();
    at::Tensor average = at::full({4}, r + 1, at::kHalf);
    c.allreduce(average, ReduceOp::kAverage)->wait();
    at::Tensor broadcast = at::full({3}, r, at::kBFloat16);
    c.broadcast(broadcast, 2)->wait();
    at::Tensor gathered = at::zeros({2 * c.size()});
    c.allgather(gathered, at::full({2}, r))->wait();
    WorkPtr barrier = c.barrier();
    barrier->wait();
    const bool completed = barrier->isCompleted();
    at::Tensor received = at::zeros({2});
    const int next = (c.rank() + 1) % c.size(), previous = (c.rank() + c.size() - 1) % c.size();
    WorkPtr recv = c.recv(received, previous, 7);
    c.send(at::full({2}, r), next, 7)->wait();
    recv->wait();
    return std::vector<at::Tensor>{sum, average.to(at::kFloat), broadcast.to(at::kFloat), gathered, received,
                                   at::full({1}, completed ? 1.0 : 0.0)};
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r);
    CHECK(results[r][0].equal(at::full({5}, 6.0)));
    CHECK(results[r][1].equal(at::full({4}, 2.0)));
    CHECK(results[r][2].equal(at::full({3}, 2.0)));
    CHECK(results[r][3].equal(at::tensor({0.0f, 0.0f, 1.0f, 1.0f, 2.0f, 2.0f})));
    CHECK(results[r][4].equal(at::full({2}, static_cast<double>((r + world - 1) % world))));
    CHECK(results[r][5].item<double>() == 1.0);
  }
}

TEST_CASE("gloo's own all-reduce sums float16 and bfloat16", "[gloo]") {
  const int world = 3;
  for (const auto type : {at::kHalf, at::kBFloat16}) {
    INFO(c10::toString(type));
    const auto sums = runGlooRanks<at::Tensor>(world, [&](Communicator& c) {
      at::Tensor t = at::full({1001}, c.rank() + 1.0, type);
      c.allreduce(t, ReduceOp::kAverage)->wait();
      return t.to(at::kFloat);
    });
    for (const at::Tensor& t : sums) CHECK(t.equal(at::full({1001}, 2.0)));  // (1 + 2 + 3) / 3, exact in both
  }
}

TEST_CASE("a native all-reduce refuses an element type by name before sending", "[gloo]") {
  const auto messages = runGlooRanks<std::string>(2, [](Communicator& c) {
    try {
      c.allreduce(at::zeros({4}, at::kDouble), ReduceOp::kSum);
      return std::string("accepted");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  });
  for (const std::string& m : messages) CHECK_THAT(m, Catch::Contains("Double") && Catch::Contains("float32, float16, bfloat16"));
}

TEST_CASE("a topology runs over gloo's point-to-point with bfloat16", "[gloo]") {
  const int world = 3;
  for (const char* topology : {"ring", "clique", "hierarchical"}) {
    const Schedule schedule = makeSchedule(topology, hostsFromRanksPerHost(world, 2));
    const auto results = runGlooRanks<at::Tensor>(world, [&](Communicator& c) {
      at::Tensor t = at::full({1001}, c.rank() + 1.0, at::kBFloat16);
      runSchedule(schedule, c, t);
      return t.to(at::kFloat);
    });
    for (const at::Tensor& t : results) CHECK(t.equal(at::full({1001}, 6.0)));
  }
}

TEST_CASE("gloo ranks meet through a FileStore with a fresh path", "[gloo][store]") {
  char pattern[] = "/tmp/dtbench_filestore_XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string path = dir + "/store";
  const auto sums = runGlooRanks<double>(
      2,
      [](Communicator& c) {
        at::Tensor t = at::full({3}, c.rank() + 1.0);
        c.allreduce(t, ReduceOp::kSum)->wait();
        return t.sum().item<double>();
      },
      [&](int) { return Store::file(path, 2, std::chrono::seconds(30)); });
  std::remove(path.c_str());
  rmdir(dir.c_str());
  CHECK(sums == std::vector<double>{9.0, 9.0});
}

TEST_CASE("raw bytes of any length travel through allgather and broadcast unchanged", "[gloo]") {
  const int world = 3;
  const auto results = runGlooRanks<std::vector<std::string>>(world, [](Communicator& c) {
    // Lengths 0, 5 and 10: not multiples of four, one empty; bytes that are NaN patterns as float32.
    std::string mine(static_cast<size_t>(c.rank() * 5), '\xff');
    for (size_t i = 0; i < mine.size(); i += 2) mine[i] = static_cast<char>(c.rank() + i);
    std::vector<std::string> out = allgatherBytes(c, mine);
    out.push_back(broadcastBytes(c, c.rank() == 1 ? std::string("root\0bytes", 10) : std::string("ignored"), 1));
    return out;
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r);
    REQUIRE(results[r].size() == 4);
    for (int from = 0; from < world; ++from) {
      std::string expected(static_cast<size_t>(from * 5), '\xff');
      for (size_t i = 0; i < expected.size(); i += 2) expected[i] = static_cast<char>(from + i);
      CHECK(results[r][from] == expected);
    }
    CHECK(results[r][3] == std::string("root\0bytes", 10));
  }
}

// A collective that passes its deadline cannot tell which rank is late (every rank waits for every other at
// once): its error says so and points at the topologies that name the rank, instead of naming none.
TEST_CASE("a native collective past its deadline says it cannot name the late rank", "[gloo]") {
  Store shared = Store::hash(std::chrono::seconds(30));
  const auto messages = dtbench::comm::testing::runThreads<std::string>(2, [&](int rank) {
    GlooOptions options;
    options.hostname = "127.0.0.1";
    options.timeout = std::chrono::milliseconds(1000);
    options.threads = 1;
    GlooCommunicator gloo(shared, rank, 2, options);
    at::Tensor t = at::ones({4});
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // late for rank 0's deadline
    try {
      gloo.allreduce(t, ReduceOp::kSum)->wait();
    } catch (const CommError& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  INFO(messages[0]);
  // Gloo's own timeout (the same one) may fire before dtbench's deadline: "failed: Operation timed out!".
  CHECK_THAT(messages[0], Catch::Contains("allreduce on rank 0 ") &&
                              Catch::Contains("cannot tell which one is late") &&
                              Catch::Contains("--topology ring"));
}
