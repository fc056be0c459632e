#include "common/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace dtbench::common {

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& body) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::out | std::ios::trunc);
    errno = 0;
    if (out) body(out);
    out.flush();
    if (!out) {
      const std::string reason = errno ? std::strerror(errno) : "write failed";
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw std::runtime_error("cannot write " + temporary + " (" + reason +
                               "): is the disk full or the directory gone?");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + error.message());
}

}  // namespace dtbench::common
