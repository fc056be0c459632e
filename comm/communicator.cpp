#include "comm/communicator.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/element_type.h"
#include "comm/tensor_element_type.h"
#include "common/lists.h"

namespace dtbench::comm {
namespace {

void checkTensor(const at::Tensor& tensor, const char* operation) {
  if (!tensor.defined() || !tensor.device().is_cpu())
    throw std::invalid_argument(std::string(operation) + ": tensors must be defined CPU tensors");
  if (!tensor.is_contiguous())
    throw std::invalid_argument(std::string(operation) + ": tensors must be contiguous (call .contiguous())");
  elementTypeOf(tensor.scalar_type());  // throws naming the supported types
}

class AverageWork final : public Work {
 public:
  AverageWork(WorkPtr sum, at::Tensor tensor, int worldSize)
      : sum_(std::move(sum)), tensor_(std::move(tensor)), worldSize_(worldSize) {}
  void wait() override {
    if (scaled_) return;
    sum_->wait();
    if (worldSize_ > 1) tensor_.div_(worldSize_);
    scaled_ = true;
  }
  bool isCompleted() override { return scaled_ || sum_->isCompleted(); }

 private:
  WorkPtr sum_;
  at::Tensor tensor_;
  int worldSize_;
  bool scaled_ = false;
};

}  // namespace

void checkPointToPoint(const at::Tensor& tensor, int peer, int tag, int self, int size, const char* operation) {
  checkTensor(tensor, operation);
  if (peer < 0 || peer >= size || peer == self)
    throw std::invalid_argument(std::string(operation) + ": peer " + std::to_string(peer) + " is not another rank of " +
                                std::to_string(size) + " (this is rank " + std::to_string(self) + ")");
  if (tag < 0 || tag > PointToPoint::kMaxTag)
    throw std::invalid_argument(std::string(operation) + ": tag " + std::to_string(tag) + " outside [0, " +
                                std::to_string(PointToPoint::kMaxTag) + "]");
}

void checkNativeAllreduce(const at::Tensor& tensor, Backend backend) {
  checkTensor(tensor, "allreduce");
  const ElementType type = elementTypeOf(tensor.scalar_type());
  if (!nativeAllreduceSupports(backend, type)) {
    std::vector<std::string> supported;
    for (const std::string& n : elementTypeNames())
      if (nativeAllreduceSupports(backend, parseElementType(n))) supported.push_back(n);
    throw std::invalid_argument(std::string(name(backend)) + "'s own all-reduce does not take " + name(type) + " (it takes " + common::joinList(supported) +
                                "); use a point-to-point --topology (ring, tree, ...), where dtbench reduces " +
                                name(type) + " itself");
  }
}

WorkPtr averageAfter(WorkPtr sum, at::Tensor tensor, int worldSize) {
  return std::make_shared<AverageWork>(std::move(sum), std::move(tensor), worldSize);
}

}  // namespace dtbench::comm
