#include "experiments/capture/message_files.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <stdexcept>
#include <utility>

#include "common/csv_file.h"

namespace dtbench::capture {
namespace {

// rank -> file name, for the files in `dir` named <prefix><R>.csv.
std::map<int, std::string> rankFiles(const std::string& dir, const std::string& prefix) {
  std::map<int, std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("cannot read the message log directory " + dir);
  const std::regex pattern(prefix + "([0-9]+)\\.csv");
  std::smatch m;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (std::regex_match(name, m, pattern)) files[std::stoi(m[1].str())] = dir + "/" + name;
  }
  closedir(d);
  return files;
}

int parseState(const common::CsvFile& csv, size_t row, size_t column) {
  const std::string& text = csv.text(row, column);
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 16);
  if (text.empty() || *end != '\0' || v < 0 || v > 255) csv.fail(row, column, "not a hex TCP state ('" + text + "')");
  return static_cast<int>(v);
}

comm::Endpoint endpointField(const common::CsvFile& csv, size_t row, size_t column) {
  const auto e = comm::parseEndpoint(csv.text(row, column));
  if (!e) csv.fail(row, column, "not an address:port ('" + csv.text(row, column) + "')");
  return *e;
}

void readMessages(const std::string& path, int rank, RankLog& log) {
  const auto csv = common::CsvFile::read(path);
  const size_t cIndex = csv.column("index"), cPost = csv.column("t_post_s"), cDone = csv.column("t_done_s"),
               cOp = csv.column("op"), cSrc = csv.column("src"), cDst = csv.column("dst"), cBytes = csv.column("bytes"),
               cCategory = csv.column("category");
  log.messages.reserve(csv.rows());
  for (size_t r = 0; r < csv.rows(); ++r) {
    LoggedMessage m;
    m.index = static_cast<int>(csv.integer(r, cIndex));
    m.postS = csv.number(r, cPost);
    m.doneS = csv.number(r, cDone);  // empty -> NaN
    m.op = csv.text(r, cOp);
    m.src = static_cast<int>(csv.integer(r, cSrc));
    m.dst = static_cast<int>(csv.integer(r, cDst));
    m.bytes = csv.integer(r, cBytes);
    m.category = csv.text(r, cCategory);
    if (m.op != "send" && m.op != "recv" && m.op != "allreduce" && m.op != "broadcast" && m.op != "allgather" &&
        m.op != "barrier")
      csv.fail(r, cOp, "unknown operation '" + m.op + "'");
    if (m.op == "send" && m.src != rank) csv.fail(r, cSrc, "a send of rank " + std::to_string(rank) + " must have src " + std::to_string(rank));
    if (m.op == "recv" && m.dst != rank) csv.fail(r, cDst, "a recv of rank " + std::to_string(rank) + " must have dst " + std::to_string(rank));
    if (m.bytes < 0) csv.fail(r, cBytes, "negative bytes");
    if (m.index != static_cast<int>(r)) csv.fail(r, cIndex, "rows must be numbered 0, 1, ... in order");
    log.messages.push_back(std::move(m));
  }
}

// The ranks of one run run at the same time: a rank whose operations all lie more than
// kSameRunSlackS before or after rank 0's is a file an earlier run left in the directory (a 3-rank
// run's rank 2 beside a new 2-rank run), and its rows would be reconciled as if they were this run's.
constexpr double kSameRunSlackS = 1.0;

std::string timeText(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", seconds);
  return text;
}

void checkOneRun(const MessageFiles& files) {
  const auto span = [](const RankLog& log) {
    double first = std::numeric_limits<double>::infinity(), last = -first;
    for (const LoggedMessage& m : log.messages) {
      first = std::min(first, m.postS);
      last = std::max(last, std::isnan(m.doneS) ? m.postS : std::max(m.postS, m.doneS));
    }
    return std::make_pair(first, last);
  };
  if (files.ranks.empty() || files.ranks[0].messages.empty()) return;
  const auto [first0, last0] = span(files.ranks[0]);
  for (size_t r = 1; r < files.ranks.size(); ++r) {
    if (files.ranks[r].messages.empty()) continue;
    const auto [first, last] = span(files.ranks[r]);
    if (last < first0 - kSameRunSlackS || first > last0 + kSameRunSlackS)
      throw std::runtime_error(files.dir + ": messages.rank" + std::to_string(r) + ".csv spans " + timeText(first) +
                               " to " + timeText(last) + " s, outside rank 0's " + timeText(first0) + " to " +
                               timeText(last0) + " s: it is from another run. A message log directory holds one run: "
                               "remove the files of ranks that are not this run's, or log each run into its own directory");
  }
}

}  // namespace

MessageFiles readMessageFiles(const std::string& dir) {
  MessageFiles files;
  files.dir = dir;
  const auto messages = rankFiles(dir, "messages\\.rank");
  const auto sockets = rankFiles(dir, "sockets\\.rank");
  if (messages.empty())
    throw std::runtime_error("no messages.rank<R>.csv in " + dir +
                             ": give the directory the ranks wrote with --message-log (docs/wire.md)");
  const int world = messages.rbegin()->first + 1;
  for (int r = 0; r < world; ++r) {
    if (!messages.count(r)) throw std::runtime_error(dir + ": messages.rank" + std::to_string(r) + ".csv is missing (the log has ranks up to " + std::to_string(world - 1) + ")");
    if (!sockets.count(r)) throw std::runtime_error(dir + ": sockets.rank" + std::to_string(r) + ".csv is missing");
  }
  if (static_cast<int>(sockets.size()) != world)
    throw std::runtime_error(dir + ": sockets files of more ranks than messages files (" + std::to_string(sockets.size()) +
                             " vs " + std::to_string(world) + ")");
  files.ranks.resize(world);
  for (int r = 0; r < world; ++r) {
    RankLog& log = files.ranks[r];
    log.rank = r;
    readMessages(messages.at(r), r, log);
    const auto csv = common::CsvFile::read(sockets.at(r));
    const size_t cRank = csv.column("rank"), cHost = csv.column("host"), cPid = csv.column("pid"),
                 cWhen = csv.column("when"), cLocal = csv.column("local"), cRemote = csv.column("remote"),
                 cState = csv.column("state");
    for (size_t row = 0; row < csv.rows(); ++row) {
      if (csv.integer(row, cRank) != r) csv.fail(row, cRank, "expected rank " + std::to_string(r));
      log.host = csv.text(row, cHost);
      log.pid = static_cast<long>(csv.integer(row, cPid));
      LoggedSocket s;
      s.rank = r;
      s.when = csv.text(row, cWhen);
      s.local = endpointField(csv, row, cLocal);
      s.remote = endpointField(csv, row, cRemote);
      s.state = parseState(csv, row, cState);
      files.sockets.push_back(std::move(s));
    }
  }
  checkOneRun(files);
  return files;
}

}  // namespace dtbench::capture
