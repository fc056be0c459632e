#pragma once
// The random number generators' state, as text a checkpoint's state.json holds (--resume draws the
// same random numbers as the run it continues).
// - captureRngState encodes the state of the CPU default generator and, when CUDA is available,
//   of the default generator of every visible CUDA device, as text (";"-separated `cpu=<hex>` and
//   `cudaN=<hex>` fields). restoreRngState puts them back, after which random draws repeat exactly.
//   CUDA fields for devices this process does not have are skipped (a run resumed without those
//   GPUs draws nothing from them). Malformed text throws std::invalid_argument and leaves every
//   generator as it was.

#include <string>

namespace dtbench::trainer {

std::string captureRngState();

void restoreRngState(const std::string& encoded);
// Throws the std::invalid_argument restoreRngState would, and changes no generator.
void checkRngState(const std::string& encoded);

}  // namespace dtbench::trainer
