#pragma once
// Several tensors packed end to end into one flat buffer, so that one collective moves them all
// (the start-of-run broadcast, BatchNorm statistics, pair averaging's swap). The buffer is CPU and
// may differ in element type from the tensors (values are converted by copy_).

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace dtbench::trainer {

// Every floating-point buffer of `model` (BatchNorm's running statistics; num_batches_tracked and
// other integer buffers advance identically on every rank and are left out).
std::vector<at::Tensor> floatingBuffers(torch::nn::Module& model);

int64_t totalElements(const std::vector<at::Tensor>& tensors);

// Copies the tensors into flat[0, totalElements) in order, and back.
void packInto(const std::vector<at::Tensor>& tensors, const at::Tensor& flat);
void unpackFrom(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);

}  // namespace dtbench::trainer
