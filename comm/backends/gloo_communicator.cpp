#include "comm/backends/gloo_communicator.h"

#include <algorithm>
#include <atomic>
#include <cctype>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "comm/failure/peer_table.h"
#include "comm/failure/socket_endpoints.h"

namespace dtbench::comm {
namespace {

// Gloo's broadcast and all-gather have no bfloat16 either; they only move bytes, so bfloat16
// travels reinterpreted as float16 (same bits; Gloo has no int16 either).
at::Tensor asGlooBytes(const at::Tensor& tensor) {
  return tensor.scalar_type() == at::kBFloat16 ? tensor.view(at::kHalf) : tensor;
}

std::string messageOf(const std::exception& e) {
  if (const auto* c10Error = dynamic_cast<const c10::Error*>(&e)) return c10Error->what_without_backtrace();
  return e.what();
}

// "gloo <operation> on rank <self> [to|from rank <peer>] failed: <cause>" plus what the peer table
// knows: which rank owns each address in Gloo's cause (on any host), which ranks on this host are
// gone, and what to do. `timedOut` replaces the cause by the deadline.
std::string describeFailure(const std::string& operation, int self, int peer, const std::string& cause,
                            const PeerTable& peers, const Deadline* timedOut = nullptr) {
  std::string who = "gloo " + operation + " on rank " + std::to_string(self);
  if (peer >= 0) who += (operation == "recv" ? " from rank " : " to rank ") + std::to_string(peer);
  const std::string gone = peers.describeGone(self);
  // Gloo's own timeout (the same --timeout) may fire first: "Operation timed out!", "Timed out waiting ...".
  std::string lower = cause;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool late = timedOut != nullptr || lower.find("timed out") != std::string::npos;
  const std::string what = (timedOut ? " did not complete within " + timedOut->describe()
                                     : " failed: " + cause + peers.describeEndpoints(cause, self)) +
                           (late && peer < 0 && gone.empty() ? kLateRankUnknown : "");
  return who + what + gone +
         "; the run cannot continue (check that every rank is alive and runs the same collectives)";
}

class GlooWork final : public Work {
 public:
  GlooWork(c10::intrusive_ptr<c10d::Work> work, std::string operation, int self, int peer,
           std::chrono::milliseconds timeout, std::shared_ptr<const PeerTable> peers,
           std::shared_ptr<std::atomic<bool>> failed)
      : work_(std::move(work)), operation_(std::move(operation)), self_(self), peer_(peer),
        deadline_(Deadline::after(timeout)), peers_(std::move(peers)), failed_(std::move(failed)) {}

  void wait() override {
    if (done_) return;
    try {
      work_->wait(deadline_.remaining());
    } catch (const std::exception& e) {
      failed_->store(true);
      throw CommError(describeFailure(operation_, self_, peer_, messageOf(e), *peers_,
                                      deadline_.passed() ? &deadline_ : nullptr));
    }
    done_ = true;
  }

  bool isCompleted() override { return done_ || work_->isCompleted(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::string operation_;
  int self_, peer_;
  Deadline deadline_;
  std::shared_ptr<const PeerTable> peers_;
  std::shared_ptr<std::atomic<bool>> failed_;
  bool done_ = false;
};

}  // namespace

struct GlooCommunicator::Impl {
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::shared_ptr<const PeerTable> peers;
  std::chrono::milliseconds timeout;
  std::shared_ptr<std::atomic<bool>> failed = std::make_shared<std::atomic<bool>>(false);

