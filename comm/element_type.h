#pragma once
// ElementType: the element types dtbench communicates, and which backend accepts which
// (DESIGN.md, comm/). Anything else is rejected by name with the list of supported types.
//
//   backend       float32  float16  bfloat16
//   gloo native   yes      yes      no (Gloo rejects it)
//   mpi native    yes      no       no (Open MPI has no 16-bit float type)
//   nccl native   yes      yes      yes
//   point-to-point topologies (dtbench reduces): all three

#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

namespace dtbench::comm {

enum class ElementType { kFloat32, kFloat16, kBFloat16 };

const std::vector<std::string>& elementTypeNames();  // float32 float16 bfloat16

// Throws std::invalid_argument naming the supported types when `name` is not one of them.
ElementType parseElementType(const std::string& name);
ElementType elementTypeOf(c10::ScalarType type);  // throws for unsupported tensor types

std::string name(ElementType type);
int64_t bytesPerElement(ElementType type);
c10::ScalarType scalarType(ElementType type);

// Whether `backend`'s own all-reduce (topology "native") takes `type`; point-to-point topologies
// take every ElementType. Throws std::invalid_argument for an unknown backend name.
bool nativeAllreduceSupports(const std::string& backend, ElementType type);

}  // namespace dtbench::comm
