#include "trainer/thread_share.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dtbench::trainer {

int availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::vector<int> availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
  }
  for (int cpu = 0; cpu < availableCores(); ++cpu) cpus.push_back(cpu);
  return cpus;
}

int sharedCoreThreads(const std::vector<std::vector<int>>& cpusOfRanksHere, size_t self) {
  if (self >= cpusOfRanksHere.size()) throw std::invalid_argument("sharedCoreThreads: no CPU set for this rank");
  std::map<int, int> holders;  // CPU -> ranks whose set holds it
  for (const std::vector<int>& cpus : cpusOfRanksHere)
    for (const int cpu : cpus) ++holders[cpu];
  double share = 0;
  for (const int cpu : cpusOfRanksHere[self]) share += 1.0 / holders[cpu];
  // A share of 2.9999 from three thirds is 3: round down only what is below a whole core.
  return std::max(1, static_cast<int>(share + 1e-9));
}

std::string cpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (const int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

std::vector<int> parseCpuList(const std::string& text) {
  std::vector<int> cpus;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const int cpu = std::stoi(text.substr(start, end - start));
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
    start = end + 1;
  }
  return cpus;
}

}  // namespace dtbench::trainer
