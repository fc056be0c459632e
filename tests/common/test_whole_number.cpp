#include <catch2/catch.hpp>

#include <string>

#include "common/whole_number.h"

using dtbench::common::wholeNumber;

TEST_CASE("wholeNumber reads decimal integers and nothing else", "[whole_number]") {
  CHECK(wholeNumber("0") == 0);
  CHECK(wholeNumber("42") == 42);
  CHECK(wholeNumber("-7") == -7);
  CHECK(wholeNumber("007") == 7);
  CHECK(wholeNumber("9223372036854775807") == 9223372036854775807LL);
  CHECK(wholeNumber("-9223372036854775808") == (-9223372036854775807LL - 1));
  for (const std::string bad : {"", " 5", "5 ", "+5", "5x", "x5", "1e3", "1.0", "-", "0x10", "9223372036854775808",
                                "-9223372036854775809", "1,000"}) {
    INFO("text '" << bad << "'");
    CHECK_FALSE(wholeNumber(bad).has_value());
  }
}
