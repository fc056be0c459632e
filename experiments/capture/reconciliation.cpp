#include "experiments/capture/reconciliation.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <stdexcept>
#include <set>
#include <tuple>

#include "experiments/capture/flow_owners.h"

namespace dtbench::capture {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The categories of the message log, then the wire's own, in the order rows are written.
const std::vector<std::string>& categoryOrder() {
  static const std::vector<std::string> order{"gradients", "buffers", "initial", "parameters", "control",
                                              "setup",     "store",   "launcher", "slurm",      "other",
                                              "retransmission", "unattributed"};
  return order;
}
int categoryRank(const std::string& c) {
  const auto& o = categoryOrder();
  return static_cast<int>(std::find(o.begin(), o.end(), c) - o.begin());
}

// A finite time, or `fallback` for NaN.
double orElse(double t, double fallback) { return std::isnan(t) ? fallback : t; }

struct Block {
  std::string category;
  double firstPostS = 0;  // at the sender
  double doneAtReceiverS = 0;
  bool countsPayload = false;  // holds a send with bytes (a collective or a receive's notice counts none)
};

// Rank r's operations that may put bytes on its connection to s, cut into blocks of one category, with
// the time the receiver s finished each block.
std::vector<Block> blocksOf(const MessageFiles& files, int r, int s) {
  const auto& mine = files.ranks.at(r).messages;
  const auto& theirs = files.ranks.at(s).messages;
  // s's receives from r in order, and s's collectives in order: the partners of r's sends and
  // collectives (ranks post collectives in the same order; sends and receives of one pair match in
  // post order).
  std::vector<const LoggedMessage*> recvsFromR, collectivesOfS;
  for (const auto& m : theirs) {
    if (m.op == "recv" && m.src == r) recvsFromR.push_back(&m);
    if (m.isCollective()) collectivesOfS.push_back(&m);
  }
  std::vector<Block> blocks;
  size_t sendOrdinal = 0, collectiveOrdinal = 0;
  for (const auto& m : mine) {
    double done;
    if (m.op == "send") {
      if (m.dst != s) continue;
      const LoggedMessage* partner = sendOrdinal < recvsFromR.size() ? recvsFromR[sendOrdinal] : nullptr;
      ++sendOrdinal;
      done = partner ? orElse(partner->doneS, orElse(m.doneS, m.postS)) : orElse(m.doneS, m.postS);
    } else if (m.op == "recv") {
      if (m.src != s) continue;
      done = orElse(m.doneS, m.postS);  // its notice left before the data it waits for arrived
    } else {
      const LoggedMessage* partner =
          collectiveOrdinal < collectivesOfS.size() ? collectivesOfS[collectiveOrdinal] : nullptr;
      ++collectiveOrdinal;
      done = partner ? orElse(partner->doneS, orElse(m.doneS, m.postS)) : orElse(m.doneS, m.postS);
    }
    if (blocks.empty() || blocks.back().category != m.category) blocks.push_back({m.category, m.postS, done});
    blocks.back().doneAtReceiverS = std::max(blocks.back().doneAtReceiverS, done);
    if (m.op == "send" && m.bytes > 0) blocks.back().countsPayload = true;
  }
  return blocks;
}

using PairKey = std::tuple<int, int, std::string, std::string, std::string>;  // src, dst, srcHost, dstHost, category

struct Accumulator {
  std::map<PairKey, ReconciliationRow> rows;
  ReconciliationRow& at(int src, int dst, const std::string& srcHost, const std::string& dstHost, const std::string& category) {
    ReconciliationRow& row = rows[{src, dst, srcHost, dstHost, category}];
    row.srcRank = src;
    row.dstRank = dst;
    row.srcHost = srcHost;
    row.dstHost = dstHost;
    row.category = category;
    return row;
  }
};

// Flows of one directed rank pair's backend connections: each segment's new bytes go to the block
// whose window holds its capture time.
void attributeBackend(const Flow& flow, const std::vector<Block>& blocks, const std::string& srcHost,
                      const std::string& dstHost, Accumulator& acc) {
  // Window ends: block k ends at T_k = max(done at receiver of k, post of k+1); the last at its done.
  // Where the sender posted k+1 before the receiver finished k, bytes of that overlap belong to either;
  // a block that counts no payload (a collective's few bytes, written before the sender left it) gives
  // the overlap to a next block that does, so a slow receiver's barrier does not take the next gradients.
  std::vector<double> ends(blocks.size());
  for (size_t k = 0; k < blocks.size(); ++k) {
    if (k + 1 == blocks.size()) {
      ends[k] = blocks[k].doneAtReceiverS;
    } else if (!blocks[k].countsPayload && blocks[k + 1].countsPayload) {
      ends[k] = blocks[k + 1].firstPostS;
    } else {
      ends[k] = std::max(blocks[k].doneAtReceiverS, blocks[k + 1].firstPostS);
    }
  }
  for (size_t k = 1; k < ends.size(); ++k) ends[k] = std::max(ends[k], ends[k - 1]);
  const double start = blocks.empty() ? kInf : blocks.front().firstPostS;
  for (const StreamSegment& seg : flow.segments) {
    const int64_t fresh = seg.bytes - seg.retransmittedBytes;
    if (seg.retransmittedBytes > 0)
      acc.at(flow.srcRank, flow.dstRank, srcHost, dstHost, "retransmission").wireBytes += seg.retransmittedBytes;
    if (fresh <= 0) continue;
    std::string category;
    if (seg.t_s < start) {
      category = "setup";
    } else {
      const auto it = std::upper_bound(ends.begin(), ends.end(), seg.t_s);
      category = it == ends.end() ? "unattributed" : blocks[it - ends.begin()].category;
    }
    acc.at(flow.srcRank, flow.dstRank, srcHost, dstHost, category).wireBytes += fresh;
  }
}

}  // namespace

