#pragma once
// parseStrictJson: JSON that a person wrote (a hardware file), read so that nothing in it passes
// unnoticed: a key written twice in one object and any text after the value are errors, where a
// plain parse would keep the last duplicate and stop at the value's end.
//
// Contract: returns the value of `text`; throws std::runtime_error "<where>: ..." naming the
// duplicate key, or the parser's reason (trailing text included) otherwise.

#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::common {

nlohmann::json parseStrictJson(const std::string& text, const std::string& where);

}  // namespace dtbench::common
