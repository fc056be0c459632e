#include "common/oom_kills.h"

#include <fstream>
#include <sstream>
#include <string>

namespace dtbench::common {
namespace {

bool readable(const std::string& file) { return std::ifstream(file).good(); }

}  // namespace

std::string memoryEventsFile() {
  std::ifstream in("/proc/self/cgroup");
  std::string unified, memory;
  for (std::string line; std::getline(in, line);) {
    // hierarchy-ID:controllers:path; cgroup v2 is "0::path", v1's memory controller "N:memory:path".
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) unified = path;
    std::stringstream list(controllers);
    for (std::string controller; std::getline(list, controller, ',');)
      if (controller == "memory") memory = path;
  }
  if (!unified.empty())
    for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"})
      if (const std::string file = mount + unified + (unified.back() == '/' ? "" : "/") + "memory.events";
          readable(file))
        return file;
  if (!memory.empty())
    if (const std::string file = "/sys/fs/cgroup/memory" + memory + (memory.back() == '/' ? "" : "/") +
                                 "memory.oom_control";
        readable(file))
      return file;
  return "";
}

std::optional<long long> oomKills(const std::string& file) {
  if (file.empty()) return std::nullopt;
  std::ifstream in(file);
  std::string key;
  long long value = 0;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return std::nullopt;
}

}  // namespace dtbench::common
