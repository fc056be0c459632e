#pragma once
// A rank's model and optimizer as the bytes of one checkpoint file (run/checkpoint_folder.h
// keeps them: the trainer names them rank0.pt, or one rankN.pt per rank when ranks differ).
//
// Contract:
// - Model and optimizer are stored with torch::serialize archives (Module::save, Optimizer::save)
//   as one in-memory archive (serializeTrainingState).
// - Loading is in place: values are copied into the module's existing parameters and buffers, so
//   their storage (and any view into it, such as a gradient bucket) stays valid, and the
//   optimizer's per-parameter state (momentum buffers, Adam's moments and step) lands on the
//   device of the module's parameters. The optimizer's options (learning rate, momentum, ...) are
//   not restored (LibTorch reads them but does not apply them): the caller builds the optimizer
//   with the run's options and restores any schedule from state.json.
// - Model and optimizer must be built as when saving (same model, parameter order and optimizer
//   type). A mismatch throws std::runtime_error naming the source and what to do; bytes that are no
//   archive at all (an empty or cut-short file) are named as damaged, not blamed on the flags.

#include <string>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace dtbench::trainer {

// Model and optimizer as one archive in memory, and back (in place). `source` names where the
// bytes came from in error messages.
std::string serializeTrainingState(torch::nn::Module& model, torch::optim::Optimizer& optimizer);
void deserializeTrainingState(const std::string& bytes, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                              const std::string& source = "the checkpoint");
// Throws the std::runtime_error deserializeTrainingState would when `bytes` are not a readable
// archive of serializeTrainingState (without a model to load them into).
void checkTrainingStateReadable(const std::string& bytes, const std::string& source);

}  // namespace dtbench::trainer
