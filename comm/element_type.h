#pragma once
// ElementType: the element types dtbench communicates (docs/design.md, "comm/", has the table).
// Anything else is rejected by name with the list of supported types. Which backend's own
// all-reduce takes which type is comm/backends/backend.h's nativeAllreduceSupports; point-to-point
// topologies (dtbench reduces) take all three. The mapping to and from LibTorch's scalar types is
// in comm/tensor_element_type.h, so this header, and the report that reads element types from
// config.json, need no LibTorch.

#include <cstdint>
#include <string>
#include <vector>

namespace dtbench::comm {

enum class ElementType { kFloat32, kFloat16, kBFloat16 };

const std::vector<std::string>& elementTypeNames();  // float32 float16 bfloat16

// Throws std::invalid_argument naming the supported types when `name` is not one of them.
ElementType parseElementType(const std::string& name);

std::string name(ElementType type);
int64_t bytesPerElement(ElementType type);

}  // namespace dtbench::comm
