// The report's grouping key (experiments/report/runs/configuration.h): which config.json fields make two
// runs different configurations, and how that shows in the tables' model column.
#include <catch2/catch.hpp>

#include "experiments/report/runs/configuration.h"
#include "experiments/report/runs/run_data.h"

#include <initializer_list>
#include <utility>
#include <string>
#include <tuple>

using dtbench::report::Configuration;
using dtbench::report::configurationOf;
using dtbench::report::RunData;

namespace {

RunData runWith(const nlohmann::json& extra) {
  RunData run;
  nlohmann::json config = {{"model", "resnet18"}, {"dataset", "synthetic"}, {"batch_size", 128}, {"world_size", 2},
                           {"backend", "gloo"},   {"topology", "ring"},      {"sync", "ssgd"}};
  if (!extra.is_null()) config.update(extra);
  dtbench::report::readConfig(run, config);
  return run;
}

}  // namespace

TEST_CASE("mixed precision and channels-last runs are configurations of their own", "[report][configuration]") {
  const Configuration plain = configurationOf(runWith({}));
  const Configuration explicitOff = configurationOf(runWith({{"amp", "off"}, {"channels_last", false}}));
  const Configuration bf16 = configurationOf(runWith({{"amp", "bf16"}}));
  const Configuration fp16 = configurationOf(runWith({{"amp", "fp16"}}));
  const Configuration nhwc = configurationOf(runWith({{"channels_last", true}}));
  const Configuration both = configurationOf(runWith({{"amp", "bf16"}, {"channels_last", true}}));

  CHECK(plain.mode == "ddp");
  CHECK(explicitOff == plain);  // runs from before these fields existed group with float32 runs
  CHECK(bf16.mode == "ddp, amp bf16");
  CHECK(fp16.mode == "ddp, amp fp16");
  CHECK(nhwc.mode == "ddp, channels-last");
  CHECK(both.mode == "ddp, amp bf16, channels-last");
  for (const Configuration* c : {&bf16, &fp16, &nhwc, &both}) {
    CHECK_FALSE(*c == plain);
    CHECK(c->baseline() != plain.baseline());  // a float32 single-rank run is not their T(1)
  }
  CHECK(describe(both) == "resnet18 synthetic B=128 N=2 mode ddp, amp bf16, channels-last gloo/ring ssgd");
}

TEST_CASE("every schema row that changes the step is in the key, and the tables name the ones that differ",
          "[report][configuration]") {
  // A sweep over threads gave one Table 1 row of "runs 2", the median of two setups.
  Configuration one = configurationOf(runWith({{"threads", 1}}));
  Configuration two = configurationOf(runWith({{"threads", 2}}));
  CHECK_FALSE(one == two);
  CHECK(one.baseline() != two.baseline());
  for (const auto& [key, value] : {std::pair<std::string, nlohmann::json>{"optimizer", "adam"},
                                   {"lr", 0.5},
                                   {"phase_timing", "none"},
                                   {"cuda_graph", true},
                                   {"workers", 0},
                                   {"cudnn_benchmark", "off"}})
    CHECK_FALSE(configurationOf(runWith({{key, value}})) == configurationOf(runWith({})));
  // Where runs are kept, how long they go and their seed do not make another configuration.
  CHECK(configurationOf(runWith({{"seed", 7}, {"epochs", 9}, {"data_dir", "/elsewhere"}, {"out", "x"}})) ==
        configurationOf(runWith({})));
  // Only what differs among the report's runs is named.
  Configuration same = configurationOf(runWith({{"threads", 1}}));
  dtbench::report::nameDifferingSettings({&one, &two, &same});
  CHECK(one.mode == "ddp, threads=1");
  CHECK(two.mode == "ddp, threads=2");
  Configuration a = configurationOf(runWith({{"threads", 1}})), b = configurationOf(runWith({{"threads", 1}}));
  dtbench::report::nameDifferingSettings({&a, &b});
  CHECK(a.mode == "ddp");
}
