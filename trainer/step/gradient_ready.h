#pragma once
// GradientReadyProbe: when, during backward, each parameter's gradient becomes ready, on every run
// (one rank included: a single rank has no GradientSync, and this is how a 1-rank baseline tells
// when its gradients are ready). Rank 0 has one; its RunRecorder collects the offsets of every step
// into step_profile.json (run/step_profile.h, docs/run-directory.md).
//
// Contract: the probe registers a post-hook on the gradient accumulator of every trainable
// parameter (requires_grad, in model.parameters() order), the mechanism of
// trainer/sync/bucketed_allreduce.h, which keeps hooks of its own. arm(), called right before
// loss.backward(), reads the steady clock as the backward's start; the first run of each
// accumulator after it records the seconds from that start (a later run in the same backward, of a
// parameter used twice, is ignored); disarm() once backward has returned. Outside arm() ... disarm()
// the hooks record nothing (evaluation, other graphs). readyS() then holds the last armed
// backward's offsets, NaN for a parameter whose gradient was not produced.
// Cost: one clock read and one store per parameter per step.
// Threads: the hooks run where autograd runs the accumulators (the calling thread on the CPU, the
// device's autograd thread on a GPU); each writes only its own parameter's slot, and backward()
// returning orders those writes before disarm() and readyS(). On a GPU the time is when the
// accumulator ran on the host, i.e. when its kernels were queued.
// Destroying the probe removes the hooks (compat::AccumulatorHooks; the model may go first).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <torch/csrc/autograd/function.h>
#include <torch/nn/module.h>

#include "compat/autograd_compat.h"
#include "run/step_profile.h"

namespace dtbench::trainer {

class GradientReadyProbe {
 public:
  explicit GradientReadyProbe(torch::nn::Module& model);
  GradientReadyProbe(const GradientReadyProbe&) = delete;
  GradientReadyProbe& operator=(const GradientReadyProbe&) = delete;

  // The trainable parameters in model.parameters() order: name, elements, element type.
  const std::vector<run::ProfiledParameter>& parameters() const { return parameters_; }
  // Elements of the model's floating-point buffers (trainer/sync/flat_tensors.h, floatingBuffers).
  int64_t bufferElements() const { return bufferElements_; }

  // Right before loss.backward(): the backward's start; every offset back to NaN.
  void arm();
  // Once backward has returned.
  void disarm() { armed_ = false; }
  // Seconds from the last arm() to each parameter's gradient being ready (NaN: not produced).
  const std::vector<double>& readyS() const { return readyS_; }

 private:
  void gradientReady(size_t parameter);

  std::vector<run::ProfiledParameter> parameters_;
  std::vector<double> readyS_;
  int64_t bufferElements_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool armed_ = false;
  std::optional<compat::AccumulatorHooks> hooks_;  // last: removed first, before what they write
};

}  // namespace dtbench::trainer
