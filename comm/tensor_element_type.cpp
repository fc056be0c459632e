#include "comm/tensor_element_type.h"

#include <stdexcept>
#include <string>

#include "common/lists.h"

namespace dtbench::comm {

ElementType elementTypeOf(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float: return ElementType::kFloat32;
    case c10::ScalarType::Half: return ElementType::kFloat16;
    case c10::ScalarType::BFloat16: return ElementType::kBFloat16;
    default:
      throw std::invalid_argument(std::string("cannot communicate tensors of type ") + c10::toString(type) +
                                  "; supported: " + common::joinList(elementTypeNames()));
  }
}

c10::ScalarType scalarType(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return c10::ScalarType::Float;
    case ElementType::kFloat16: return c10::ScalarType::Half;
    case ElementType::kBFloat16: return c10::ScalarType::BFloat16;
  }
  throw std::logic_error("unreachable ElementType");
}

}  // namespace dtbench::comm
