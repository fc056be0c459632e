#pragma once
// The run's checkpoint folder, written by rank 0 when a run stops early and read by --resume
// (docs/design.md, "Signals, failures and resume"). It lives in <runDir>/checkpoint/: state.json
// (where the run stands: epoch, step, sampler position, RNG states, ...) and any number of binary
// files by name (what they hold is the caller's: trainer/checkpoint/training_state.h).
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
// - A save that fails (a full disk: ENOSPC, or EFBIG past RLIMIT_FSIZE) removes its partial files
//   before it throws, so the space is free again for the run to record its failure, and leaves
//   the previous checkpoint as it was.
// - A missing or unreadable checkpoint throws std::runtime_error naming the path and what to do.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::run {

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

}  // namespace dtbench::run
