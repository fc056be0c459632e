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
      if (DTBENCH_TORCH_HAS_CUDA) return;  // a GPU is checked for when the communicator is made
      throw common::UsageError(
          "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch (use --backend "
          "gloo or mpi here)");
  }
}

bool backendRunsPointToPoint(Backend backend) { return backend != Backend::kNccl; }

void checkBackendRunsTopology(Backend backend, const std::string& topology, bool pointToPoint) {
  if (!pointToPoint || backendRunsPointToPoint(backend)) return;
  throw common::UsageError("--backend " + std::string(name(backend)) + " cannot run " + topology + ": over " +
                           name(backend) + " dtbench runs --topology native (and --sync ssgd) only; the "
                           "point-to-point topologies and pair averaging need --backend gloo or mpi");
}

bool nativeAllreduceSupports(Backend backend, ElementType type) {
  switch (backend) {
    case Backend::kGloo: return true;  // LibTorch 2.x's Gloo sums bfloat16 too
    case Backend::kMpi: return true;  // 16-bit types through a sum of dtbench's own (mpi_communicator.cpp)
    case Backend::kNccl: return true;
  }
  return false;
}

int64_t eagerBytesBetweenHosts(Backend backend) { return backend == Backend::kMpi ? int64_t{2} << 20 : 0; }

}  // namespace dtbench::comm
