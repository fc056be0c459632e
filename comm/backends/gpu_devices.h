#pragma once
// The GPUs this process sees, and which one a rank uses: one GPU per local rank, as torchrun and
// srun --gpus-per-task arrange it (local rank r uses cuda:(r mod visible GPUs), so ranks that share
// one GPU, e.g. several gloo ranks on a one-GPU machine, all use cuda:0).

#include <string>

namespace dtbench::comm {

// torch::cuda::device_count(): 0 without a GPU, and in a build whose LibTorch has no CUDA.
int visibleGpuCount();

// Throws common::UsageError in a build whose LibTorch has no CUDA, and std::runtime_error when no GPU
// is visible to this process: the message names `what` needed it, CUDA_VISIBLE_DEVICES, and
// `withoutGpu`, what the command can do instead (its own flags: "use --device cpu").
void requireGpu(const std::string& what, const std::string& withoutGpu);

// The index of the GPU local rank `localRank` uses; requireGpu() first.
int cudaDeviceForLocalRank(int localRank);

}  // namespace dtbench::comm
