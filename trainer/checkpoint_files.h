#pragma once
// The run's checkpoint, written by rank 0 when a run stops early and read by --resume (docs/design.md,
// "Signals, failures and resume"). It lives in <runDir>/checkpoint/: state.json (where the run
// stands: epoch, step, sampler position, RNG states, ...) and any number of binary files by name.
//
// Contract:
// - saveCheckpoint replaces the checkpoint as a set, so a reader sees the old one or the new one,
//   never a mix: the files go to <runDir>/checkpoint.partial/ (state.json last), then checkpoint/
//   (if any) is renamed to checkpoint.old/, checkpoint.partial/ to checkpoint/, and checkpoint.old/
//   is removed. A crash between the two renames leaves only checkpoint.old/, which is complete and
//   is what hasCheckpoint and loadCheckpoint then use; a stale checkpoint.partial/ is ignored and
//   cleared by the next save. A directory is a checkpoint when it holds state.json. Like
//   writeJsonAtomically this relies on rename alone (no fsync): it survives the process dying, not
//   the machine losing power.
// - Model and optimizer are stored with torch::serialize archives (Module::save, Optimizer::save)
//   as one in-memory archive (serializeTrainingState), which the caller names and passes as a file
//   (the trainer: rank0.pt, or one rankN.pt per rank when ranks differ).
// - Loading is in place: values are copied into the module's existing parameters and buffers, so
//   their storage (and any view into it, such as a gradient bucket) stays valid, and the
//   optimizer's per-parameter state (momentum buffers, Adam's moments and step) lands on the
//   device of the module's parameters. The optimizer's options (learning rate, momentum, ...) are
//   not restored (LibTorch reads them but does not apply them): the caller builds the optimizer
//   with the run's options and restores any schedule from state.json.
// - Model and optimizer must be built as when saving (same model, parameter order and optimizer
//   type). A mismatch, or a missing or unreadable checkpoint, throws std::runtime_error naming
//   the path and what to do; bytes that are no archive at all (an empty or cut-short file) are
//   named as damaged, not blamed on the flags.
// - A save that fails (a full disk: ENOSPC, or EFBIG past RLIMIT_FSIZE) removes its partial files
//   before it throws, so the space is free again for the run to record its failure, and leaves
//   the previous checkpoint as it was.
//
// Random number generators:
// - captureRngState encodes the state of the CPU default generator and, when CUDA is available,
//   of the default generator of every visible CUDA device, as text (";"-separated `cpu=<hex>` and
//   `cudaN=<hex>` fields) that fits in state.json. restoreRngState puts them back, after which
//   random draws repeat exactly. CUDA fields for devices this process does not have are skipped
//   (a run resumed without those GPUs draws nothing from them). Malformed text throws
//   std::invalid_argument and leaves every generator as it was.

#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace dtbench::trainer {

// <runDir>/checkpoint, where saveCheckpoint puts the checkpoint.
std::string checkpointDirectory(const std::string& runDir);

// Whether a complete checkpoint exists (checkpoint/, or checkpoint.old/ left by a crash).
bool hasCheckpoint(const std::string& runDir);

// `files` maps plain file names (no "/", not "state.json") to their bytes. Throws
// std::invalid_argument on a bad name, std::runtime_error when the disk refuses.
void saveCheckpoint(const std::string& runDir, const std::map<std::string, std::string>& files,
                    const nlohmann::json& state);

struct LoadedCheckpoint {
  std::string directory;  // the directory read: checkpoint/, or checkpoint.old/ after a crash
  nlohmann::json state;
  std::map<std::string, std::string> files;  // every file but state.json, by name
};

LoadedCheckpoint loadCheckpoint(const std::string& runDir);

// Model and optimizer as one archive in memory, and back (in place). `source` names where the
// bytes came from in error messages.
std::string serializeTrainingState(torch::nn::Module& model, torch::optim::Optimizer& optimizer);
void deserializeTrainingState(const std::string& bytes, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                              const std::string& source = "the checkpoint");
// Throws the std::runtime_error deserializeTrainingState would when `bytes` are not a readable
// archive of serializeTrainingState (without a model to load them into).
void checkTrainingStateReadable(const std::string& bytes, const std::string& source);

std::string captureRngState();

void restoreRngState(const std::string& encoded);
// Throws the std::invalid_argument restoreRngState would, and changes no generator.
void checkRngState(const std::string& encoded);

}  // namespace dtbench::trainer
