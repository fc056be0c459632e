#include "common/regular_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace dtbench::common {
namespace fs = std::filesystem;
namespace {

const char* kindOf(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    default: return "a special file";
  }
}

}  // namespace

std::ifstream openRegularFile(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);  // follows links: a link to a file is read
  if (status.type() == fs::file_type::not_found) throw std::runtime_error("cannot open " + path + ": no such file");
  if (error) throw std::runtime_error("cannot open " + path + ": " + error.message());
  if (status.type() != fs::file_type::regular)
    throw std::runtime_error(path + " is " + kindOf(status.type()) +
                             ", not a regular file: the report reads only "
                             "regular files");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  return in;
}

}  // namespace dtbench::common
