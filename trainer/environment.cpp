#include "trainer/environment.h"

#include <sched.h>
#include <unistd.h>

#include <c10/util/Exception.h>
#include <ATen/Parallel.h>

#include "comm/backends/library_versions.h"
#include "compat/torch_compat.h"
#include "dtbench/build_config.h"

namespace dtbench::trainer {

nlohmann::json describeEnvironment() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  nlohmann::json mpi = comm::mpiLibraryVersion().empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(comm::mpiLibraryVersion());
  return {
      {"dtbench_version", DTBENCH_VERSION},
      {"libtorch_version", compat::torchVersion()},
      {"mpi_version", mpi},
      {"nccl_version", nullptr},
      {"hostname", host},
      {"intra_op_threads", at::get_num_threads()},
      {"inter_op_threads", at::get_num_interop_threads()},
      {"compiler", __VERSION__},
      {"build", {{"mpi", DTBENCH_HAVE_MPI == 1},
                 {"download", DTBENCH_HAVE_DOWNLOAD == 1},
                 {"figures", DTBENCH_HAVE_FIGURES == 1},
                 {"torch_cuda", DTBENCH_TORCH_HAS_CUDA == 1}}},
  };
}

int availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::string errorMessage(const std::exception& error) {
  if (const auto* c10Error = dynamic_cast<const c10::Error*>(&error)) return c10Error->what_without_backtrace();
  return error.what();
}

}  // namespace dtbench::trainer
