#pragma once
// LoggingCommunicator: a Communicator that forwards every call to the one it owns and records it
// in a MessageLog (message_log.h): the rows of --message-log (docs/wire.md, "Message log").
//
//   op         src            dst    bytes
//   send       rank()         peer   tensor.nbytes()
//   recv       peer           rank() tensor.nbytes()
//   allreduce  rank()         -1     tensor.nbytes()
//   broadcast  root           -1     tensor.nbytes()
//   allgather  rank()         -1     input.nbytes()
//   barrier    rank()         -1     0
//
// Each row is posted (with the calling thread's MessageCategoryScope) just before the call is
// handed to the inner communicator, and marked done when the returned Work's wait() returns.
//
// Contract: Communicator's, unchanged; the Works it returns forward to the inner ones. It costs a
// row and a Work per operation: installed only under --message-log, never as a no-op.
// Every topology reaches it: TopologyAllreduce's CountingPointToPoint and ImpairedPointToPoint are
// built over the World's communicator, which is this one.

#include <memory>

#include "comm/communicator.h"
#include "comm/traffic/message_log.h"

namespace dtbench::comm {

class LoggingCommunicator final : public Communicator {
 public:
  LoggingCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<MessageLog> log);

  Communicator& inner() { return *inner_; }
  const std::shared_ptr<MessageLog>& log() const { return log_; }

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Backend backend() const override { return inner_->backend(); }
  c10::Device device() const override { return inner_->device(); }
  WorkPtr send(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr recv(const at::Tensor& tensor, int peer, int tag) override;
  WorkPtr allreduce(const at::Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(const at::Tensor& tensor, int root) override;
  WorkPtr allgather(const at::Tensor& output, const at::Tensor& input) override;
  WorkPtr barrier() override;
  void abandon(const std::string& reason) override { inner_->abandon(reason); }

 private:
  WorkPtr logged(WorkPtr work, int64_t index) const;

  std::unique_ptr<Communicator> inner_;
  std::shared_ptr<MessageLog> log_;
};

}  // namespace dtbench::comm
