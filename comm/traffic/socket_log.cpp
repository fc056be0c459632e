#include "comm/traffic/socket_log.h"

#include <cstdio>

namespace dtbench::comm {

void writeSocketsCsv(std::ostream& out, int rank, const std::string& host, long pid,
                     const std::vector<SocketSnapshot>& snapshots) {
  out << "rank,host,pid,when,local,remote,state\n";
  for (const SocketSnapshot& snapshot : snapshots)
    for (const TcpSocket& socket : snapshot.sockets) {
      char state[8];
      std::snprintf(state, sizeof state, "%02X", static_cast<unsigned>(socket.state) & 0xFFu);
      out << rank << ',' << host << ',' << pid << ',' << snapshot.when << ',' << socket.local.str() << ','
          << socket.remote.str() << ',' << state << '\n';
    }
}

}  // namespace dtbench::comm
