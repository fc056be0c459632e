#include "trainer/sync/flat_tensors.h"

namespace dtbench::trainer {

std::vector<at::Tensor> floatingBuffers(torch::nn::Module& model) {
  std::vector<at::Tensor> buffers;
  for (const at::Tensor& b : model.buffers())
    if (at::isFloatingType(b.scalar_type())) buffers.push_back(b);
  return buffers;
}

int64_t totalElements(const std::vector<at::Tensor>& tensors) {
  int64_t total = 0;
  for (const at::Tensor& t : tensors) total += t.numel();
  return total;
}

void packInto(const std::vector<at::Tensor>& tensors, const at::Tensor& flat) {
  at::NoGradGuard noGrad;
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    flat.narrow(0, offset, t.numel()).copy_(t.reshape({-1}));
    offset += t.numel();
  }
}

void unpackFrom(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  at::NoGradGuard noGrad;
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace dtbench::trainer
