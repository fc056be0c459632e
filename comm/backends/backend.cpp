#include "comm/backends/backend.h"

#include <algorithm>
#include <stdexcept>

#include "common/usage_error.h"
#include "dtbench/build_config.h"

namespace dtbench::comm {
namespace {

bool powerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

const char* alwaysRing(int) { return "ring"; }

// dtbench asks Open MPI's libnbc for reduce-scatter + all-gather (a ring over the hosts) when the world
// is a power of two, else for its ring (mpi_communicator.cpp, Note [Open MPI's non-blocking all-reduce]).
const char* libnbcAlgorithm(int worldSize) { return powerOfTwo(worldSize) ? "hierarchical" : "ring"; }

const std::vector<ElementType> kEveryType{ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16};

// The rows. A native model's efficiency is 1 unless measured otherwise (a hardware file may set its own:
// docs/predict.md). Why each model (native_models.h has the whole argument):
//   gloo  Gloo's ring knows no hosts: with K ranks per host a host's link carries a ring edge's
//         2(N-1)/N x size.
//   mpi   libnbc's reduce-scatter + all-gather moved 1.22x the ring's bound over 2 nodes x 2 ranks
//         (docs/benchmarks-history.md, "The link bound").
//   nccl  NCCL's ring, its default for large messages; every connection keeps NCCL_STEPS (8) receive
//         slots posted ahead, so a ring step costs one link latency (src/graph/tuning.cc).
std::vector<BackendRow> makeRows() {
  std::vector<BackendRow> rows;
  rows.push_back({Backend::kGloo, "gloo", true, "",
                  /*needsCuda=*/false, /*onGpuStream=*/false, /*joinsAlone=*/false, /*pointToPoint=*/true,
                  kEveryType,  // LibTorch 2.x's Gloo sums bfloat16 too
                  /*eagerBytesBetweenHosts=*/0,  // every message waits for the receiver's "ready"
                  nullptr, nullptr,
                  {1.0, false, alwaysRing, "a ring over the ranks (Gloo's ring all-reduce)"}});
  rows.push_back({Backend::kMpi, "mpi", DTBENCH_HAVE_MPI != 0,
                  "this build has no MPI; rebuild with libopenmpi-dev installed and -DDTBENCH_WITH_MPI=ON, or use "
                  "--backend gloo",
                  false, false, /*joinsAlone=*/true, true,
                  kEveryType,  // 16-bit types through a sum of dtbench's own (mpi_communicator.cpp)
                  // the TCP eager limit dtbench sets: Note [Open MPI's eager limit between nodes]
                  int64_t{2} << 20,
                  "OMPI_MCA_coll_libnbc_iallreduce_algorithm", "mpi_iallreduce_algorithm",
                  {1.0, false, libnbcAlgorithm,
                   "a ring over the hosts for a power-of-two world (libnbc's reduce-scatter + all-gather), else a "
                   "ring over the ranks (libnbc's ring)"}});
  rows.push_back({Backend::kNccl, "nccl", DTBENCH_TORCH_HAS_CUDA != 0,  // a GPU is checked for when it is made
                  "this build of LibTorch has no CUDA; nccl needs a CUDA LibTorch (use --backend gloo or mpi here)",
                  /*needsCuda=*/true, /*onGpuStream=*/true, /*joinsAlone=*/true, /*pointToPoint=*/false,
                  kEveryType, 0, nullptr, nullptr,
                  {1.0, true, alwaysRing, "a ring over the ranks (NCCL's ring; receive slots posted ahead)"}});
  return rows;
}

}  // namespace

const std::vector<BackendRow>& backendRows() {
  static const std::vector<BackendRow> rows = makeRows();
  return rows;
}

const BackendRow& backendRow(Backend backend) {
  for (const BackendRow& row : backendRows())
    if (row.backend == backend) return row;
  throw std::logic_error("backendRow: backend " + std::to_string(static_cast<int>(backend)) + " has no row");
}

const common::NamedValues<Backend>& backendNames() {
  static const common::NamedValues<Backend> names = [] {
    std::vector<common::NamedValue<Backend>> values;
    for (const BackendRow& row : backendRows()) values.push_back({row.backend, row.name});
    return common::NamedValues<Backend>({"backend", "backends"}, "--backend", values);
  }();
  return names;
}

void checkBackendAvailable(Backend backend) {
  const BackendRow& row = backendRow(backend);
  if (!row.built) throw common::UsageError(row.notBuilt);
}

void checkBackendRunsTopology(Backend backend, const std::string& topology, bool pointToPoint) {
  const BackendRow& row = backendRow(backend);
  if (!pointToPoint || row.pointToPoint) return;
  std::string others;
  for (const BackendRow& r : backendRows())
    if (r.pointToPoint) others += std::string(others.empty() ? "" : " or ") + r.name;
  throw common::UsageError("--backend " + std::string(row.name) + " cannot run " + topology + ": over " + row.name +
                           " dtbench runs --topology native (and --sync ssgd) only; the point-to-point topologies "
                           "and pair averaging need --backend " + others);
}

bool nativeAllreduceSupports(Backend backend, ElementType type) {
  const std::vector<ElementType>& types = backendRow(backend).nativeTypes;
  return std::find(types.begin(), types.end(), type) != types.end();
}

}  // namespace dtbench::comm
