#pragma once
// BackendOptions: how a rank reaches the others, as the communicator takes it (comm/backends/
// make_communicator.h builds one from it). Plain data without LibTorch: the run's settings
// (run/run_config.h) hold one, and the tools that read run directories see it through them. The
// rank flags that fill it are experiments/cli/rank_options.cpp's.

#include <chrono>
#include <cstdint>
#include <string>

#include "comm/backends/backend.h"

namespace dtbench::comm {

// The most Gloo worker threads a rank may ask for. Each runs queued collectives; dtbench issues one
// at a time, so a few suffice, and a count in the thousands would only hang the rank starting them.
inline constexpr int kMaxGlooThreads = 64;

struct BackendOptions {
  Backend backend = Backend::kGloo;
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;       // the rank among those on this host: nccl's GPU
  std::string masterAddr;  // gloo over TCPStore
  int masterPort = 0;
  std::string storePath;  // gloo over FileStore instead (shared filesystem)
  std::string glooIface;  // --gloo-iface, else GLOO_SOCKET_IFNAME (read by the caller)
  int glooThreads = 2;  // at most kMaxGlooThreads
  double timeoutS = 60;  // --timeout: the deadline of every collective and of the rendezvous
  // --message-log DIR, else DTBENCH_MESSAGE_LOG; "" = off. Not used here: the caller wraps the
  // communicator (comm/traffic/message_log_files.h).
  std::string messageLog;

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(timeoutS * 1000.0));
  }
};

}  // namespace dtbench::comm
