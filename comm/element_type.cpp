#include "comm/element_type.h"

#include <stdexcept>

namespace dtbench::comm {
namespace {

std::string supportedList() { return "float32, float16, bfloat16"; }

}  // namespace

const std::vector<std::string>& elementTypeNames() {
  static const std::vector<std::string> names{"float32", "float16", "bfloat16"};
  return names;
}

ElementType parseElementType(const std::string& typeName) {
  if (typeName == "float32") return ElementType::kFloat32;
  if (typeName == "float16") return ElementType::kFloat16;
  if (typeName == "bfloat16") return ElementType::kBFloat16;
  throw std::invalid_argument("unsupported element type '" + typeName + "'; supported: " + supportedList());
}

ElementType elementTypeOf(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float: return ElementType::kFloat32;
    case c10::ScalarType::Half: return ElementType::kFloat16;
    case c10::ScalarType::BFloat16: return ElementType::kBFloat16;
    default:
      throw std::invalid_argument(std::string("cannot communicate tensors of type ") + c10::toString(type) +
                                  "; supported: " + supportedList());
  }
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

c10::ScalarType scalarType(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return c10::ScalarType::Float;
    case ElementType::kFloat16: return c10::ScalarType::Half;
    case ElementType::kBFloat16: return c10::ScalarType::BFloat16;
  }
  throw std::logic_error("unreachable ElementType");
}

bool nativeAllreduceSupports(const std::string& backend, ElementType type) {
  if (backend == "gloo") return type != ElementType::kBFloat16;
  if (backend == "mpi") return type == ElementType::kFloat32;
  if (backend == "nccl") return true;
  throw std::invalid_argument("unknown backend '" + backend + "'; valid backends: gloo, mpi, nccl");
}

}  // namespace dtbench::comm