Reconciliation reconcile(const std::vector<Flow>& flows, const MessageFiles& files) {
  Accumulator acc;
  const int world = files.worldSize();
  auto hostOf = [&](int rank, const std::string& fallback) {
    return rank >= 0 && rank < world && !files.ranks[rank].host.empty() ? files.ranks[rank].host : fallback;
  };

  // Counted side: every rank's logged operations per peer and category (a send to its destination, a
  // receive to its source, whose notice travels there, a collective to every other rank).
  for (int r = 0; r < world; ++r)
    for (const auto& m : files.ranks[r].messages) {
      const auto count = [&](int s) {
        auto& row = acc.at(r, s, hostOf(r, ""), hostOf(s, ""), m.category);
        row.messages += 1;
        if (m.op == "send") row.countedBytes += m.bytes;
      };
      if (m.isCollective()) {
        for (int s = 0; s < world; ++s)
          if (s != r) count(s);
      } else {
        const int peer = m.op == "send" ? m.dst : m.src;
        if (peer != r && peer >= 0 && peer < world) count(peer);
      }
    }

  // Wire side.
  std::map<std::pair<int, int>, std::vector<Block>> blockCache;
  ReconciliationSummary sum;
  std::set<std::pair<int, int>> connected;  // rank pairs with a backend connection on the wire
  for (const Flow& f : flows) {
    if (f.key.protocol != 6) continue;
    sum.wirePayloadBytes += f.payloadBytes;
    if (f.cls == "backend") {
      connected.insert({f.srcRank, f.dstRank});
      auto key = std::make_pair(f.srcRank, f.dstRank);
      auto it = blockCache.find(key);
      if (it == blockCache.end()) it = blockCache.emplace(key, blocksOf(files, f.srcRank, f.dstRank)).first;
      attributeBackend(f, it->second, hostOf(f.srcRank, f.srcHost), hostOf(f.dstRank, f.dstHost), acc);
    } else {
      const bool ranked = f.cls == "store";
      const int src = ranked ? f.srcRank : -1, dst = ranked ? f.dstRank : -1;
      const std::string category = f.cls == "other" ? "unattributed" : f.cls;
      acc.at(src, dst, ranked ? hostOf(src, f.srcHost) : f.srcHost, ranked ? hostOf(dst, f.dstHost) : f.dstHost,
             category)
          .wireBytes += f.payloadBytes - f.retransmittedBytes;
      if (f.retransmittedBytes > 0)
        acc.at(src, dst, f.srcHost, f.dstHost, "retransmission").wireBytes += f.retransmittedBytes;
    }
  }

  Reconciliation result;
  for (auto& [key, row] : acc.rows) {
    if (row.messages == 0 && row.countedBytes == 0 && row.wireBytes == 0) continue;
    result.rows.push_back(row);
  }
  std::stable_sort(result.rows.begin(), result.rows.end(), [](const ReconciliationRow& a, const ReconciliationRow& b) {
    return std::make_tuple(a.srcRank < 0, a.srcRank, a.dstRank, a.srcHost, a.dstHost, categoryRank(a.category)) <
           std::make_tuple(b.srcRank < 0, b.srcRank, b.dstRank, b.srcHost, b.dstHost, categoryRank(b.category));
  });
  for (const auto& row : result.rows) {
    if (row.category == "unattributed") sum.unattributedBytes += row.wireBytes;
    if (row.countedBytes > 0 && !connected.count({row.srcRank, row.dstRank})) {
      if (row.category == "gradients") ++sum.pairsWithoutConnection;  // e.g. Open MPI's same-node ranks: shared memory
      continue;
    }
    if (row.countedBytes > 0) {
      ++sum.countedRows;
      sum.maxCountedErrorPct = std::max(sum.maxCountedErrorPct,
                                        std::abs(100.0 * static_cast<double>(row.difference()) / static_cast<double>(row.countedBytes)));
    }
    if (row.category == "gradients" && row.countedBytes > 0) {
      sum.countedGradientBytes += row.countedBytes;
      sum.wireGradientBytes += row.wireBytes;
      ++sum.gradientPairs;
      sum.maxGradientErrorPct = std::max(sum.maxGradientErrorPct,
                                         std::abs(100.0 * static_cast<double>(row.difference()) / static_cast<double>(row.countedBytes)));
    }
  }
  sum.attributedFraction = sum.wirePayloadBytes > 0 ? 1.0 - static_cast<double>(sum.unattributedBytes) /
                                                                static_cast<double>(sum.wirePayloadBytes)
                                                     : 1.0;
  result.summary = sum;
  return result;
}

