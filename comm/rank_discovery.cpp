#include "comm/rank_discovery.h"
#include "common/whole_number.h"

#include <unistd.h>  // environ (a GNU extension; g++ defines _GNU_SOURCE)

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <utility>

namespace dtbench::comm {
namespace {

struct Claim {
  std::string source;
  int rank;
  int worldSize;
  std::optional<int> localRank;
};

std::optional<std::string> lookup(const Environment& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

long long parseInteger(const std::string& text, const std::string& what) {
  const std::optional<long long> value = common::wholeNumber(text);
  if (!value) throw std::invalid_argument(what + " must be an integer, got '" + text + "'");
  return *value;
}

std::optional<int> intVar(const Environment& env, const std::string& key) {
  auto text = lookup(env, key);
  if (!text) return std::nullopt;
  return static_cast<int>(parseInteger(*text, key));
}

std::optional<Claim> claimFrom(const Environment& env, const std::string& source, const std::string& rankKey,
                               const std::string& sizeKey, const std::string& localKey) {
  const auto rank = intVar(env, rankKey);
  const auto size = intVar(env, sizeKey);
  if (!rank && !size) return std::nullopt;
  if (!rank || !size)
    throw std::invalid_argument(source + " sets only one of " + rankKey + " and " + sizeKey + "; set both");
  return Claim{source, *rank, *size, intVar(env, localKey)};
}

std::string describe(const Claim& c) {
  return c.source + " says rank " + std::to_string(c.rank) + " of " + std::to_string(c.worldSize) +
         (c.localRank ? " (local rank " + std::to_string(*c.localRank) + ")" : "");
}

// Splits at commas outside brackets.
std::vector<std::string> splitTopLevel(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) throw std::invalid_argument("unbalanced ']' in node list '" + text + "'");
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (depth != 0) throw std::invalid_argument("unbalanced '[' in node list '" + text + "'");
  if (!current.empty()) parts.push_back(current);
  return parts;
}

void expandName(const std::string& name, std::vector<std::string>& out) {
  const auto open = name.find('[');
  if (open == std::string::npos) {
    if (!name.empty()) out.push_back(name);
    return;
  }
  const auto close = name.find(']', open);
  const std::string prefix = name.substr(0, open);
  const std::string ranges = name.substr(open + 1, close - open - 1);
  const std::string suffix = name.substr(close + 1);
  size_t start = 0;
  while (start <= ranges.size()) {
    auto comma = ranges.find(',', start);
    if (comma == std::string::npos) comma = ranges.size();
    const std::string range = ranges.substr(start, comma - start);
    const auto dash = range.find('-');
    const std::string first = range.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
    const long long lo = parseInteger(first, "node list range '" + range + "'");
    const long long hi = parseInteger(last, "node list range '" + range + "'");
    if (hi < lo) throw std::invalid_argument("node list range '" + range + "' runs backwards");
    for (long long v = lo; v <= hi; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < first.size()) digits.insert(0, first.size() - digits.size(), '0');
      expandName(prefix + digits + suffix, out);
    }
    start = comma + 1;
  }
}

}  // namespace

Environment currentEnvironment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return env;
}

std::vector<std::string> expandNodelist(const std::string& nodelist) {
  std::vector<std::string> hosts;
  for (const std::string& part : splitTopLevel(nodelist)) expandName(part, hosts);
  return hosts;
}

int slurmPort(long long jobId, long long stepId) {
  return 10000 + static_cast<int>(((31 * jobId + stepId) % 20000 + 20000) % 20000);
}

RankInfo discoverRank(const ExplicitRank& flags, const Environment& env) {
  std::vector<Claim> claims;
  if (flags.rank || flags.worldSize) {
    if (!flags.rank || !flags.worldSize)
      throw std::invalid_argument("--rank and --world-size go together; give both");
    claims.push_back(Claim{"flags", *flags.rank, *flags.worldSize, flags.localRank});
  }
  const auto torchrun = claimFrom(env, "torchrun (RANK, WORLD_SIZE)", "RANK", "WORLD_SIZE", "LOCAL_RANK");
  const auto openmpi = claimFrom(env, "Open MPI (OMPI_COMM_WORLD_*)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                 "OMPI_COMM_WORLD_LOCAL_RANK");
  if (torchrun) claims.push_back(*torchrun);
  if (openmpi) claims.push_back(*openmpi);
  if (!torchrun && !openmpi) {  // Note [Nested launchers]
    const auto slurm = claimFrom(env, "Slurm (SLURM_PROCID, SLURM_NTASKS)", "SLURM_PROCID", "SLURM_NTASKS",
                                 "SLURM_LOCALID");
    if (slurm) claims.push_back(*slurm);
  }
  RankInfo info;
  info.source = "none";
  if (!claims.empty()) {
    const Claim& first = claims.front();
    for (const Claim& other : claims) {
      const bool localDiffers = first.localRank && other.localRank && *first.localRank != *other.localRank;
      if (other.rank != first.rank || other.worldSize != first.worldSize || localDiffers)
        throw std::invalid_argument("rank sources disagree: " + describe(first) + ", but " + describe(other) +
                                    "; remove the stale variables or flags");
    }
    info.rank = first.rank;
    info.worldSize = first.worldSize;
    for (const Claim& c : claims)
      if (c.localRank) {
        info.localRank = *c.localRank;
        break;
      }
    const std::string& s = first.source;
    info.source = s == "flags" ? "flags" : s.rfind("torchrun", 0) == 0 ? "torchrun" : s.rfind("Open", 0) == 0 ? "openmpi" : "slurm";
  }
  if (info.worldSize < 1 || info.rank < 0 || info.rank >= info.worldSize)
    throw std::invalid_argument("rank " + std::to_string(info.rank) + " is not in a world of " +
                                std::to_string(info.worldSize) + " (from " + info.source + ")");

  if (flags.masterAddr) {
    info.masterAddr = *flags.masterAddr;
  } else if (auto addr = lookup(env, "MASTER_ADDR")) {
    info.masterAddr = *addr;
  } else if (auto nodes = lookup(env, "SLURM_STEP_NODELIST") ? lookup(env, "SLURM_STEP_NODELIST")
                                                              : lookup(env, "SLURM_JOB_NODELIST")) {
    const auto hosts = expandNodelist(*nodes);
    if (!hosts.empty()) info.masterAddr = hosts.front();
  }
  if (flags.masterPort) {
    info.masterPort = *flags.masterPort;
  } else if (auto port = intVar(env, "MASTER_PORT")) {
    info.masterPort = *port;
  } else if (auto job = lookup(env, "SLURM_JOB_ID")) {
    const auto step = lookup(env, "SLURM_STEP_ID");
    info.masterPort = slurmPort(parseInteger(*job, "SLURM_JOB_ID"), step ? parseInteger(*step, "SLURM_STEP_ID") : 0);
  }
  if (info.masterPort < 0 || info.masterPort > 65535)
    throw std::invalid_argument("the master port must be in 0..65535, got " + std::to_string(info.masterPort));
  return info;
}

}  // namespace dtbench::comm
