#include "experiments/sweep/out_of_memory.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

namespace dtbench::sweep {

bool outOfMemoryInLog(const std::string& logPath, std::streamoff offset) {
  std::ifstream in(logPath);
  in.seekg(offset);
  for (std::string line; std::getline(in, line);) {
    // dtbench launch writes its own lines as they are (a rank's lines carry "[R] " before them).
    if (line.rfind("dtbench launch: rank ", 0) == 0 &&
        line.find("was killed by the kernel's out-of-memory killer") != std::string::npos)
      return true;
    if (line.rfind("slurmstepd", 0) != 0) continue;
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("oom_kill event") != std::string::npos || lower.find("oom-kill event") != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace dtbench::sweep
