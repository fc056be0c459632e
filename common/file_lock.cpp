#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace dtbench::common {
namespace {

// "pid N, host H" from the lock file's text "pid N host H", as its holder wrote it. The holder writes
// it right after taking the lock, so a process refused in between waits for it a little (up to
// 200 ms) before it says the holder is unknown.
std::string describeOwner(int fd, const std::string& path) {
  for (int attempt = 0; attempt < 40; ++attempt) {
    char text[512] = "";
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    long long pid = 0;
    char host[300] = "";
    if (n > 0 && std::sscanf(text, "pid %lld host %299s", &pid, host) == 2)
      return "pid " + std::to_string(pid) + ", host " + host;
    ::usleep(5000);
  }
  return "pid unknown: the holder has not written " + path + " yet";
}

}  // namespace

std::string thisHost() {
  char name[256] = "";
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

FileLockHeld::FileLockHeld(const std::string& path, std::string owner)
    : std::runtime_error(path + " is held by " + owner), owner_(std::move(owner)) {}

FileLock::FileLock(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot create " + path_ + " (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      const std::string owner = describeOwner(fd_, path_);
      ::close(fd_);
      fd_ = -1;
      throw FileLockHeld(path_, owner);
    }
    std::fprintf(stderr,
                 "dtbench: warning: cannot lock %s (%s): nothing stops a second process from doing the same "
                 "work at the same time\n",
                 path_.c_str(), std::strerror(error));
  }
  // Ours now: say who we are for the message of a refused process (after the lock, so the text is
  // never a loser's).
  const std::string owner = "pid " + std::to_string(::getpid()) + " host " + thisHost() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, owner.data(), owner.size(), 0) != static_cast<ssize_t>(owner.size())) {
    const std::string reason = std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("cannot write " + path_ + " (" + reason + "): is the disk full?");
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

bool FileLock::isHeld(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // drops the lock when this call took it
  return held;
}

}  // namespace dtbench::common