void writeReconciliationCsv(std::ostream& out, const std::vector<ReconciliationRow>& rows) {
  out << "src_rank,dst_rank,src_host,dst_host,category,messages,counted_bytes,wire_bytes,difference_bytes,difference_pct\n";
  for (const auto& r : rows) {
    out << r.srcRank << ',' << r.dstRank << ',' << r.srcHost << ',' << r.dstHost << ',' << r.category << ','
        << r.messages << ',' << r.countedBytes << ',' << r.wireBytes << ',' << r.difference() << ',';
    if (r.countedBytes > 0)
      out << std::fixed << std::setprecision(3) << 100.0 * static_cast<double>(r.difference()) / static_cast<double>(r.countedBytes)
          << std::defaultfloat;
    out << '\n';
  }
}

nlohmann::json reconciliationJson(const Reconciliation& reconciliation) {
  const auto& s = reconciliation.summary;
  nlohmann::json framing = nlohmann::json::array();
  for (const auto& r : reconciliation.rows)
    if (r.srcRank >= 0 && r.messages > 0 && r.category != "store" && r.countedBytes > 0)
      framing.push_back({{"src_rank", r.srcRank},
                         {"dst_rank", r.dstRank},
                         {"category", r.category},
                         {"messages", r.messages},
                         {"bytes_per_message", static_cast<double>(r.difference()) / static_cast<double>(r.messages)}});
  return {{"wire_payload_bytes", s.wirePayloadBytes},
          {"unattributed_bytes", s.unattributedBytes},
          {"attributed_fraction", s.attributedFraction},
          {"counted_gradient_bytes", s.countedGradientBytes},
          {"wire_gradient_bytes", s.wireGradientBytes},
          {"gradient_pairs", s.gradientPairs},
          {"max_gradient_error_pct", s.maxGradientErrorPct},
          {"counted_rows", s.countedRows},
          {"max_counted_error_pct", s.maxCountedErrorPct},
          {"gradient_pairs_without_connection", s.pairsWithoutConnection},
          {"framing", framing}};
}

Reconciliation labelAndReconcile(std::vector<Flow>& flows, const std::string& messagesDir) {
  const MessageFiles files = readMessageFiles(messagesDir);
  labelFlows(flows, files);
  return reconcile(flows, files);
}

}  // namespace dtbench::capture