  // Issues an operation. Gloo posts send and recv buffers in the calling thread, so a connection
  // that is already closed throws here rather than in wait(): both get the same description.
  template <typename IssueFn>
  WorkPtr issue(IssueFn&& issueFn, const std::string& operation, int self, int peer) const {
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = issueFn();
    } catch (const std::exception& e) {
      failed->store(true);
      throw CommError(describeFailure(operation, self, peer, messageOf(e), *peers));
    }
    return std::make_shared<GlooWork>(std::move(work), operation, self, peer, timeout, peers, failed);
  }
};

GlooCommunicator::GlooCommunicator(Store store, int rank, int size, const GlooOptions& options)
    : impl_(std::make_unique<Impl>()), rank_(rank), size_(size) {
  auto glooOptions = c10d::ProcessGroupGloo::Options::create(options.timeout);
  glooOptions->threads = options.threads;
  try {
    glooOptions->devices.push_back(options.iface.empty()
                                       ? c10d::ProcessGroupGloo::createDeviceForHostname(options.hostname)
                                       : c10d::ProcessGroupGloo::createDeviceForInterface(options.iface));
  } catch (const std::exception& e) {
    throw std::runtime_error("gloo cannot use " +
                             (options.iface.empty() ? "the address of '" + options.hostname + "'"
                                                    : "network interface '" + options.iface + "'") +
                             " (" + messageOf(e) + "); name an interface with --gloo-iface or GLOO_SOCKET_IFNAME");
  }
  impl_->timeout = options.timeout;
  PeerTable peers = PeerTable::exchange(store, rank, size);
  Store groupStore = store.prefixed("gloo");
  try {
    // Both 1.13 and 2.x connect the full mesh here (2.x connects lazily only when the device asks).
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(groupStore.c10dStore(), rank, size, glooOptions);
    // Every connection now exists: publish this rank's socket endpoints (comm/failure/peer_table.h).
    peers.exchangeEndpoints(store, rank, ownTcpSockets());
  } catch (const std::exception& e) {
    throw std::runtime_error("gloo rendezvous of rank " + std::to_string(rank) + " of " + std::to_string(size) +
                             " failed: " + messageOf(e) + peers.describeGone(rank));
  }
  impl_->peers = std::make_shared<const PeerTable>(std::move(peers));
}

// Note [Leaking a failed Gloo group]
// ~ProcessGroupGloo drains its queue and joins its worker threads, which after a failure may sit
// in an operation with a dead or stalled peer until Gloo's own timeout, or forever. A failure is
// fatal for the run (docs/design.md, "Signals, failures and resume"), so after one the group is deliberately leaked: the process is on
// its way to exit with the error, and the error reaches the user at once.
GlooCommunicator::~GlooCommunicator() {
  if (impl_ && impl_->failed->load()) (void)impl_->group.release();
}

WorkPtr GlooCommunicator::send(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size_, "send");
  std::vector<at::Tensor> tensors{tensor};
  return impl_->issue([&] { return impl_->group->send(tensors, peer, tag); }, "send", rank_, peer);
}

WorkPtr GlooCommunicator::recv(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size_, "recv");
  std::vector<at::Tensor> tensors{tensor};
  return impl_->issue([&] { return impl_->group->recv(tensors, peer, tag); }, "recv", rank_, peer);
}

WorkPtr GlooCommunicator::allreduce(const at::Tensor& tensor, ReduceOp op) {
  checkNativeAllreduce(tensor, Backend::kGloo);
  if (tensor.numel() == 0) return completedWork();
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  options.timeout = impl_->timeout;
  WorkPtr sum = impl_->issue([&] { return impl_->group->allreduce(tensors, options); }, "allreduce", rank_, -1);
  return op == ReduceOp::kAverage ? averageAfter(std::move(sum), tensor, size_) : sum;
}

WorkPtr GlooCommunicator::broadcast(const at::Tensor& tensor, int root) {
  if (tensor.numel() == 0) return completedWork();
  std::vector<at::Tensor> tensors{asGlooBytes(tensor)};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = impl_->timeout;
  return impl_->issue([&] { return impl_->group->broadcast(tensors, options); }, "broadcast", rank_, -1);
}

WorkPtr GlooCommunicator::allgather(const at::Tensor& output, const at::Tensor& input) {
  if (output.numel() != input.numel() * size_)
    throw std::invalid_argument("allgather: output must have size() * input.numel() elements");
  if (input.numel() == 0) return completedWork();
  std::vector<std::vector<at::Tensor>> outputs(1);
  const at::Tensor flat = asGlooBytes(output).view({-1});
  for (int r = 0; r < size_; ++r) outputs[0].push_back(flat.narrow(0, r * input.numel(), input.numel()));
  std::vector<at::Tensor> inputs{asGlooBytes(input)};
  c10d::AllgatherOptions options;
  options.timeout = impl_->timeout;
  return impl_->issue([&] { return impl_->group->allgather(outputs, inputs, options); }, "allgather", rank_, -1);
}

WorkPtr GlooCommunicator::barrier() {
  c10d::BarrierOptions options;
  options.timeout = impl_->timeout;
  return impl_->issue([&] { return impl_->group->barrier(options); }, "barrier", rank_, -1);
}

}  // namespace dtbench::comm
