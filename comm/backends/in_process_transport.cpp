#include "comm/backends/in_process_transport.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace dtbench::comm {
namespace {

class InProcessRecvWork final : public Work {
 public:
  InProcessRecvWork(InProcessWorld& world, at::Tensor tensor, int src, int dst, int tag)
      : world_(world), tensor_(std::move(tensor)), src_(src), dst_(dst), tag_(tag),
        deadline_(Deadline::after(world.timeout())) {}

  void wait() override {
    if (done_) return;
    std::vector<uint8_t> bytes;
    if (!world_.take(src_, dst_, tag_, bytes, deadline_.at()))
      throw CommError("recv from rank " + std::to_string(src_) + " on rank " + std::to_string(dst_) +
                      " did not complete within " + deadline_.describe() + "; is rank " + std::to_string(src_) +
                      " still running the same collective?");
    deliver(bytes);
  }

  bool isCompleted() override {
    if (done_) return true;
    std::vector<uint8_t> bytes;
    if (!world_.tryTake(src_, dst_, tag_, bytes)) return false;
    deliver(bytes);
    return true;
  }

 private:
  void deliver(const std::vector<uint8_t>& bytes) {
    done_ = true;
    if (bytes.size() != tensor_.nbytes())
      throw CommError("recv from rank " + std::to_string(src_) + " on rank " + std::to_string(dst_) + ": expected " +
                      std::to_string(tensor_.nbytes()) + " bytes, rank " + std::to_string(src_) + " sent " +
                      std::to_string(bytes.size()) + " (ranks disagree on the tensor's size)");
    if (!bytes.empty()) std::memcpy(tensor_.data_ptr(), bytes.data(), bytes.size());
  }

  InProcessWorld& world_;
  at::Tensor tensor_;
  int src_, dst_, tag_;
  Deadline deadline_;
  bool done_ = false;
};

}  // namespace

InProcessWorld::InProcessWorld(int size, std::chrono::milliseconds timeout) : size_(size), timeout_(timeout) {}

void InProcessWorld::post(int src, int dst, int tag, std::vector<uint8_t> bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mailboxes_[Key{src, dst, tag}].push_back(std::move(bytes));
  }
  arrived_.notify_all();
}

bool InProcessWorld::tryTake(int src, int dst, int tag, std::vector<uint8_t>& bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = mailboxes_.find(Key{src, dst, tag});
  if (it == mailboxes_.end() || it->second.empty()) return false;
  bytes = std::move(it->second.front());
  it->second.pop_front();
  return true;
}

bool InProcessWorld::take(int src, int dst, int tag, std::vector<uint8_t>& bytes,
                          std::chrono::steady_clock::time_point until) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto& box = mailboxes_[Key{src, dst, tag}];
  if (!arrived_.wait_until(lock, until, [&] { return !box.empty(); })) return false;
  bytes = std::move(box.front());
  box.pop_front();
  return true;
}

WorkPtr InProcessPointToPoint::send(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size(), "send");
  const auto* begin = static_cast<const uint8_t*>(tensor.data_ptr());
  world_.post(rank_, peer, tag, std::vector<uint8_t>(begin, begin + tensor.nbytes()));
  return completedWork();
}

WorkPtr InProcessPointToPoint::recv(const at::Tensor& tensor, int peer, int tag) {
  checkPointToPoint(tensor, peer, tag, rank_, size(), "recv");
  return std::make_shared<InProcessRecvWork>(world_, tensor, peer, rank_, tag);
}

}  // namespace dtbench::comm
