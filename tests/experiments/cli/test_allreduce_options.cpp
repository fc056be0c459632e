#include "catch_torch.h"
#include "common/usage_error.h"
#include "experiments/allreduce/allreduce_benchmark.h"
#include "experiments/cli/allreduce_options.h"
#include "experiments/cli/rank_options.h"
#include "trainer/thread_share.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using dtbench::common::UsageError;
using dtbench::experiments::AllreduceSettings;
using dtbench::experiments::checkOutputsWritable;
using dtbench::experiments::parseAllreduceOptions;
using dtbench::experiments::sweepCounts;

namespace {

std::string allreduceErrorOf(const std::vector<std::string>& args, const dtbench::comm::Environment& env = {}) {
  try {
    parseAllreduceOptions(args, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a byte sweep that cannot end is refused, not run", "[cli][allreduce]") {
  CHECK_THAT(allreduceErrorOf({"-b", "0", "-e", "8K"}), Catch::Contains("--min-bytes must be at least 1"));
  CHECK_THAT(allreduceErrorOf({"--min-bytes", "0"}), Catch::Contains("--counts 0"));
  // A factor one ulp above 1 grows 4K by one ulp per row: ~10^16 rows.
  CHECK_THAT(allreduceErrorOf({"-f", "1.0000000000000002"}), Catch::Contains("raise --factor"));
  CHECK(allreduceErrorOf({"-b", "1", "-e", "8K"}).empty());
  AllreduceSettings s;
  s.minBytes = 0;
  s.maxBytes = 8192;
  CHECK_THROWS_AS(sweepCounts(s, 4), UsageError);
  s.minBytes = 1;
  CHECK(sweepCounts(s, 1).size() == 14);  // 1, 2, 4, ..., 8192
}

TEST_CASE("allreduce bounds its thread counts", "[cli][allreduce]") {
  const int cores = dtbench::trainer::availableCores();
  CHECK_THAT(allreduceErrorOf({"--threads", "100000"}),
             Catch::Contains("--threads must be in [1, " + std::to_string(cores) + "]") && Catch::Contains("100000"));
  CHECK_THAT(allreduceErrorOf({"--threads", std::to_string(cores + 1)}), Catch::Contains("--threads"));
  CHECK(allreduceErrorOf({"--threads", std::to_string(cores)}).empty());
  CHECK_THAT(allreduceErrorOf({"--gloo-threads", "100000"}), Catch::Contains("--gloo-threads must be in [1, 64], got 100000"));
  CHECK(allreduceErrorOf({"--gloo-threads", std::to_string(dtbench::comm::kMaxGlooThreads)}).empty());
}

TEST_CASE("empty lists and empty items name their flag", "[cli][allreduce]") {
  CHECK_THAT(allreduceErrorOf({"--counts", ",,"}), Catch::Contains("--counts") && Catch::Contains("',,'"));
  CHECK_THAT(allreduceErrorOf({"--counts", "1,,2"}), Catch::Contains("--counts"));
  CHECK_THAT(allreduceErrorOf({"--counts", ""}), Catch::Contains("--counts needs a value"));
  CHECK_THAT(allreduceErrorOf({"--topology", "ring,,tree"}), Catch::Contains("--topology"));
  CHECK_THAT(allreduceErrorOf({"--dtype", ","}), Catch::Contains("--dtype"));
  CHECK_THAT(allreduceErrorOf({"--csv", ""}), Catch::Contains("--csv needs a value"));
  CHECK(parseAllreduceOptions({"--counts", "0,1,13"}, {}).settings.counts == std::vector<int64_t>{0, 1, 13});
}

TEST_CASE("numbers that are not numbers name the flag and the value", "[cli][allreduce]") {
  CHECK_THAT(allreduceErrorOf({"--factor", "nan"}),
             Catch::Contains("--factor takes a finite number") && Catch::Contains("'nan'"));
  CHECK_THAT(allreduceErrorOf({"-f", "inf"}), Catch::Contains("-f (--factor)") && Catch::Contains("'inf'"));
  CHECK_THAT(allreduceErrorOf({"--factor", "2x"}), Catch::Contains("--factor") && Catch::Contains("'2x'"));
  CHECK_THAT(allreduceErrorOf({"--iters", "1.5"}), Catch::Contains("--iters takes a whole number, got '1.5'"));
  CHECK_THAT(allreduceErrorOf({"--timeout", "inf"}), Catch::Contains("--timeout") && Catch::Contains("'inf'"));
  CHECK_THAT(allreduceErrorOf({"-b", "nan"}), Catch::Contains("--min-bytes") && Catch::Contains("'nan'"));
  CHECK_THAT(allreduceErrorOf({"-e", "inf"}), Catch::Contains("--max-bytes") && Catch::Contains("'inf'"));
  CHECK_THAT(allreduceErrorOf({"--counts", "1.5"}), Catch::Contains("--counts") && Catch::Contains("'1.5'"));
  CHECK_THAT(allreduceErrorOf({"--segment-bytes", "1e300G"}), Catch::Contains("--segment-bytes"));
}

TEST_CASE("allreduce refuses unknown backends and topologies on every rank at parse time", "[cli][allreduce]") {
  for (const char* rank : {"0", "1"}) {
    const dtbench::comm::Environment env{{"RANK", rank},
                                         {"WORLD_SIZE", "2"},
                                         {"MASTER_ADDR", "127.0.0.1"},
                                         {"MASTER_PORT", "1"}};
    CHECK_THAT(allreduceErrorOf({"--backend", "foo"}, env), Catch::Contains("unknown backend 'foo'"));
    CHECK_THAT(allreduceErrorOf({"--topology", "foo"}, env), Catch::Contains("unknown topology 'foo'"));
    CHECK_THAT(allreduceErrorOf({"--topology", "ring,foo"}, env), Catch::Contains("unknown topology 'foo'"));
  }
}

TEST_CASE("outputs that cannot be written are refused before the benchmark", "[cli][allreduce]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dtbench-outputs-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  AllreduceSettings s;
  s.csvPath = (dir / "missing" / "rows.csv").string();
  CHECK_THROWS_WITH(checkOutputsWritable(s), Catch::Contains("--csv " + s.csvPath + " cannot be written"));
  s.csvPath.clear();
  s.timelinePath = dir.string();  // a directory
  CHECK_THROWS_WITH(checkOutputsWritable(s), Catch::Contains("--timeline"));
  // A writable path: an existing file keeps its contents, a new one is not left behind.
  s.timelinePath.clear();
  s.jsonPath = (dir / "old.json").string();
  std::ofstream(s.jsonPath) << "earlier rows\n";
  s.trafficPath = (dir / "new.csv").string();
  CHECK_NOTHROW(checkOutputsWritable(s));
  std::ifstream old(s.jsonPath);
  std::string line;
  std::getline(old, line);
  CHECK(line == "earlier rows");
  CHECK_FALSE(std::filesystem::exists(s.trafficPath));
  std::filesystem::remove_all(dir);
}

TEST_CASE("message log directory comes from the flag or DTBENCH_MESSAGE_LOG", "[cli][allreduce][message_log]") {
  using dtbench::experiments::parseAllreduceOptions;
  CHECK(parseAllreduceOptions({}, {}).ranks.connection.messageLog.empty());
  CHECK(parseAllreduceOptions({}, {{"DTBENCH_MESSAGE_LOG", "/tmp/from-env"}}).ranks.connection.messageLog ==
        "/tmp/from-env");
  CHECK(parseAllreduceOptions({"--message-log", "logs"}, {{"DTBENCH_MESSAGE_LOG", "/tmp/from-env"}})
            .ranks.connection.messageLog == "logs");
}

TEST_CASE("allreduce timing is each (the default) or loop", "[cli][allreduce]") {
  CHECK_FALSE(parseAllreduceOptions({}, {}).settings.loopTiming);
  CHECK(parseAllreduceOptions({"--timing", "loop"}, {}).settings.loopTiming);
  CHECK_FALSE(parseAllreduceOptions({"--timing", "each"}, {}).settings.loopTiming);
  CHECK(allreduceErrorOf({"--timing", "nccl"}) == "--timing must be each or loop, got 'nccl'");
}

TEST_CASE("allreduce's defaults are the settings' own, and --help shows them", "[cli][allreduce]") {
  const AllreduceSettings defaults;
  const dtbench::experiments::AllreduceOptions o = parseAllreduceOptions({}, {});
  CHECK(o.settings.minBytes == defaults.minBytes);
  CHECK(o.settings.maxBytes == defaults.maxBytes);
  CHECK(o.settings.factor == defaults.factor);
  CHECK(o.settings.iters == defaults.iters);
  CHECK(o.settings.warmupIters == defaults.warmupIters);
  CHECK(o.settings.threads == defaults.threads);
  CHECK(o.settings.loopTiming == defaults.loopTiming);
  CHECK(o.settings.check == defaults.check);
  CHECK_FALSE(o.settings.segmentBytes.has_value());
  REQUIRE(o.settings.topologies.size() == 1);
  CHECK(o.settings.topologies[0].name() == defaults.topologies[0].name());
  CHECK(o.ranks.connection.backend == dtbench::comm::BackendOptions{}.backend);
  const std::string help = parseAllreduceOptions({"--help"}, {}).helpText;
  for (const char* shown : {"(default: 4K)", "(default: 16M)", "(default: 2)", "(default: 20)", "(default: 5)",
                            "(default: each)", "(default: native)", "(default: float32)", "(default: auto)",
                            "(default: gloo)"})
    CHECK_THAT(help, Catch::Contains(shown));
  // A given value goes through its row: bytes with suffixes, lists, auto.
  const dtbench::experiments::AllreduceOptions given =
      parseAllreduceOptions({"-b", "1K", "-e", "2M", "--segment-bytes", "64K", "--dtype", "float32,bfloat16",
                             "--topology", "ring,tree", "--iters", "3", "--warmup-iters", "0", "--check"},
                            {});
  CHECK(given.settings.minBytes == 1024);
  CHECK(given.settings.maxBytes == 2 << 20);
  CHECK(given.settings.segmentBytes == 64 * 1024);
  CHECK(given.settings.dtypes.size() == 2);
  CHECK(given.settings.topologies.size() == 2);
  CHECK(given.settings.iters == 3);
  CHECK(given.settings.warmupIters == 0);
  CHECK(given.settings.check);
  CHECK(allreduceErrorOf({"--iters", "0"}) == "--iters must be at least 1, got 0");
  CHECK(allreduceErrorOf({"--warmup-iters", "-1"}) == "--warmup-iters must be at least 0, got -1");
}
