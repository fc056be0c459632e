#include "comm/element_type.h"

#include <stdexcept>

#include "common/lists.h"

namespace dtbench::comm {

const std::vector<std::string>& elementTypeNames() {
  static const std::vector<std::string> names{"float32", "float16", "bfloat16"};
  return names;
}

ElementType parseElementType(const std::string& typeName) {
  if (typeName == "float32") return ElementType::kFloat32;
  if (typeName == "float16") return ElementType::kFloat16;
  if (typeName == "bfloat16") return ElementType::kBFloat16;
  throw std::invalid_argument("unsupported element type '" + typeName +
                              "'; supported: " + common::joinList(elementTypeNames()));
}

std::string name(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat16: return "float16";
    case ElementType::kBFloat16: return "bfloat16";
  }
  throw std::logic_error("unreachable ElementType");
}

int64_t bytesPerElement(ElementType type) { return type == ElementType::kFloat32 ? 4 : 2; }

}  // namespace dtbench::comm
