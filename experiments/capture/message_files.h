#pragma once
// MessageFiles: what the ranks of a run wrote under --message-log (docs/wire.md, "Message log"):
// every rank's operations in post order (messages.rank<R>.csv) and its TCP sockets
// (sockets.rank<R>.csv), read back for the reconciliation.
//
// Contract
//   readMessageFiles(dir)  every messages.rank<R>.csv and sockets.rank<R>.csv in `dir`. The ranks
//                          must be 0..N-1 with both files each; rows keep their order. Throws
//                          std::runtime_error naming the file and line of a malformed row, and the
//                          directory when it holds no message log or a rank's file is missing,
//                          and naming the rank's file when a rank's operations lie wholly before
//                          or after rank 0's (more than 1 s apart): a file from another run.
//   Endpoints are read with comm::parseEndpoint (comm/failure/socket_endpoints.h), the inverse of the
//                          writer's Endpoint::str().
//   LoggedMessage::doneS   NaN when the operation's wait() never returned.

#include <cstdint>
#include <string>
#include <vector>

#include "comm/failure/socket_endpoints.h"

namespace dtbench::capture {

struct LoggedMessage {
  int index = 0;
  double postS = 0;
  double doneS = 0;  // NaN: never waited for
  std::string op;    // send, recv, allreduce, broadcast, allgather, barrier
  int src = 0;
  int dst = -1;      // -1: a collective
  int64_t bytes = 0;
  std::string category;  // gradients, buffers, parameters, control

  bool isCollective() const { return op != "send" && op != "recv"; }
};

struct LoggedSocket {
  int rank = 0;
  std::string when;  // start, end
  comm::Endpoint local;
  comm::Endpoint remote;
  int state = 0;  // the kernel's TCP state: 1 established, 10 listening
};

struct RankLog {
  int rank = 0;
  std::string host;
  long pid = 0;
  std::vector<LoggedMessage> messages;
};

struct MessageFiles {
  std::string dir;
  std::vector<RankLog> ranks;  // index = rank
  std::vector<LoggedSocket> sockets;
  int worldSize() const { return static_cast<int>(ranks.size()); }
};

MessageFiles readMessageFiles(const std::string& dir);

}  // namespace dtbench::capture
