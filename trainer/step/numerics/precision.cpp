#include "trainer/step/numerics/precision.h"

#include <stdexcept>
#include <vector>

#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include "compat/torch_compat.h"

namespace dtbench::trainer {

std::optional<at::ScalarType> ampDtype(Amp amp) {
  switch (amp) {
    case Amp::kOff: return std::nullopt;
    case Amp::kBf16: return at::kBFloat16;
    case Amp::kFp16: return at::kHalf;
  }
  return std::nullopt;
}

AutocastScope::AutocastScope(c10::DeviceType device, std::optional<at::ScalarType> dtype) : device_(device) {
  if (!dtype) return;
  wasEnabled_ = compat::autocastEnabled(device);
  previousDtype_ = compat::autocastDtype(device);
  compat::setAutocastDtype(device, *dtype);
  compat::setAutocastEnabled(device, true);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds lower-precision copies of leaf tensors (the parameters) made in this scope:
  // stale once the optimizer steps.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::setAutocastEnabled(device_, wasEnabled_);
  compat::setAutocastDtype(device_, previousDtype_);
}

void toChannelsLast(torch::nn::Module& model) {
  at::NoGradGuard noGrad;
  auto convert = [](const at::Tensor& t) {
    if (t.dim() == 4) t.set_data(t.contiguous(at::MemoryFormat::ChannelsLast));
  };
  for (const at::Tensor& p : model.parameters()) convert(p);
  for (const at::Tensor& b : model.buffers()) convert(b);
}

at::Tensor inMemoryFormat(const at::Tensor& batch, bool channelsLast) {
  if (!channelsLast || batch.dim() != 4) return batch;
  return batch.contiguous(at::MemoryFormat::ChannelsLast);
}

}  // namespace dtbench::trainer
