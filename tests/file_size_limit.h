#pragma once
// FileSizeLimit: a full disk without root or a small filesystem. While it lives, this process may
// not write any file beyond `bytes` (RLIMIT_FSIZE) and SIGXFSZ is ignored, so a write past the
// limit fails with EFBIG ("File too large") instead of killing the process. Restores both when it
// goes out of scope. The limit holds for the whole process, every thread included.

#include <sys/resource.h>

#include <csignal>
#include <stdexcept>

namespace dtbench::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0) throw std::runtime_error("getrlimit(RLIMIT_FSIZE) failed");
    previousHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) throw std::runtime_error("setrlimit(RLIMIT_FSIZE) failed");
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previousHandler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*previousHandler_)(int) = SIG_DFL;
};

}  // namespace dtbench::testing
