#pragma once
// NetworkModel: how long one collective takes on modelled links, by executing its Schedule the way
// comm::ScheduleExecutor does (docs/predict.md, "The network model").
//
// The machine: ranks [k·R, (k+1)·R) sit on node k (R ranks per node). Every rank has a port of the
// intra-node class (one direction up, one down) and every node one link of the inter-node class
// (up and down). A transfer between two ranks of one node uses the sender's port up and the
// receiver's port down; a transfer between nodes uses the sending node's link up and the receiving
// node's link down. Each class has a latency α and a bandwidth β (payload bytes per second).
//
// Execution, per rank, as the executor runs it (Note [Pipelined schedules] and Note [Walking a
// Schedule] in comm/schedule_executor.h): every chunk is cut into the same G segments
// (comm::segmentCount), and each rank replays the executor's own walk, action by action
// (comm::ScheduleWalker, with the receives ahead of comm::makeSchedulePlan): step by step within one
// node, both directions at once across nodes. An item completes when all of its messages are done.
// A message (one per transfer and segment, empty pieces skipped as the executor skips them) moves
// only once its receiver is ready: posting a receive sends the sender a notice, and the data leaves
// when the sender has posted too and the
// notice has arrived (a rendezvous, the protocol of Gloo's unbound buffers and of Open MPI's TCP path
// above its eager limit); a message of at most its class's eagerBytes leaves when it is sent, and its
// receive sends no notice. Everything one rank sends another, notices and data, shares one
// connection in the order it was emitted: data moves one message after another, a latency after it
// was queued on an idle connection or right behind its predecessor, and a notice arrives a latency
// after the data queued before it is through. So a receive posted while its peer is still sending
// to this rank is noticed only after that data: a tree's broadcast of a segment cannot start while
// the reduction's later segments still flow the other way on the same connection. Each rank issues
// its notices and the data that starts on an idle connection one at a time, its class's message
// overhead apart (a clique's step of N − 1 messages costs (N − 1)·o before its last one leaves);
// data queued behind its predecessor was issued while that one moved. Concurrent
// messages share a link equally: a message's rate is the least, over its two links, of the link's
// bandwidth divided by the messages on it (equal shares, not max-min fair shares; docs/predict.md). Reductions cost nothing (memory is taken to be far faster than
// the links). The result is the time from the first post to the last item's completion on any
// rank: every rank starts together, as the trainer's buckets do.
//
// That time splits into two parts that add up to it (docs/predict.md, "What limits scaling"): the
// bandwidth part, while some message's bytes move on some link, and the latency part, while none
// does and every rank waits on a latency (α: a notice's, or data's from its post to its first byte)
// or on issuing its messages (o). A latency that runs while other bytes move is hidden behind them
// and counts as bandwidth: a ring's step of one segment costs α + bytes/β, one α and one bytes/β; a
// pipelined ring pays its α in the steps that fill the pipeline.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/topology/schedule.h"

namespace dtbench::predict {

struct LinkClass {
  double bytesPerSecond = 0;  // payload a single message gets on an idle link
  double latencyS = 0;        // from the later post of a message to its first byte
  int64_t eagerBytes = 0;     // messages up to this size leave when sent, without the receiver's notice
  // LogP's o: the time a rank takes to issue one message of this class (a notice, or data that starts
  // on an idle connection); a rank issues one at a time, so k messages at once leave o apart. 0: free.
  double messageOverheadS = 0;
};

struct Network {
  int worldSize = 1;
  int ranksPerNode = 1;  // must divide worldSize
  LinkClass intra, inter;
  // Optional: node k's link bandwidth (both directions) instead of inter.bytesPerSecond, for links of
  // unequal rates (one slow node). Empty: every node's link is of the inter class.
  std::vector<double> nodeBytesPerSecond;

  int nodes() const { return worldSize / ranksPerNode; }
  int nodeOf(int rank) const { return rank / ranksPerNode; }
};

struct SimulatedCollective {
  double seconds = 0;
  // seconds = bandwidthS + latencyS: while some bytes move, and while none moves (see above).
  double bandwidthS = 0, latencyS = 0;
  std::vector<int64_t> bytesSent;           // per rank: payload its messages carried
  std::vector<int64_t> nodeUp, nodeDown;    // per node: bytes over its link out of / into the node
  int64_t messages = 0;
};

// Throws std::invalid_argument when the Schedule's world differs from the network's, ranksPerNode
// does not divide the world, a used class has a non-positive bandwidth or negative latency, numel < 0
// or elementBytes < 1.
// Throws common::UsageError, naming the world, the ranks per node and the memory, when simulating
// `messages` messages of `simulatedRanks` ranks (a node's slice, or the whole world) would not fit in
// the memory this process may use (the machine's, or ulimit -v): refused before the Schedule and its
// messages are made, rather than ending in std::bad_alloc or the machine's out-of-memory killer. The
// message suggests only what lowers the messages of `topology` (the Schedule's name) there.
void checkSimulationFits(double messages, const Network& network, int simulatedRanks, const std::string& topology);

SimulatedCollective simulateSchedule(const comm::Schedule& schedule, const Network& network, int64_t numel,
                                     int64_t elementBytes, int64_t segmentBytes);

// Rank 0's broadcast of `bytes` as a binomial tree of whole messages (step k: every rank that has the
// data sends it to the rank 2^k above it), the shape of Gloo's and Open MPI's broadcast for small
// tensors; used for the buffer broadcast of every step. A Schedule-free model: see docs/predict.md.
comm::Schedule binomialBroadcastSchedule(int worldSize);

// A pair exchange for pair averaging: each matched pair swaps the whole tensor (one step, both
// directions). partner[r] = -1 sits out.
comm::Schedule pairExchangeSchedule(const std::vector<int>& partner);

}  // namespace dtbench::predict
