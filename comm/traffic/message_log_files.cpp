#include "comm/traffic/message_log_files.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "comm/traffic/logging_communicator.h"
#include "common/atomic_file.h"
#include "common/usage_error.h"

namespace dtbench::comm {
namespace {

namespace fs = std::filesystem;

}  // namespace

MessageLogFiles::MessageLogFiles(std::string dir, int rank, std::string host)
    : dir_(std::move(dir)), rank_(rank), host_(std::move(host)), log_(std::make_shared<MessageLog>(rank)) {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_))
    throw common::UsageError("--message-log " + dir_ + " cannot be created (" +
                             (error ? error.message() : std::string("not a directory")) +
                             "); give a directory that exists or can be made");
  start_ = SocketSnapshot{"start", ownTcpSockets()};
}

std::unique_ptr<Communicator> MessageLogFiles::wrap(std::unique_ptr<Communicator> communicator) const {
  return std::make_unique<LoggingCommunicator>(std::move(communicator), log_);
}

std::string MessageLogFiles::messagesPath() const {
  return (fs::path(dir_) / ("messages.rank" + std::to_string(rank_) + ".csv")).string();
}

std::string MessageLogFiles::socketsPath() const {
  return (fs::path(dir_) / ("sockets.rank" + std::to_string(rank_) + ".csv")).string();
}

void MessageLogFiles::write() {
  const std::vector<SocketSnapshot> snapshots{start_, SocketSnapshot{"end", ownTcpSockets()}};
  common::writeFileAtomically(messagesPath(), [this](std::ostream& out) { log_->writeCsv(out); });
  common::writeFileAtomically(socketsPath(), [&](std::ostream& out) {
    writeSocketsCsv(out, rank_, host_, static_cast<long>(::getpid()), snapshots);
  });
}

void MessageLogFiles::writeBestEffort(std::ostream& warnings) noexcept {
  try {
    write();
  } catch (const std::exception& e) {
    try {
      warnings << "dtbench: --message-log: " << e.what() << '\n';
    } catch (...) {}
  }
}

}  // namespace dtbench::comm
