#pragma once
// GlooCommunicator: the `gloo` backend, c10d's ProcessGroupGloo (docs/reference.md, "LibTorch, Gloo
// and Open MPI").
//
// The network device is chosen explicitly (Note [Gloo device]): the interface `iface` (--gloo-iface,
// else GLOO_SOCKET_IFNAME, which the caller reads: LibTorch does not), else the address `hostname`
// resolves to. Options' timeout and threads come from dtbench's options. Native all-reduce, send
// and recv take float32, float16 and bfloat16 (comm/element_type.h). Failures and timeouts surface from Work::wait() as CommError naming the operation, and the
// peer: the direct peer of a send/recv; for collectives the ranks found gone on this host, and on
// any host the rank that owns each socket address in Gloo's message (comm/failure/peer_table.h).
//
// Note [Gloo device]
// ProcessGroupGloo::Options::create() leaves `devices` empty and construction throws "No device(s)
// specified"; createDefaultDevice() resolves the machine's hostname, which inside containers or
// network namespaces can name an address that is not there. So: an interface when one is named;
// else `hostname` (the caller passes 127.0.0.1 when every rank is local, else this host's name).

#include <chrono>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/store.h"

namespace dtbench::comm {

struct GlooOptions {
  std::string iface;     // network interface; empty: use hostname
  std::string hostname;  // address to bind when no interface is named
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  int threads = 2;  // Gloo worker threads
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(Store store, int rank, int size, const GlooOptions& options);
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Backend backend() const override { return Backend::kGloo; }
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(const at::Tensor& tensor, int root) override;
  WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) override;
  WorkPtr barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_;
  int size_;
};

}  // namespace dtbench::comm
