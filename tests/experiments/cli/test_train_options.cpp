#include "catch_torch.h"
#include "common/usage_error.h"
#include "run/config_schema.h"
#include "trainer/config.h"
#include "trainer/record/config_json.h"

#include "experiments/cli/train_options.h"
#include "trainer/thread_share.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using dtbench::experiments::parseTrainOptions;
using dtbench::common::UsageError;

namespace {

std::string trainErrorOf(const std::vector<std::string>& args, const dtbench::comm::Environment& env = {}) {
  try {
    parseTrainOptions(args, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("flags land in the configuration", "[cli]") {
  const auto parsed = parseTrainOptions({"--model", "MobileNetV2", "--dataset", "synthetic", "--batch-size", "64",
                                         "--epochs", "3", "--max-steps", "7", "--lr", "0.05", "--seed", "9",
                                         "--threads", "1", "--drop-last", "--no-eval", "--quiet", "--out", "d"});
  REQUIRE_FALSE(parsed.help);
  const auto& c = parsed.config;
  CHECK(c.model == "MobileNetV2");
  CHECK(c.data.dataset == dtbench::trainer::DatasetKind::kSynthetic);
  CHECK(c.data.batchSize == 64);
  CHECK(c.epochs == 3);
  CHECK(c.maxSteps == 7);
  CHECK(c.optimizer.lr == 0.05);
  CHECK(c.optimizer.momentum == 0.9);  // sgd's default
  CHECK(c.seed == 9);
  CHECK(c.threads == 1);
  CHECK(c.data.dropLast);
  CHECK_FALSE(c.evaluate);
  CHECK(c.quiet);
  CHECK(c.outDir == "d");
  CHECK(c.commandLine.front() == "dtbench");
  CHECK(c.commandLine.back() == "d");
}

TEST_CASE("help is not an error", "[cli]") {
  const auto parsed = parseTrainOptions({"--help"});
  CHECK(parsed.help);
  CHECK_THAT(parsed.helpText, Catch::Contains("--batch-size") && Catch::Contains("--max-steps"));
}

TEST_CASE("bad command lines name what to fix", "[cli]") {
  CHECK_THAT(trainErrorOf({"--out", "d", "--batch-size", "0"}), Catch::Contains("--batch-size"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr", "-0.1"}), Catch::Contains("--lr"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--momentum", "-1"}), Catch::Contains("--momentum"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--batch-size", "many"}), Catch::Contains("many"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--frobnicate"}), Catch::Contains("frobnicate"));
  CHECK_THAT(trainErrorOf({"--out", "d", "extra"}), Catch::Contains("extra"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--optimizer", "lamb"}), Catch::Contains("sgd, adam, rmsprop"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--model", "resnet19"}), Catch::Contains("resnet18"));
  CHECK_THAT(trainErrorOf({}), Catch::Contains("--out"));
}

TEST_CASE("a value that does not read as a number names the flag and the value", "[cli]") {
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr", "nan"}),
             Catch::Contains("--lr takes a finite number") && Catch::Contains("'nan'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr=inf"}), Catch::Contains("--lr") && Catch::Contains("'inf'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr", "-inf"}), Catch::Contains("--lr") && Catch::Contains("'-inf'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr", "1e999"}), Catch::Contains("--lr") && Catch::Contains("'1e999'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--lr", "0.1x"}), Catch::Contains("--lr") && Catch::Contains("'0.1x'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--momentum", "nan"}), Catch::Contains("--momentum"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--weight-decay", "inf"}), Catch::Contains("--weight-decay"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--bucket-mb", "nan"}), Catch::Contains("--bucket-mb"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--inject-delay-ms", "inf"}), Catch::Contains("--inject-delay-ms"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--epochs", "1.5"}), Catch::Contains("--epochs takes a whole number, got '1.5'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--seed", "-1"}), Catch::Contains("--seed takes a whole number >= 0, got '-1'"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--batch-size", "many"}),
             Catch::Contains("--batch-size") && Catch::Contains("many"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--no-eval=maybe"}), Catch::Contains("--no-eval takes no value"));
}

TEST_CASE("an empty value is an error naming the flag, not the default", "[cli]") {
  CHECK_THAT(trainErrorOf({"--out", "d", "--download-url", ""}), Catch::Contains("--download-url needs a value"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--data-dir", ""}), Catch::Contains("--data-dir needs a value"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--data-dir="}), Catch::Contains("--data-dir needs a value"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--download-md5", ""}), Catch::Contains("--download-md5"));
  CHECK_THAT(trainErrorOf({"--out", ""}), Catch::Contains("--out needs a value"));
}

TEST_CASE("thread counts are bounded by the cores and a fixed maximum", "[cli]") {
  const int cores = dtbench::trainer::availableCores();
  CHECK_THAT(trainErrorOf({"--out", "d", "--threads", "100000"}),
             Catch::Contains("--threads must be in [0, " + std::to_string(cores) + "]") && Catch::Contains("100000"));
  CHECK_THAT(trainErrorOf({"--out", "d", "--threads", std::to_string(cores + 1)}), Catch::Contains("--threads"));
  CHECK(parseTrainOptions({"--out", "d", "--threads", std::to_string(cores)}).config.threads == cores);
  CHECK_THAT(trainErrorOf({"--out", "d", "--gloo-threads", "100000"}), Catch::Contains("--gloo-threads must be in [1, 64]"));
}

TEST_CASE("unknown backends and topologies are refused on every rank at parse time", "[cli]") {
  for (const char* rank : {"0", "1"}) {
    const dtbench::comm::Environment env{{"RANK", rank}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                         {"MASTER_PORT", "1"}};
    CHECK_THAT(trainErrorOf({"--out", "d", "--backend", "foo"}, env), Catch::Contains("unknown backend 'foo'"));
    CHECK_THAT(trainErrorOf({"--out", "d", "--topology", "foo"}, env), Catch::Contains("unknown topology 'foo'"));
  }
}

TEST_CASE("train takes --message-log into the connection and config.json", "[cli][train][message_log]") {
  const auto off = parseTrainOptions({"--out", "d"});
  CHECK(off.config.comm.connection.messageLog.empty());
  CHECK(dtbench::run::settingsJson(off.config)["message_log"].is_null());
  const auto on = parseTrainOptions({"--out", "d", "--message-log", "logs"});
  CHECK(on.config.comm.connection.messageLog == "logs");
  CHECK(dtbench::run::settingsJson(on.config)["message_log"] == "logs");
  CHECK(parseTrainOptions({"--out", "d"}, {{"DTBENCH_MESSAGE_LOG", "env-logs"}}).config.comm.connection.messageLog ==
        "env-logs");
}

TEST_CASE("every flag of dtbench train --help is a row of the schema, with the row's default", "[cli][schema]") {
  const auto parsed = parseTrainOptions({"--help"});
  REQUIRE(parsed.help);
  // An option's line is "  [-h, ]--flag [arg]   its help", wrapped onto deeper-indented lines: join them.
  std::vector<std::pair<std::string, std::string>> options;  // flag, its whole text
  const std::regex optionLine(R"(^ {2,}(?:-\w, )?(--[\w-]+)(?: \w+)?(?: {2,}(.*))?$)");
  std::istringstream lines(parsed.helpText);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, optionLine)) {
      options.emplace_back(m[1].str(), m[2].str());
    } else if (!options.empty() && line.size() > 20 && line.find_first_not_of(' ') > 20) {
      options.back().second += " " + line.substr(line.find_first_not_of(' '));
    }
  }
  // cxxopts wraps long words too: compare without any space.
  const auto squeezed = [](std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    return text;
  };
  for (auto& option : options) option.second = squeezed(option.second);
  REQUIRE(options.size() > 40);
  for (const auto& [flag, text] : options) {
    INFO(flag << ": " << text);
    if (flag == "--help") continue;
    const dtbench::run::Setting* row = dtbench::run::findSettingByFlag(flag);
    REQUIRE(row != nullptr);
    // The row's help, then cxxopts' "(default: X)" with the row's default, where it shows one.
    const std::string help = squeezed(row->help);
    CHECK(text.rfind(help, 0) == 0);
    const std::string rest = text.substr(std::min(help.size(), text.size()));
    const std::string shown = row->defaultText().empty() ? "" : squeezed("(default: " + row->defaultText() + ")");
    CHECK(rest.find("(default:") == (shown.empty() ? std::string::npos : rest.size() - shown.size()));
    if (!shown.empty()) CHECK(rest.substr(rest.size() - std::min(rest.size(), shown.size())) == shown);
  }
  // And every row with a flag is in the help.
  for (const dtbench::run::Setting& row : dtbench::run::settings()) {
    if (row.flag.empty()) continue;
    INFO(row.flag);
    CHECK(std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == row.flag; }));
  }
}
