// The reconciliation (experiments/capture/reconciliation.h), the flows' owners (flow_owners.h) and the
// message log's reader (message_files.h), on hand-made flows and logs whose answers are worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "experiments/capture/flow_owners.h"
#include "experiments/capture/message_files.h"
#include "experiments/capture/reconciliation.h"
#include "tests/temp_dir.h"

using namespace dtbench::capture;

namespace {

LoggedMessage message(int index, double post, double done, const std::string& op, int src, int dst, int64_t bytes,
                      const std::string& category) {
  LoggedMessage m;
  m.index = index;
  m.postS = post;
  m.doneS = done;
  m.op = op;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.category = category;
  return m;
}

LoggedSocket socket(int rank, const std::string& local, const std::string& remote, int state = 1) {
  LoggedSocket s;
  s.rank = rank;
  s.when = "end";
  s.local = *dtbench::comm::parseEndpoint(local);
  s.remote = *dtbench::comm::parseEndpoint(remote);
  s.state = state;
  return s;
}

Flow tcpFlow(const std::string& src, int srcPort, const std::string& dst, int dstPort, const std::string& srcHost,
             const std::string& dstHost) {
  Flow f;
  f.key.src = src;
  f.key.dst = dst;
  f.key.srcPort = static_cast<uint16_t>(srcPort);
  f.key.dstPort = static_cast<uint16_t>(dstPort);
  f.key.protocol = 6;
  f.srcHost = srcHost;
  f.dstHost = dstHost;
  return f;
}

void addSegment(Flow& f, double t, int64_t bytes, int64_t retransmitted = 0) {
  f.segments.push_back({t, 0, bytes, retransmitted});
  f.payloadBytes += bytes;
  f.retransmittedBytes += retransmitted;
  f.packets += 1;
}

// Two ranks on nodeA (10.0.0.1) and nodeB (10.0.0.2). Rank 0 serves the store on 29500 and is its own
// client; the backend's connection is 10.0.0.1:5000 <-> 10.0.0.2:6000.
MessageFiles twoRanks() {
  MessageFiles files;
  files.ranks.resize(2);
  files.ranks[0].rank = 0;
  files.ranks[0].host = "nodeA";
  files.ranks[1].rank = 1;
  files.ranks[1].host = "nodeB";
  // Rank 0: two gradient sends to 1, then a control broadcast. Rank 1: the two receives, the broadcast.
  files.ranks[0].messages = {message(0, 1.00, 1.01, "send", 0, 1, 1000, "gradients"),
                             message(1, 1.10, 1.11, "send", 0, 1, 1000, "gradients"),
                             message(2, 2.00, 2.001, "broadcast", 0, -1, 16, "control")};
  files.ranks[1].messages = {message(0, 0.90, 1.05, "recv", 0, 1, 1000, "gradients"),
                             message(1, 1.06, 1.15, "recv", 0, 1, 1000, "gradients"),
                             message(2, 2.00, 2.01, "broadcast", 0, -1, 16, "control")};
  files.sockets = {socket(0, "10.0.0.1:29500", "0.0.0.0:0", 0x0A), socket(0, "10.0.0.1:40000", "10.0.0.1:29500"),
                   socket(0, "10.0.0.1:29500", "10.0.0.1:40000"),  socket(0, "10.0.0.1:29500", "10.0.0.2:41000"),
                   socket(1, "10.0.0.2:41000", "10.0.0.1:29500"),  socket(0, "10.0.0.1:5000", "10.0.0.2:6000"),
                   socket(1, "10.0.0.2:6000", "10.0.0.1:5000"),    socket(1, "10.0.0.2:6000", "0.0.0.0:0", 0x0A)};
  return files;
}

const ReconciliationRow* findRow(const Reconciliation& r, int src, int dst, const std::string& category) {
  for (const auto& row : r.rows)
    if (row.srcRank == src && row.dstRank == dst && row.category == category) return &row;
  return nullptr;
}

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("the store port is the one rank 0 serves and also connects to") {
  MessageFiles files = twoRanks();
  CHECK(storePort(files) == 29500);
  // Without rank 0's own client connection there is no telling the store from a backend listener.
  files.sockets.erase(files.sockets.begin() + 1, files.sockets.begin() + 3);
  CHECK(storePort(files) == 0);
}

TEST_CASE("flows are labelled with their ranks and classes") {
  const MessageFiles files = twoRanks();
  std::vector<Flow> flows{tcpFlow("10.0.0.1", 5000, "10.0.0.2", 6000, "nodeA", "nodeB"),
                          tcpFlow("10.0.0.2", 41000, "10.0.0.1", 29500, "nodeB", "nodeA"),
                          tcpFlow("10.0.0.2", 6818, "10.0.0.1", 43000, "nodeB", "nodeA"),
                          tcpFlow("10.0.0.254", 6817, "10.0.0.1", 6818, "controller", "nodeA"),
                          tcpFlow("10.0.0.9", 1, "10.0.0.8", 2, "", "")};
  Flow udp = tcpFlow("10.0.0.1", 53, "10.0.0.2", 53, "nodeA", "nodeB");
  udp.key.protocol = 17;
  flows.push_back(udp);
  labelFlows(flows, files);
  CHECK(flows[0].cls == "backend");
  CHECK(flows[0].srcRank == 0);
  CHECK(flows[0].dstRank == 1);
  CHECK(flows[1].cls == "store");
  CHECK(flows[1].srcRank == 1);
  CHECK(flows[1].dstRank == 0);
  CHECK(flows[2].cls == "launcher");
  CHECK(flows[2].srcRank == -1);
  CHECK(flows[3].cls == "slurm");
  CHECK(flows[4].cls == "other");
  CHECK(flows[5].cls == "other");
}

TEST_CASE("bytes on a backend connection go to the blocks whose windows hold their capture time") {
  const MessageFiles files = twoRanks();
  std::vector<Flow> flows{tcpFlow("10.0.0.1", 5000, "10.0.0.2", 6000, "nodeA", "nodeB")};
  Flow& f = flows[0];
  addSegment(f, 0.50, 8);         // before rank 0's first operation: setup
  addSegment(f, 1.02, 1048);      // gradients: [1.00, T0), T0 = max(done at 1 = 1.15, next post 2.00) = 2.00
  addSegment(f, 1.13, 1048);
  addSegment(f, 1.14, 100, 100);  // a retransmission of 100 bytes
  addSegment(f, 2.005, 60);       // control: [2.00, 2.01)
  addSegment(f, 3.00, 10);        // after rank 1 finished rank 0's last block: unattributed
  labelFlows(flows, files);
  const Reconciliation r = reconcile(flows, files);

  const auto* grad = findRow(r, 0, 1, "gradients");
  REQUIRE(grad != nullptr);
  CHECK(grad->messages == 2);
  CHECK(grad->countedBytes == 2000);
  CHECK(grad->wireBytes == 2096);
  CHECK(grad->difference() == 96);
  REQUIRE(findRow(r, 0, 1, "setup") != nullptr);
  CHECK(findRow(r, 0, 1, "setup")->wireBytes == 8);
  REQUIRE(findRow(r, 0, 1, "control") != nullptr);
  CHECK(findRow(r, 0, 1, "control")->wireBytes == 60);
  CHECK(findRow(r, 0, 1, "control")->messages == 1);
  CHECK(findRow(r, 0, 1, "control")->countedBytes == 0);
  CHECK(findRow(r, 0, 1, "retransmission")->wireBytes == 100);
  CHECK(findRow(r, 0, 1, "unattributed")->wireBytes == 10);
  // Rank 1's side: its receives of 0's sends put their notices on 1 -> 0; nothing was captured there.
  CHECK(findRow(r, 1, 0, "gradients")->messages == 2);
  CHECK(findRow(r, 1, 0, "gradients")->wireBytes == 0);

  CHECK(r.summary.wirePayloadBytes == 8 + 1048 + 1048 + 100 + 60 + 10);
  CHECK(r.summary.unattributedBytes == 10);
  CHECK(r.summary.attributedFraction == Approx(1.0 - 10.0 / 2274.0));
  CHECK(r.summary.gradientPairs == 1);
  CHECK(r.summary.maxGradientErrorPct == Approx(4.8));

  std::ostringstream csv;
  writeReconciliationCsv(csv, r.rows);
  CHECK(csv.str().rfind("src_rank,dst_rank,src_host,dst_host,category,messages,counted_bytes,wire_bytes,difference_bytes,"
                        "difference_pct\n0,1,nodeA,nodeB,gradients,2,2000,2096,96,4.800\n",
                        0) == 0);
}

TEST_CASE("a block's bytes still in flight when the sender moved on stay with it until the receiver finished") {
  // Rank 0's gradients end (for rank 0) at 1.01, and it posts a control barrier at 1.02; rank 1 finishes
  // receiving the gradients only at 1.30. Bytes captured at 1.10 and 1.25 are the gradients' tail.
  MessageFiles files = twoRanks();
  files.ranks[0].messages = {message(0, 1.00, 1.01, "send", 0, 1, 3000, "gradients"),
                             message(1, 1.02, 1.40, "barrier", 0, -1, 0, "control")};
  files.ranks[1].messages = {message(0, 0.90, 1.30, "recv", 0, 1, 3000, "gradients"),
                             message(1, 1.31, 1.40, "barrier", 1, -1, 0, "control")};
  std::vector<Flow> flows{tcpFlow("10.0.0.1", 5000, "10.0.0.2", 6000, "nodeA", "nodeB")};
  addSegment(flows[0], 1.005, 1000);
  addSegment(flows[0], 1.10, 1000);
  addSegment(flows[0], 1.25, 1048);
  addSegment(flows[0], 1.35, 48);
  labelFlows(flows, files);
  const Reconciliation r = reconcile(flows, files);
  CHECK(findRow(r, 0, 1, "gradients")->wireBytes == 3048);
  CHECK(findRow(r, 0, 1, "control")->wireBytes == 48);
}

TEST_CASE("a block that counts no payload yields the time it overlaps the next block to that block's payload") {
  // Rank 0 leaves a barrier at 1.02 and posts its next gradient send at 1.03; rank 1 leaves the barrier
  // only at 1.20. The barrier's bytes (48) left before rank 0 left it; the bytes captured from 1.05 on
  // are the gradients', although rank 1 was still in the barrier.
  MessageFiles files = twoRanks();
  files.ranks[0].messages = {message(0, 1.00, 1.02, "barrier", 0, -1, 0, "control"),
                             message(1, 1.03, 1.04, "send", 0, 1, 2000, "gradients")};
  files.ranks[1].messages = {message(0, 1.00, 1.20, "barrier", 1, -1, 0, "control"),
                             message(1, 1.21, 1.40, "recv", 0, 1, 2000, "gradients")};
  std::vector<Flow> flows{tcpFlow("10.0.0.1", 5000, "10.0.0.2", 6000, "nodeA", "nodeB")};
  addSegment(flows[0], 1.01, 48);
  addSegment(flows[0], 1.05, 1024);
  addSegment(flows[0], 1.15, 1024);
  addSegment(flows[0], 1.30, 8);
  labelFlows(flows, files);
  const Reconciliation r = reconcile(flows, files);
  CHECK(findRow(r, 0, 1, "control")->wireBytes == 48);
  CHECK(findRow(r, 0, 1, "gradients")->wireBytes == 2056);
  CHECK(r.summary.maxGradientErrorPct == Approx(2.8));
}

TEST_CASE("the initial broadcast has its own category, and every counted category is held to its count") {
  // Pair averaging: rank 0 broadcasts the initial parameters (a collective: counted 0), then swaps its
  // parameters with rank 1 (sends: counted). Filed together, the broadcast's bytes would look like
  // an error of the counted swap.
  MessageFiles files = twoRanks();
  files.ranks[0].messages = {message(0, 1.00, 1.10, "broadcast", 0, -1, 4000, "initial"),
                             message(1, 2.00, 2.10, "send", 0, 1, 4000, "parameters"),
                             message(2, 2.00, 2.10, "recv", 1, 0, 4000, "parameters")};
  files.ranks[1].messages = {message(0, 1.00, 1.10, "broadcast", 0, -1, 4000, "initial"),
                             message(1, 2.00, 2.10, "send", 1, 0, 4000, "parameters"),
                             message(2, 2.00, 2.10, "recv", 0, 1, 4000, "parameters")};
  std::vector<Flow> flows{tcpFlow("10.0.0.1", 5000, "10.0.0.2", 6000, "nodeA", "nodeB")};
  addSegment(flows[0], 1.05, 4040);  // the broadcast, with the backend's framing
  addSegment(flows[0], 2.05, 4400);  // the swap, 10 % over its count
  labelFlows(flows, files);
  const Reconciliation r = reconcile(flows, files);
  REQUIRE(findRow(r, 0, 1, "initial") != nullptr);
  CHECK(findRow(r, 0, 1, "initial")->wireBytes == 4040);
  CHECK(findRow(r, 0, 1, "initial")->countedBytes == 0);
  CHECK(findRow(r, 0, 1, "parameters")->wireBytes == 4400);
  CHECK(findRow(r, 0, 1, "parameters")->countedBytes == 4000);
  CHECK(r.summary.gradientPairs == 0);
  CHECK(r.summary.maxGradientErrorPct == 0);
  CHECK(r.summary.countedRows == 1);  // 0 -> 1; 1 -> 0 has no connection on the wire
  CHECK(r.summary.maxCountedErrorPct == Approx(10.0));
  const nlohmann::json json = reconciliationJson(r);
  CHECK(json["max_counted_error_pct"].get<double>() == Approx(10.0));
  CHECK(json["counted_rows"] == 1);
}

TEST_CASE("counted gradients of a pair without a connection are counted apart") {
  // Open MPI's same-node ranks talk through shared memory: logged sends, nothing on any socket.
  MessageFiles files = twoRanks();
  files.sockets.clear();
  std::vector<Flow> flows;
  const Reconciliation r = reconcile(flows, files);
  CHECK(findRow(r, 0, 1, "gradients")->countedBytes == 2000);
  CHECK(findRow(r, 0, 1, "gradients")->wireBytes == 0);
  CHECK(r.summary.gradientPairs == 0);
  CHECK(r.summary.pairsWithoutConnection == 1);
  CHECK(r.summary.maxGradientErrorPct == 0);
}

TEST_CASE("store and launcher bytes are named and not counted") {
  const MessageFiles files = twoRanks();
  std::vector<Flow> flows{tcpFlow("10.0.0.2", 41000, "10.0.0.1", 29500, "nodeB", "nodeA"),
                          tcpFlow("10.0.0.2", 6818, "10.0.0.1", 43000, "nodeB", "nodeA")};
  addSegment(flows[0], 0.1, 300);
  addSegment(flows[1], 0.2, 700, 50);
  labelFlows(flows, files);
  const Reconciliation r = reconcile(flows, files);
  CHECK(findRow(r, 1, 0, "store")->wireBytes == 300);
  CHECK(findRow(r, 1, 0, "store")->countedBytes == 0);
  CHECK(findRow(r, -1, -1, "launcher")->wireBytes == 650);
  CHECK(findRow(r, -1, -1, "launcher")->srcHost == "nodeB");
  CHECK(findRow(r, -1, -1, "retransmission")->wireBytes == 50);
  CHECK(r.summary.attributedFraction == 1.0);
}

TEST_CASE("the message log is read back and its errors name file and line") {
  dtbench::testing::TempDir dir;
  const std::string d = dir.path().string();
  writeFile(d + "/messages.rank0.csv",
            "index,t_post_s,t_done_s,op,src,dst,bytes,category\n0,1.000000,1.500000,send,0,1,64,gradients\n"
            "1,2.000000,,barrier,0,-1,0,control\n");
  writeFile(d + "/messages.rank1.csv",
            "index,t_post_s,t_done_s,op,src,dst,bytes,category\n0,0.500000,1.600000,recv,0,1,64,gradients\n");
  writeFile(d + "/sockets.rank0.csv",
            "rank,host,pid,when,local,remote,state\n0,nodeA,11,start,10.0.0.1:5000,10.0.0.2:6000,01\n"
            "0,nodeA,11,end,[::1]:7000,[::]:0,0A\n");
  writeFile(d + "/sockets.rank1.csv", "rank,host,pid,when,local,remote,state\n1,nodeB,12,end,10.0.0.2:6000,10.0.0.1:5000,01\n");
  const MessageFiles files = readMessageFiles(d);
  REQUIRE(files.worldSize() == 2);
  CHECK(files.ranks[0].host == "nodeA");
  CHECK(files.ranks[0].pid == 11);
  REQUIRE(files.ranks[0].messages.size() == 2);
  CHECK(files.ranks[0].messages[0].bytes == 64);
  CHECK(std::isnan(files.ranks[0].messages[1].doneS));
  CHECK(files.ranks[0].messages[1].isCollective());
  REQUIRE(files.sockets.size() == 3);
  CHECK(files.sockets[1].local.address == "::1");
  CHECK(files.sockets[1].local.port == 7000);
  CHECK(files.sockets[1].state == 0x0A);

  // A rank 2 left by an earlier 3-rank run, beside this 2-rank run's files.
  writeFile(d + "/messages.rank2.csv",
            "index,t_post_s,t_done_s,op,src,dst,bytes,category\n0,100.000000,101.000000,allreduce,2,-1,64,gradients\n");
  writeFile(d + "/sockets.rank2.csv", "rank,host,pid,when,local,remote,state\n2,nodeC,13,end,10.0.0.3:6000,10.0.0.1:5000,01\n");
  CHECK_THROWS_WITH(readMessageFiles(d), Catch::Contains("messages.rank2.csv spans 100.000000 to 101.000000 s, outside "
                                                         "rank 0's 1.000000 to 2.000000 s: it is from another run"));
  std::remove((d + "/messages.rank2.csv").c_str());
  std::remove((d + "/sockets.rank2.csv").c_str());
  writeFile(d + "/messages.rank1.csv",
            "index,t_post_s,t_done_s,op,src,dst,bytes,category\n0,0.500000,1.600000,fly,0,1,64,gradients\n");
  CHECK_THROWS_WITH(readMessageFiles(d), Catch::Contains("messages.rank1.csv line 2") && Catch::Contains("unknown operation 'fly'"));
  std::remove((d + "/sockets.rank1.csv").c_str());
  CHECK_THROWS_WITH(readMessageFiles(d), Catch::Contains("sockets.rank1.csv is missing"));
  dtbench::testing::TempDir empty;
  CHECK_THROWS_WITH(readMessageFiles(empty.path().string()), Catch::Contains("--message-log"));
}
