#include "trainer/step/graph/graphed_train_step.h"

#include <stdexcept>
#include <utility>

#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <c10/util/Exception.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include "compat/torch_compat.h"
#include "trainer/step/numerics/precision.h"

namespace dtbench::trainer {

namespace {

bool sameLayout(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type();
}

// Autocast's cache of lower-precision weights off for the capture's lifetime: a cached cast would be
// recorded once and replayed with the weights of the capture's step.
class AutocastCacheOff {
 public:
  AutocastCacheOff() : before_(at::autocast::is_autocast_cache_enabled()) { at::autocast::set_autocast_cache_enabled(false); }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(before_); }
  AutocastCacheOff(const AutocastCacheOff&) = delete;
  AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

 private:
  bool before_;
};

}  // namespace

GraphedTrainStep::GraphedTrainStep(GraphedTrainStepParts parts, std::unique_ptr<DeviceGraph> graph)
    : p_(std::move(parts)), graph_(std::move(graph)) {
  if (!graph_) throw std::invalid_argument("GraphedTrainStep: no DeviceGraph");
  p_.optimizer.keepLearningRatesInTensors(p_.device);
}

bool GraphedTrainStep::accepts(const at::Tensor& images, const at::Tensor& labels) const {
  return !images_.defined() || (sameLayout(images, images_) && sameLayout(labels, labels_));
}

void GraphedTrainStep::load(const at::Tensor& images, const at::Tensor& labels) {
  TORCH_CHECK(accepts(images, labels), "GraphedTrainStep: a batch of sizes ", images.sizes(),
              " does not fit the captured ", images_.sizes());
  if (!images_.defined()) {
    const auto format = p_.channelsLast && images.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
    images_ = at::empty(images.sizes(), images.options().device(p_.device).pinned_memory(false), format);
    labels_ = at::empty(labels.sizes(), labels.options().device(p_.device).pinned_memory(false));
  }
  images_.copy_(images, /*non_blocking=*/true);
  labels_.copy_(labels, /*non_blocking=*/true);
}

void GraphedTrainStep::capture() {
  TORCH_CHECK(!captured_, "GraphedTrainStep: captured already");
  TORCH_CHECK(images_.defined(), "GraphedTrainStep: load() a batch before capture()");
  const AutocastCacheOff cacheOff;
  graph_->capture([this] { body(); });
  captured_ = true;
}

void GraphedTrainStep::replay() {
  TORCH_CHECK(captured_, "GraphedTrainStep: replay() before capture()");
  p_.optimizer.refreshLearningRates();
  graph_->replay();
}

// The step as the eager one computes it (trainer/step/train_step.cpp), on the static inputs.
void GraphedTrainStep::body() {
  at::Tensor logits;
  at::Tensor loss;
  {
    const AutocastScope autocast(p_.device.type(), p_.ampDtype);
    logits = p_.model->forward(images_);
    loss = torch::nn::functional::cross_entropy(logits, labels_);
  }
  loss.backward();
  p_.optimizer.step();
  compat::zeroGradInPlace(p_.optimizer);
  const torch::NoGradGuard noGrad;
  outputs_ = at::stack({loss.detach().to(at::kFloat), logits.argmax(1).eq(labels_).sum().to(at::kFloat)});
}

}  // namespace dtbench::trainer
