// LoggingCommunicator (comm/traffic/logging_communicator.h) over the in-process transport, 3 ranks
// as threads: a ring all-reduce through TopologyAllreduce (ScheduleExecutor over
// CountingPointToPoint over the logging communicator) logs exactly the bytes the TrafficRecorder
// counts, per peer and in both directions; collectives log src and dst -1; every waited Work is
// done. Then the sockets CSV as text, and MessageLogFiles' two files.
#include "catch_torch.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "comm/backends/in_process_transport.h"
#include "comm/communicator.h"
#include "comm/schedule_executor.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology_allreduce.h"
#include "comm/traffic/logging_communicator.h"
#include "comm/traffic/message_log.h"
#include "comm/traffic/message_log_files.h"
#include "comm/traffic/socket_log.h"
#include "comm/traffic/traffic_recorder.h"
#include "comm/work.h"
#include "in_process_fixture.h"
#include "temp_dir.h"

using namespace dtbench::comm;
using dtbench::comm::testing::runThreads;

namespace {

// A Communicator over InProcessPointToPoint whose collectives are plain sends to and from every
// rank, run to completion before they return: enough to see what the logging layer records.
class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(InProcessWorld& world, int rank) : p2p_(world, rank) {}
  int rank() const override { return p2p_.rank(); }
  int size() const override { return p2p_.size(); }
  Backend backend() const override { return Backend::kGloo; }
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override { return p2p_.send(tensor, peer, tag); }
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override { return p2p_.recv(tensor, peer, tag); }
  WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) override {
    at::Tensor all = at::empty({size() * tensor.numel()}, tensor.options());
    allgather(all, tensor)->wait();
    tensor.copy_(all.view({size(), tensor.numel()}).sum(0).view_as(tensor));
    if (op == ReduceOp::kAverage) tensor.div_(size());
    return completedWork();
  }
  WorkPtr broadcast(const at::Tensor& tensor, int root) override {
    if (rank() == root) {
      for (int peer = 0; peer < size(); ++peer)
        if (peer != root) p2p_.send(tensor, peer, kCollectiveTag)->wait();
    } else {
      p2p_.recv(tensor, root, kCollectiveTag)->wait();
    }
    return completedWork();
  }
  WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) override {
    const int64_t n = input.numel();
    for (int peer = 0; peer < size(); ++peer)
      if (peer != rank()) p2p_.send(input, peer, kCollectiveTag)->wait();
    output.narrow(0, rank() * n, n).copy_(input.reshape({-1}));
    for (int peer = 0; peer < size(); ++peer)
      if (peer != rank()) {
        at::Tensor slot = output.narrow(0, peer * n, n);
        p2p_.recv(slot, peer, kCollectiveTag)->wait();
      }
    return completedWork();
  }
  WorkPtr barrier() override {
    at::Tensor all = at::empty({size()}, at::kFloat);
    return allgather(all, at::zeros({1}, at::kFloat));
  }

 private:
  static constexpr int kCollectiveTag = PointToPoint::kMaxTag;
  InProcessPointToPoint p2p_;
};

struct RankResult {
  std::vector<MessageRow> rows;
  std::vector<int64_t> sentTo, receivedFrom;  // counted by the TrafficRecorder
  double sum = 0;
};

}  // namespace

TEST_CASE("logging communicator logs what a ring all-reduce counts and every collective", "[logging_communicator]") {
  const int world = 3;
  const int64_t numel = 1000;  // not divisible by the world: chunks of unequal bytes
  InProcessWorld transport(world, std::chrono::seconds(20));
  const std::vector<RankResult> results = runThreads<RankResult>(world, [&](int rank) {
    auto log = std::make_shared<MessageLog>(rank);
    LoggingCommunicator logging(std::make_unique<InProcessCommunicator>(transport, rank), log);
    TrafficRecorder recorder(rank, world);
    TopologyAllreduce ring(logging, Topology::parse("ring"), hostsFromRanksPerHost(world, 1), recorder, Impairment{},
                           int64_t{512});
    at::Tensor gradients = at::full({numel}, static_cast<float>(rank + 1), at::kFloat);
    {
      const MessageCategoryScope category(MessageCategory::kGradients);
      ring.allreduce(gradients);
    }
    at::Tensor parameters = at::full({7}, static_cast<float>(rank), at::kFloat);
    {
      const MessageCategoryScope category(MessageCategory::kParameters);
      logging.broadcast(parameters, 1)->wait();
    }
    at::Tensor gathered = at::empty({world * 5}, at::kHalf);
    logging.allgather(gathered, at::zeros({5}, at::kHalf))->wait();
    at::Tensor flag = at::ones({1}, at::kFloat);
    logging.allreduce(flag, ReduceOp::kSum)->wait();
    logging.barrier()->wait();
    RankResult result;
    result.rows = log->rows();
    result.sentTo = recorder.sentTo();
    result.receivedFrom = recorder.receivedFrom();
    result.sum = gradients.sum().item<double>() + parameters.sum().item<double>() + flag.item<double>();
    return result;
  });
  for (int rank = 0; rank < world; ++rank) {
    INFO("rank " << rank);
    const RankResult& r = results[rank];
    CHECK(r.sum == numel * 6.0 + 7 * 1.0 + world);  // the layer changes no result
    std::map<int, int64_t> sent, received;
    int collectives = 0;
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const MessageRow& row = r.rows[i];
      CHECK(row.index == static_cast<int64_t>(i));
      CHECK(row.tDoneS.has_value());  // every Work was waited on
      if (row.tDoneS) CHECK(*row.tDoneS >= row.tPostS);
      if (row.op == MessageOp::kSend) {
        CHECK(row.src == rank);
        CHECK(row.category == MessageCategory::kGradients);
        sent[row.dst] += row.bytes;
      } else if (row.op == MessageOp::kRecv) {
        CHECK(row.dst == rank);
        CHECK(row.category == MessageCategory::kGradients);
        received[row.src] += row.bytes;
      } else {
        ++collectives;
        CHECK(row.dst == -1);
      }
    }
    for (int peer = 0; peer < world; ++peer) {
      INFO("peer " << peer);
      CHECK(sent[peer] == r.sentTo[static_cast<size_t>(peer)]);
      CHECK(received[peer] == r.receivedFrom[static_cast<size_t>(peer)]);
    }
    CHECK(sent[(rank + 1) % world] > 0);
    REQUIRE(collectives == 4);
    REQUIRE(r.rows.size() >= 4);
    const MessageRow& broadcast = r.rows[r.rows.size() - 4];
    const MessageRow& allgather = r.rows[r.rows.size() - 3];
    const MessageRow& allreduce = r.rows[r.rows.size() - 2];
    const MessageRow& barrier = r.rows[r.rows.size() - 1];
    CHECK(broadcast.op == MessageOp::kBroadcast);
    CHECK(broadcast.src == 1);  // the root
    CHECK(broadcast.bytes == 7 * 4);
    CHECK(broadcast.category == MessageCategory::kParameters);
    CHECK(allgather.op == MessageOp::kAllgather);
    CHECK(allgather.src == rank);
    CHECK(allgather.bytes == 5 * 2);  // the input's bytes
    CHECK(allgather.category == MessageCategory::kControl);
    CHECK(allreduce.op == MessageOp::kAllreduce);
    CHECK(allreduce.src == rank);
    CHECK(allreduce.bytes == 4);
    CHECK(barrier.op == MessageOp::kBarrier);
    CHECK(barrier.bytes == 0);
  }
}

