#include "comm/traffic/logging_communicator.h"

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace dtbench::comm {
namespace {

// The inner Work, and the row it completes when wait() returns.
class LoggedWork final : public Work {
 public:
  LoggedWork(WorkPtr inner, std::shared_ptr<MessageLog> log, int64_t index)
      : inner_(std::move(inner)), log_(std::move(log)), index_(index) {}
  void wait() override {
    inner_->wait();
    log_->markDone(index_);
  }
  bool isCompleted() override { return inner_->isCompleted(); }

 private:
  WorkPtr inner_;
  std::shared_ptr<MessageLog> log_;
  int64_t index_;
};

int64_t bytesOf(const at::Tensor& tensor) { return static_cast<int64_t>(tensor.nbytes()); }

}  // namespace

LoggingCommunicator::LoggingCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<MessageLog> log)
    : inner_(std::move(inner)), log_(std::move(log)) {
  if (!inner_ || !log_) throw std::invalid_argument("LoggingCommunicator needs a communicator and a log");
}

WorkPtr LoggingCommunicator::logged(WorkPtr work, int64_t index) const {
  return std::make_shared<LoggedWork>(std::move(work), log_, index);
}

WorkPtr LoggingCommunicator::send(const at::Tensor& tensor, int peer, int tag) {
  const int64_t index = log_->post(MessageOp::kSend, rank(), peer, bytesOf(tensor));
  return logged(inner_->send(tensor, peer, tag), index);
}

WorkPtr LoggingCommunicator::recv(const at::Tensor& tensor, int peer, int tag) {
  const int64_t index = log_->post(MessageOp::kRecv, peer, rank(), bytesOf(tensor));
  return logged(inner_->recv(tensor, peer, tag), index);
}

WorkPtr LoggingCommunicator::allreduce(const at::Tensor& tensor, ReduceOp op) {
  const int64_t index = log_->post(MessageOp::kAllreduce, rank(), -1, bytesOf(tensor));
  return logged(inner_->allreduce(tensor, op), index);
}

WorkPtr LoggingCommunicator::broadcast(const at::Tensor& tensor, int root) {
  const int64_t index = log_->post(MessageOp::kBroadcast, root, -1, bytesOf(tensor));
  return logged(inner_->broadcast(tensor, root), index);
}

WorkPtr LoggingCommunicator::allgather(const at::Tensor& output, const at::Tensor& input) {
  const int64_t index = log_->post(MessageOp::kAllgather, rank(), -1, bytesOf(input));
  return logged(inner_->allgather(output, input), index);
}

WorkPtr LoggingCommunicator::barrier() {
  const int64_t index = log_->post(MessageOp::kBarrier, rank(), -1, 0);
  return logged(inner_->barrier(), index);
}

}  // namespace dtbench::comm
