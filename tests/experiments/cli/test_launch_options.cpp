#include "catch_torch.h"
#include "common/usage_error.h"
#include "option_test_helpers.h"
#include "experiments/cli/launch_options.h"

#include <chrono>
#include <string>
#include <vector>

using dtbench::common::UsageError;
using dtbench::experiments::LaunchCommandLine;
using dtbench::experiments::LaunchOptions;
using dtbench::experiments::parseLaunchOptions;

namespace {

std::string launchErrorOf(const std::vector<std::string>& args) {
  return dtbench::test::usageErrorOf([](const auto& a) { return parseLaunchOptions(a); }, args);
}

}  // namespace

TEST_CASE("launch's defaults are LaunchOptions' own, and --help shows them", "[cli][launch]") {
  const LaunchOptions defaults;
  const LaunchCommandLine o = parseLaunchOptions({"-n", "3", "--", "/bin/echo", "--", "x"});
  CHECK(o.launch.worldSize == 3);
  CHECK(o.launch.ranksPerHost == defaults.ranksPerHost);
  CHECK(o.launch.masterPort == defaults.masterPort);
  CHECK(o.launch.grace == defaults.grace);
  CHECK(o.launch.command == std::vector<std::string>{"/bin/echo", "--", "x"});
  const std::string help = parseLaunchOptions({"--help"}).helpText;
  CHECK_THAT(help, Catch::Contains("--grace SECONDS") && Catch::Contains("(default: 5)"));
  CHECK_THAT(help, Catch::Contains("-n, --nproc N") && Catch::Contains("--ranks-per-host K"));
  const LaunchCommandLine given =
      parseLaunchOptions({"--nproc", "4", "--ranks-per-host", "2", "--grace", "9", "--master-port", "2000", "--", "x"});
  CHECK(given.launch.worldSize == 4);
  CHECK(given.launch.ranksPerHost == 2);
  CHECK(given.launch.grace == std::chrono::seconds(9));
  CHECK(given.launch.masterPort == 2000);
}

TEST_CASE("launch's errors name the flag and its range", "[cli][launch]") {
  CHECK_THAT(launchErrorOf({"--grace", "2147484", "-n", "1", "--", "x"}),
             Catch::Contains("--grace needs a whole number from 1 to 86400, got '2147484'"));
  CHECK_THAT(launchErrorOf({"--master-port", "70000", "-n", "1", "--", "x"}),
             Catch::Contains("--master-port needs a whole number from 1 to 65535, got '70000'"));
  CHECK_THAT(launchErrorOf({"-n", "0", "--", "x"}), Catch::Contains("--nproc needs a whole number from 1"));
  CHECK_THAT(launchErrorOf({"--", "x"}), Catch::Contains("--nproc N is required"));
  CHECK_THAT(launchErrorOf({"-n", "2"}), Catch::Contains("needs the command after '--'"));
  CHECK_THAT(launchErrorOf({"-n", "2", "--"}), Catch::Contains("needs the command after '--'"));
  CHECK_THAT(launchErrorOf({"-n", "two", "--", "x"}), Catch::Contains("'two'"));
}
