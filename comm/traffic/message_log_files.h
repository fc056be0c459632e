#pragma once
// MessageLogFiles: what `--message-log DIR` writes for one rank (docs/wire.md, "Message log"):
// DIR/messages.rank<R>.csv (the MessageLog, message_log.h) and DIR/sockets.rank<R>.csv (socket_log.h).
//
// Use: construct it right after the communicator connected (that records the sockets, when =
// start), wrap() the communicator before anything else uses it, and write() at the end of the run
// (records the sockets again, when = end). On the failure path writeBestEffort() writes what there
// is and never throws.
//
// Contract: the constructor creates DIR with its parents (common::UsageError naming --message-log
// when it cannot, so a bad DIR fails at the start, not after the run). Each file is written as
// NAME.tmp and renamed, so a reader never sees half of one; a later write() replaces both files
// (with a fresh end snapshot). The log is thread-safe; write() is called by one thread.

#include <memory>
#include <ostream>
#include <string>

#include "comm/communicator.h"
#include "comm/traffic/message_log.h"
#include "comm/traffic/socket_log.h"

namespace dtbench::comm {

class MessageLogFiles {
 public:
  MessageLogFiles(std::string dir, int rank, std::string host);

  const std::shared_ptr<MessageLog>& log() const { return log_; }
  // A LoggingCommunicator over `communicator` that records into log().
  std::unique_ptr<Communicator> wrap(std::unique_ptr<Communicator> communicator) const;

  // Throws std::runtime_error naming the file that cannot be written.
  void write();
  // write(), with a failure reported on `warnings` ("dtbench: --message-log: ...") instead of thrown.
  void writeBestEffort(std::ostream& warnings) noexcept;

  std::string messagesPath() const;  // DIR/messages.rank<R>.csv
  std::string socketsPath() const;   // DIR/sockets.rank<R>.csv

 private:
  std::string dir_;
  int rank_;
  std::string host_;
  std::shared_ptr<MessageLog> log_;
  SocketSnapshot start_;
};

}  // namespace dtbench::comm
