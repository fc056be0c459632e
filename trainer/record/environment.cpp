#include "trainer/record/environment.h"

#include <unistd.h>

#include <new>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Exception.h>

#include "comm/backends/gpu_devices.h"
#include "comm/backends/library_versions.h"
#include "compat/torch_compat.h"
#include "dtbench/build_config.h"

namespace dtbench::trainer {
namespace {

// CUDA's and cuDNN's versions as numbers encode them (13000 = 13.0; 91900 = 9.19.0).
std::string cudaVersionText(long version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }
std::string cudnnVersionText(long version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." + std::to_string(version % 100);
}

}  // namespace

nlohmann::json describeEnvironment() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const auto orNull = [](const std::string& text) { return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text); };
  // The CUDA runtime and cuDNN that LibTorch was built with and loads (no GPU needed to ask).
  const bool cuda = DTBENCH_TORCH_HAS_CUDA && at::detail::getCUDAHooks().hasCUDART();
  return {
      {"dtbench_version", DTBENCH_VERSION},
      {"libtorch_version", compat::torchVersion()},
      {"libtorch_cuda_version", cuda ? nlohmann::json(cudaVersionText(at::detail::getCUDAHooks().versionCUDART())) : nlohmann::json(nullptr)},
      {"cudnn_version", cuda ? nlohmann::json(cudnnVersionText(at::detail::getCUDAHooks().versionCuDNN())) : nlohmann::json(nullptr)},
      {"gpus_visible", comm::visibleGpuCount()},
      {"mpi_version", orNull(comm::mpiLibraryVersion())},
      {"nccl_version", orNull(comm::ncclLibraryVersion())},
      {"hostname", host},
      {"intra_op_threads", at::get_num_threads()},
      {"inter_op_threads", at::get_num_interop_threads()},
      {"compiler", __VERSION__},
      {"build", {{"mpi", DTBENCH_HAVE_MPI == 1},
                 {"download", DTBENCH_HAVE_DOWNLOAD == 1},
                 {"figures", DTBENCH_HAVE_FIGURES == 1},
                 {"capture", DTBENCH_HAVE_CAPTURE == 1},
                 {"torch_cuda", DTBENCH_TORCH_HAS_CUDA == 1}}},
  };
}

std::string errorMessage(const std::exception& error) {
  // Out of memory is named as such, with what to change: the usual first question of a study is the
  // largest batch that fits (summary.json's peak_host_bytes and peak_gpu_bytes say what fitted).
  if (const auto* oom = dynamic_cast<const c10::OutOfMemoryError*>(&error))
    return std::string("out of GPU memory: lower --batch-size (or use --amp bf16): ") + oom->what_without_backtrace();
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr)
    return std::string("out of host memory (") + error.what() +
           "): lower --batch-size or --workers, or ask for more memory (Slurm: --mem)";
  if (const auto* c10Error = dynamic_cast<const c10::Error*>(&error)) return c10Error->what_without_backtrace();
  return error.what();
}

}  // namespace dtbench::trainer
