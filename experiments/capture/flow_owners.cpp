#include "experiments/capture/flow_owners.h"

#include <map>
#include <set>
#include <utility>

namespace dtbench::capture {
namespace {

constexpr int kEstablished = 0x01;
constexpr int kTcp = 6;  // IPPROTO_TCP

using SocketPair = std::pair<comm::Endpoint, comm::Endpoint>;  // local, remote

}  // namespace

int storePort(const MessageFiles& files) {
  if (files.ranks.empty()) return 0;
  std::set<SocketPair> own;
  for (const auto& s : files.sockets)
    if (s.rank == 0 && s.state == kEstablished) own.insert({s.local, s.remote});
  std::set<int> ports;
  for (const auto& [local, remote] : own)
    if (own.count({remote, local})) {
      // One of the two ends is the server's port: the one rank 0 also listens on.
      for (const auto& s : files.sockets)
        if (s.rank == 0 && s.state != kEstablished && (s.local.port == local.port || s.local.port == remote.port))
          ports.insert(s.local.port);
    }
  return ports.size() == 1 ? *ports.begin() : 0;
}

void labelFlows(std::vector<Flow>& flows, const MessageFiles& files) {
  std::map<SocketPair, int> owner;  // (local, remote) -> rank
  for (const auto& s : files.sockets)
    if (s.state == kEstablished) owner.emplace(SocketPair{s.local, s.remote}, s.rank);
  const int store = storePort(files);
  std::set<std::string> rank0Addresses;
  for (const auto& s : files.sockets)
    if (s.rank == 0 && s.state == kEstablished) rank0Addresses.insert(s.local.address);

  for (Flow& f : flows) {
    const comm::Endpoint src{f.key.src, f.key.srcPort}, dst{f.key.dst, f.key.dstPort};
    f.srcRank = f.dstRank = -1;
    const auto a = owner.find({src, dst});
    const auto b = owner.find({dst, src});
    if (a != owner.end()) f.srcRank = a->second;
    if (b != owner.end()) f.dstRank = b->second;
    const bool isStore = store != 0 && ((src.port == store && rank0Addresses.count(src.address)) ||
                                        (dst.port == store && rank0Addresses.count(dst.address)));
    if (f.key.protocol != kTcp)
      f.cls = "other";
    else if (f.srcRank >= 0 && f.dstRank >= 0 && isStore)
      f.cls = "store";
    else if (f.srcRank >= 0 && f.dstRank >= 0 && f.srcRank != f.dstRank)
      f.cls = "backend";
    else if (f.srcHost == "controller" || f.dstHost == "controller")
      f.cls = "slurm";
    else if (!f.srcHost.empty() && !f.dstHost.empty())
      f.cls = "launcher";
    else
      f.cls = "other";
  }
}

}  // namespace dtbench::capture
