// The backends' rows (comm/backends/backend.h): one per Backend, names from the rows, the build's
// flags in `built`, and the checks that read them.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "comm/backends/backend.h"
#include "comm/topology/native_models.h"
#include "dtbench/build_config.h"

using namespace dtbench::comm;

TEST_CASE("every backend has one row, and --backend's names are the rows' names", "[backend]") {
  std::set<std::string> names;
  for (const BackendRow& row : backendRows()) {
    CHECK(names.insert(row.name).second);
    CHECK(&backendRow(row.backend) == &row);
    CHECK(backendNames().parse(row.name) == row.backend);
    CHECK(std::string(name(row.backend)) == row.name);
    CHECK(!row.nativeTypes.empty());
    CHECK(row.native.efficiency > 0);
    CHECK(nativeTopology(row.backend, 4).name() == row.native.modelledAs(4));
    CHECK((row.built || std::string(row.notBuilt).find("--backend") != std::string::npos));
    CHECK((row.tuningVariable == nullptr) == (row.recordedAs == nullptr));
  }
  CHECK(backendNames().names() == std::vector<std::string>{"gloo", "mpi", "nccl"});
  CHECK_THROWS_WITH(backendNames().parse("ucc"), Catch::Contains("unknown backend 'ucc'") &&
                                                     Catch::Contains("gloo, mpi, nccl"));
}

TEST_CASE("a row's build facts follow the build, and an unbuilt backend is refused with its row's words",
          "[backend]") {
  CHECK(backendRow(Backend::kGloo).built);
  CHECK(backendRow(Backend::kMpi).built == (DTBENCH_HAVE_MPI != 0));
  CHECK(backendRow(Backend::kNccl).built == (DTBENCH_TORCH_HAS_CUDA != 0));
  for (const BackendRow& row : backendRows()) {
    if (row.built)
      CHECK_NOTHROW(checkBackendAvailable(row.backend));
    else
      CHECK_THROWS_WITH(checkBackendAvailable(row.backend), row.notBuilt);
  }
}

TEST_CASE("what each backend runs: the rows' capabilities and the checks that read them", "[backend]") {
  const BackendRow& nccl = backendRow(Backend::kNccl);
  CHECK((nccl.needsCuda && nccl.onGpuStream && nccl.joinsAlone && !nccl.pointToPoint));
  CHECK((!backendRow(Backend::kGloo).joinsAlone && backendRow(Backend::kMpi).joinsAlone));
  CHECK(backendRow(Backend::kMpi).eagerBytesBetweenHosts == 2 << 20);
  CHECK(backendRow(Backend::kGloo).eagerBytesBetweenHosts == 0);
  CHECK(nativeTopology(Backend::kMpi, 4).name() == "hierarchical");
  CHECK(nativeTopology(Backend::kMpi, 6).name() == "ring");
  CHECK(nativeModel(Backend::kNccl).postedAhead);
  CHECK_NOTHROW(checkBackendRunsTopology(Backend::kGloo, "--topology tree", true));
  CHECK_NOTHROW(checkBackendRunsTopology(Backend::kNccl, "--topology native", false));
  // The refusal names the backends that do run it, from their rows.
  CHECK_THROWS_WITH(checkBackendRunsTopology(Backend::kNccl, "--topology tree", true),
                    Catch::Contains("--backend nccl cannot run --topology tree") &&
                        Catch::Contains("need --backend gloo or mpi"));
}
