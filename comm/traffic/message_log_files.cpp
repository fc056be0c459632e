#include "comm/traffic/message_log_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "comm/traffic/logging_communicator.h"
#include "common/usage_error.h"

namespace dtbench::comm {
namespace {

namespace fs = std::filesystem;

// Writes `path` through path.tmp and a rename.
void writeAtomically(const std::string& path, const std::function<void(std::ostream&)>& body) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::out | std::ios::trunc);
    errno = 0;
    if (out) body(out);
    out.flush();
    if (!out) {
      const std::string reason = errno ? std::strerror(errno) : "write failed";
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw std::runtime_error("cannot write " + temporary + " (" + reason + ")");
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + error.message());
}

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
  writeAtomically(messagesPath(), [this](std::ostream& out) { log_->writeCsv(out); });
  writeAtomically(socketsPath(), [&](std::ostream& out) {
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
