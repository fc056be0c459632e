#pragma once
// Socket log: the rank's own TCP sockets (comm/failure/socket_endpoints.h, ownTcpSockets) at the
// moments --message-log records them, as sockets.rank<R>.csv (docs/wire.md, "Message log"):
//
//   rank,host,pid,when,local,remote,state
//   1,node2,4711,start,10.1.0.3:41822,10.1.0.2:29500,01
//   1,node2,4711,start,0.0.0.0:38911,0.0.0.0:0,0A
//
// when: the snapshot's label (`start`: after the communicator connected; `end`: at the end of the
// run); local and remote as Endpoint::str() writes them; state the kernel's state as two hex digits
// (01 established, 0A listening). Rows in snapshot order, each snapshot's sockets in the order given.

#include <ostream>
#include <string>
#include <vector>

#include "comm/failure/socket_endpoints.h"

namespace dtbench::comm {

struct SocketSnapshot {
  std::string when;  // start | end
  std::vector<TcpSocket> sockets;
};

void writeSocketsCsv(std::ostream& out, int rank, const std::string& host, long pid,
                     const std::vector<SocketSnapshot>& snapshots);

}  // namespace dtbench::comm
