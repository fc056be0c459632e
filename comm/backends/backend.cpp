#include "comm/backends/backend.h"

#include "common/usage_error.h"
#include "dtbench/build_config.h"

#include <string>

namespace dtbench::comm {

const common::NamedValues<Backend>& backendNames() {
  static const common::NamedValues<Backend> names({"backend", "backends"}, "--backend",
                                                  {{Backend::kGloo, "gloo"},
                                                   {Backend::kMpi, "mpi"},
                                                   {Backend::kNccl, "nccl"}});
  return names;
}

void checkBackendAvailable(Backend backend) {
  switch (backend) {
    case Backend::kGloo: return;
    case Backend::kMpi:
      if (DTBENCH_HAVE_MPI) return;
      throw common::UsageError(
          "this build has no MPI; rebuild with libopenmpi-dev installed and "
          "-DDTBENCH_WITH_MPI=ON, or use --backend gloo");
    case Backend::kNccl:
      if (!DTBENCH_TORCH_HAS_CUDA)
        throw common::UsageError(
            "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch (use --backend "
            "gloo or mpi here)");
      throw common::UsageError(
          "this LibTorch has CUDA, but dtbench's nccl backend (c10d ProcessGroupNCCL) is not "
          "implemented yet; use --backend gloo or mpi");
  }
}

bool nativeAllreduceSupports(Backend backend, ElementType type) {
  switch (backend) {
    case Backend::kGloo: return type != ElementType::kBFloat16;
    case Backend::kMpi: return type == ElementType::kFloat32;
    case Backend::kNccl: return true;
  }
  return false;
}

}  // namespace dtbench::comm
