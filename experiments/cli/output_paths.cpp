#include "experiments/cli/output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/usage_error.h"

namespace dtbench::experiments {

namespace fs = std::filesystem;

void prepareOutputDirectory(const std::string& path, const char* flag) {
  std::error_code error;
  if (fs::exists(path, error) && !fs::is_directory(path, error))
    throw common::UsageError(std::string(flag) + ": " + path +
                             " exists and is not a directory; name a directory (it is created when missing)");
  fs::create_directories(path, error);
  if (error) throw common::UsageError(std::string(flag) + ": cannot create the directory " + path + ": " + error.message());
  if (access(path.c_str(), W_OK | X_OK) != 0)
    throw common::UsageError(std::string(flag) + ": cannot write into " + path + ": " + std::strerror(errno));
}

void checkOutputFile(const std::string& path, const char* flag) {
  std::error_code error;
  if (fs::is_directory(path, error))
    throw common::UsageError(std::string(flag) + ": " + path + " is a directory; name the file to write");
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(parent, error))
    throw common::UsageError(std::string(flag) + ": the directory " + parent.string() + " of " + path +
                             " does not exist; create it first");
  const bool exists = fs::exists(path, error);
  if (access(exists ? path.c_str() : parent.c_str(), exists ? W_OK : W_OK | X_OK) != 0)
    throw common::UsageError(std::string(flag) + ": cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace dtbench::experiments
