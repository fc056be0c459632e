#include "catch_torch.h"
#include "common/named_values.h"

#include "comm/backends/backend.h"
#include "comm/backends/library_versions.h"
#include "comm/element_type.h"
#include "comm/tensor_element_type.h"
#include "dtbench/build_config.h"

#include <string>
#include <vector>

using namespace dtbench::comm;

TEST_CASE("element types round-trip through names and sizes and tensor types", "[element_type]") {
  for (const std::string& n : elementTypeNames()) {
    const ElementType t = parseElementType(n);
    CHECK(name(t) == n);
    CHECK(elementTypeOf(scalarType(t)) == t);
  }
  CHECK(bytesPerElement(ElementType::kFloat32) == 4);
  CHECK(bytesPerElement(ElementType::kFloat16) == 2);
  CHECK(bytesPerElement(ElementType::kBFloat16) == 2);
}

TEST_CASE("unsupported element types are rejected by name", "[element_type]") {
  CHECK_THROWS_WITH(parseElementType("float64"), Catch::Contains("float64") && Catch::Contains("float32, float16, bfloat16"));
  CHECK_THROWS_WITH(elementTypeOf(c10::ScalarType::Long), Catch::Contains("Long") && Catch::Contains("bfloat16"));
}

TEST_CASE("native all-reduce support follows the design's table", "[element_type]") {
  CHECK(nativeAllreduceSupports(Backend::kGloo, ElementType::kFloat16));
  CHECK(nativeAllreduceSupports(Backend::kGloo, ElementType::kBFloat16));
  CHECK(nativeAllreduceSupports(Backend::kMpi, ElementType::kFloat32));
  CHECK(nativeAllreduceSupports(Backend::kMpi, ElementType::kFloat16));  // a sum of dtbench's own
  CHECK(nativeAllreduceSupports(Backend::kMpi, ElementType::kBFloat16));
  CHECK(nativeAllreduceSupports(Backend::kNccl, ElementType::kBFloat16));
  CHECK_THROWS_WITH(backendNames().parse("grpc"), Catch::Contains("gloo, mpi, nccl"));
}

TEST_CASE("the MPI library version is known exactly when the build has MPI", "[library_versions]") {
  CHECK(mpiLibraryVersion().empty() == (DTBENCH_HAVE_MPI == 0));
}
