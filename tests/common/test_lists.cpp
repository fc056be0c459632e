#include <catch2/catch.hpp>

#include "common/lists.h"

#include <string>
#include <vector>

using dtbench::common::joinList;
using dtbench::common::splitList;

TEST_CASE("splitList keeps the non-empty items in order", "[lists]") {
  CHECK(splitList("ring,tree") == std::vector<std::string>{"ring", "tree"});
  CHECK(splitList("a,,b,") == std::vector<std::string>{"a", "b"});
  CHECK(splitList("").empty());
  CHECK(splitList(",,").empty());
  CHECK(splitList("one") == std::vector<std::string>{"one"});
}

TEST_CASE("joinList puts the separator between items only", "[lists]") {
  CHECK(joinList({"sgd", "adam", "rmsprop"}) == "sgd, adam, rmsprop");
  CHECK(joinList({"1", "2"}, " ") == "1 2");
  CHECK(joinList({"only"}) == "only");
  CHECK(joinList({}).empty());
  CHECK(splitList(joinList({"x", "y", "z"}, ",")) == std::vector<std::string>{"x", "y", "z"});
}
