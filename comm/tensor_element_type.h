#pragma once
// The ElementType (comm/element_type.h) of a tensor's scalar type, and back: the one place where
// the communication layer's element types meet LibTorch's.

#include <c10/core/ScalarType.h>

#include "comm/element_type.h"

namespace dtbench::comm {

ElementType elementTypeOf(c10::ScalarType type);  // throws std::invalid_argument naming the supported types
c10::ScalarType scalarType(ElementType type);

}  // namespace dtbench::comm