TEST_CASE("logging communicator leaves t_done empty until wait returns", "[logging_communicator]") {
  InProcessWorld transport(2, std::chrono::seconds(5));
  auto log = std::make_shared<MessageLog>(0);
  LoggingCommunicator zero(std::make_unique<InProcessCommunicator>(transport, 0), log);
  InProcessPointToPoint one(transport, 1);
  at::Tensor buffer = at::zeros({3}, at::kFloat);
  const WorkPtr receive = zero.recv(buffer, 1, 4);
  REQUIRE(log->rows().size() == 1);
  CHECK_FALSE(log->rows()[0].tDoneS.has_value());
  one.send(at::ones({3}, at::kFloat), 0, 4)->wait();
  receive->wait();
  CHECK(log->rows()[0].tDoneS.has_value());
  CHECK(log->rows()[0].src == 1);
  CHECK(log->rows()[0].dst == 0);
  CHECK(log->rows()[0].bytes == 12);
  CHECK(buffer.sum().item<float>() == 3.0f);
}

TEST_CASE("sockets CSV text is exact", "[socket_log]") {
  TcpSocket established;
  established.local = *parseEndpoint("10.1.0.3:41822");
  established.remote = *parseEndpoint("10.1.0.2:29500");
  established.state = 0x01;
  TcpSocket listening;
  listening.local = *parseEndpoint("[::]:38911");
  listening.remote = *parseEndpoint("[::]:0");
  listening.state = 0x0A;
  std::ostringstream out;
  writeSocketsCsv(out, 1, "node2", 4711, {{"start", {established, listening}}, {"end", {listening}}});
  CHECK(out.str() ==
        "rank,host,pid,when,local,remote,state\n"
        "1,node2,4711,start,10.1.0.3:41822,10.1.0.2:29500,01\n"
        "1,node2,4711,start,[::]:38911,[::]:0,0A\n"
        "1,node2,4711,end,[::]:38911,[::]:0,0A\n");
}

TEST_CASE("message log files are written into a new directory with the rank in their names", "[message_log_files]") {
  dtbench::testing::TempDir temp;
  const std::string dir = (std::filesystem::path(temp.path()) / "a" / "b").string();
  MessageLogFiles files(dir, 3, "host-x");
  InProcessWorld transport(1, std::chrono::seconds(5));
  const std::unique_ptr<Communicator> communicator = files.wrap(std::make_unique<InProcessCommunicator>(transport, 0));
  communicator->barrier()->wait();
  files.write();
  CHECK(files.messagesPath() == dir + "/messages.rank3.csv");
  CHECK(files.socketsPath() == dir + "/sockets.rank3.csv");
  std::ifstream messages(files.messagesPath());
  std::string header, row, rest;
  std::getline(messages, header);
  std::getline(messages, row);
  CHECK(header == "index,t_post_s,t_done_s,op,src,dst,bytes,category");
  CHECK(row.rfind("0,", 0) == 0);
  CHECK(row.find(",barrier,0,-1,0,control") != std::string::npos);
  CHECK_FALSE(std::getline(messages, rest));
  std::ifstream sockets(files.socketsPath());
  std::getline(sockets, header);
  CHECK(header == "rank,host,pid,when,local,remote,state");
  CHECK_FALSE(std::filesystem::exists(files.messagesPath() + ".tmp"));
  CHECK_FALSE(std::filesystem::exists(files.socketsPath() + ".tmp"));
}
