// common::parseStrictJson: a duplicate key or trailing text is an error naming where.

#include <catch2/catch.hpp>

#include "common/strict_json.h"

using dtbench::common::parseStrictJson;

TEST_CASE("strict JSON refuses a key written twice and text after the value", "[common][json]") {
  const nlohmann::json ok = parseStrictJson(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]})", "f.json");
  CHECK(ok["b"]["a"] == 2);
  CHECK(ok["c"][1]["a"] == 4);
  CHECK_THROWS_WITH(parseStrictJson(R"({"a": 1, "a": 2})", "f.json"),
                    "f.json: key 'a' appears twice in one object; write each key once");
  CHECK_THROWS_WITH(parseStrictJson(R"({"x": {"b": 1, "b": 1}})", "f.json"), Catch::Contains("key 'b' appears twice"));
  CHECK_THROWS_WITH(parseStrictJson(R"({"a": 1} {"b": 2})", "f.json"), Catch::StartsWith("f.json: not valid JSON"));
  CHECK_THROWS_WITH(parseStrictJson("{", "f.json"), Catch::StartsWith("f.json: not valid JSON"));
}
