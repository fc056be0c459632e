#include "experiments/cli/predict_options.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>
#include <system_error>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "comm/bucket_layout.h"
#include "comm/topology/registry.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"
#include "experiments/predict/prediction_table_names.h"
#include "experiments/predict/rate_axis.h"
#include "experiments/predict/step_model.h"
#include "run/config_schema.h"
#include "run/settings.h"

namespace dtbench::experiments {

using common::UsageError;

namespace {

constexpr size_t kMostWorlds = 1024;  // world sizes one --world may list

int worldValue(const std::string& word) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == word.size() && v > predict::kLargestWorld)
    throw UsageError("--world: " + word + " is more ranks than predict models (at most " +
                     std::to_string(predict::kLargestWorld) + ")");
  if (used != word.size() || v < 1)
    throw UsageError("--world: '" + word + "' is not a world size (a whole number from 1 to " +
                     std::to_string(predict::kLargestWorld) + "), e.g. --world 2,4,...,64");
  return static_cast<int>(v);
}

// --world and --hardware have no default for an empty value to fall back to (the common parse says
// "leave the flag out for its default"): a prediction requires both, so say that and their form.
void refuseEmptyRequired(const std::vector<std::string>& args) {
  const std::pair<const char*, const char*> required[] = {
      {"--world", "--world is required: the world sizes to predict, comma-separated, e.g. --world 2,4,...,64"},
      {"--hardware", "--hardware is required: the hardware file (JSON; docs/predict.md, \"The hardware file\"), e.g. "
                     "--hardware experiments/predict/systems/dgx-h100-ndr400.json"}};
  for (size_t i = 0; i < args.size(); ++i)
    for (const auto& [flag, what] : required)
      if ((args[i] == flag && i + 1 < args.size() && args[i + 1].empty()) || args[i] == std::string(flag) + "=")
        throwUsage("predict", std::string(flag) + " got an empty value; " + what);
}

}  // namespace

std::vector<int> parseWorldList(const std::string& text) {
  // Split by hand: an empty entry ("2,,4", a trailing comma) is a mistake to name, not to skip.
  std::vector<std::string> words;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    words.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (words.size() == 1 && words[0].empty()) throw UsageError("--world needs at least one world size");
  std::vector<int> worlds;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty()) throw UsageError("--world '" + text + "' has an empty entry; e.g. --world 2,4,...,64");
    if (words[i] != "...") {
      worlds.push_back(worldValue(words[i]));
      continue;
    }
    if (worlds.size() < 2 || i + 1 >= words.size() || words[i + 1] == "...")
      throw UsageError("--world: '...' needs two sizes before it and one after, e.g. 2,4,...,64");
    const int a = worlds[worlds.size() - 2], b = worlds.back(), last = worldValue(words[i + 1]);
    if (b <= a) throw UsageError("--world: the sizes before '...' must increase");
    if (last < b)
      throw UsageError("--world '" + text + "': the size after '...' (" + std::to_string(last) +
                       ") is below the ones before it (" + std::to_string(b) + "); it ends the progression, e.g. "
                       "2,4,...,64");
    const bool ratio = b % a == 0 && b / a > 1;
    long long next = ratio ? 1LL * b * (b / a) : 2LL * b - a;
    for (; next < last; next = ratio ? next * (b / a) : next + (b - a)) {
      worlds.push_back(static_cast<int>(next));
      if (worlds.size() > kMostWorlds) break;
    }
    // The size after '...' must be a term: "2,4,...,100" would otherwise end 64,100, a world the
    // progression never names (refused below if the list is too long anyway).
    if (worlds.size() <= kMostWorlds && last != b && next != last) {
      const std::string below = std::to_string(worlds.back()), above = std::to_string(next);
      const std::string start = std::to_string(a) + "," + std::to_string(b) + ",...";
      throw UsageError("--world '" + text + "': " + std::to_string(last) + " is not a term of the progression " +
                       start + " (the nearest are " + below + " and " + above + "): end it at one of them, e.g. " +
                       start + "," + below + ", or name " + std::to_string(last) + " after it: " + start + "," + below +
                       "," + std::to_string(last));
    }
  }
  if (worlds.size() > kMostWorlds)
    throw UsageError("--world '" + text + "' lists more than " + std::to_string(kMostWorlds) +
                     " world sizes; each is a prediction of its own: list fewer, e.g. a ratio 2,4,...,65536");
  std::set<int> seen;
  for (const int world : worlds)
    if (!seen.insert(world).second)
      throw UsageError("--world '" + text + "' names world " + std::to_string(world) + " twice; name each world once");
  return worlds;
}

namespace {

using PredictRow = OptionRow<PredictOptions>;

// A text flag that sets one string of PredictOptions.
PredictRow predictTextRow(const std::string& name, const std::string& help, std::string PredictOptions::*field) {
  return {name, "", help, ValueKind::kText, nullptr,
          [field](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.*field = optionText(v); }};
}

// The value given to `setting`'s flag, in config.json's terms (what the row's set takes).
nlohmann::json settingJson(const run::Setting& setting, const cxxopts::OptionValue& v) {
  switch (setting.type) {
    case run::ValueType::kSwitch: return setting.switchValue;
    case run::ValueType::kInteger:
    case run::ValueType::kCount: return static_cast<int64_t>(v.as<long long>());
    case run::ValueType::kNumber: return v.as<double>();
    default: return optionText(v);
  }
}

ValueKind settingKind(const run::Setting& setting) {
  switch (setting.type) {
    case run::ValueType::kSwitch: return ValueKind::kSwitch;
    case run::ValueType::kInteger:
    case run::ValueType::kCount: return ValueKind::kInteger;
    case run::ValueType::kNumber: return ValueKind::kNumber;
    default: return ValueKind::kText;
  }
}

// `value` through train's row of `setting` (run/config_schema.h): its parse and its rule, each error
// naming the flag; the configuration it set.
run::RunConfig throughSetting(const run::Setting& setting, const nlohmann::json& value) {
  run::RunConfig config;
  setting.set(config, value);
  run::checkRule(setting, config);
  return config;
}

// A what-if flag that is dtbench train's `flag`: the type, parse and rule of train's row, predict's
// help; `take` copies the value out of the configuration the row set.
PredictRow settingRow(const std::string& flag, const std::string& help,
                      void (*take)(PredictOptions&, const run::RunConfig&)) {
  const run::Setting& setting = *run::findSettingByFlag(flag);
  return {setting.flag.substr(2), "", help, settingKind(setting), nullptr,
          [&setting, take](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) {
            take(o, throughSetting(setting, settingJson(setting, v)));
          }};
}

// The values of a what-if flag that --vary compares along its axis: comma-separated, each once, each
// through train's row of the flag. Without --vary one value only (checkPrediction).
std::vector<run::RunConfig> whatIfValues(const std::string& flag, const std::string& text) {
  const std::vector<std::string> values = common::splitList(text);
  if (values.empty()) throwUsage("predict", flag + " got no value");
  std::set<std::string> seen;
  std::vector<run::RunConfig> configs;
  for (const std::string& v : values) {
    if (!seen.insert(v).second) throwUsage("predict", flag + " '" + text + "' names " + v + " twice");
    configs.push_back(throughSetting(*run::findSettingByFlag(flag), v));
  }
  return configs;
}

// Predict's flags up to --describe-model, in --help's order.
const std::vector<PredictRow>& predictRows() {
  static const std::vector<PredictRow> rows{
      predictTextRow("hardware", "The machine to predict for (JSON; docs/predict.md, \"The hardware file\")",
                     &PredictOptions::hardwarePath),
      {"world", "", "World sizes, e.g. 2,4,8 or 2,4,...,1024 (at most 65536 ranks, 1024 sizes); nodes = world / ranks_per_node",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.worlds = parseWorldList(optionText(v)); }},
      {"topology", "", "What if the all-reduce used this topology (default: the run's)", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         for (const run::RunConfig& c : whatIfValues(flag, optionText(v))) o.topologies.push_back(c.comm.topology.name());
         if (o.topologies.size() == 1) o.whatIf.topology = comm::Topology::parse(o.topologies.front());
       }},
      settingRow("--backend", "Backend whose native efficiency applies to --topology native (default: the run's)",
                 [](PredictOptions& o, const run::RunConfig& c) { o.whatIf.backend = c.comm.connection.backend; }),
      settingRow("--sync", "What if gradients were synchronized this way: " + run::syncNames().joined(" or ") +
                               " (default: the run's)",
                 [](PredictOptions& o, const run::RunConfig& c) { o.whatIf.sync = c.sync.kind; }),
      settingRow("--bucket-mb", "What if buckets were capped at this many MiB (default: the run's)",
                 [](PredictOptions& o, const run::RunConfig& c) { o.whatIf.bucketMb = c.sync.bucketMb; }),
      {"bucket-layout", "",
       "What if buckets were laid out by this rule: ddp (c10d's, the trainer's) or fusion (Horovod's Tensor Fusion, "
       "--bucket-mb its threshold; docs/predict.md) (default: the run's)",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.whatIf.bucketLayout = comm::bucketLayoutNames().parse(optionText(v));
       }},
      settingRow("--no-overlap", "What if one fused all-reduce ran after backward",
                 [](PredictOptions& o, const run::RunConfig& c) { o.whatIf.overlap = c.sync.overlap; }),
      {"element-bytes", "", "What if every gradient element had this many bytes (2: float16/bfloat16, 4: float32)",
       ValueKind::kInteger, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long bytes = v.as<long long>();
         if (bytes != 2 && bytes != 4)
           throw UsageError(flag + " is 2 (float16, bfloat16) or 4 (float32), got " + std::to_string(bytes));
         o.whatIf.elementBytes = bytes;
       }},
      {"segment-bytes", "", "Pipeline segment of a point-to-point topology (default: the run's or the topology's)",
       ValueKind::kInteger, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         if (v.as<long long>() < 0) throw UsageError(flag + " must be >= 0 (0: whole chunks)");
         o.whatIf.segmentBytes = v.as<long long>();
       }},
      {"compress", "",
       "What if gradients were compressed (" + run::compressionNames().joined(", ", " or ") +
           "): each bucket's compressed all-reduces, and the encoding and decoding the run measured for the same "
           "compression (else 0, said in the Assumed table) (default: the run's)",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         for (const run::RunConfig& c : whatIfValues(flag, optionText(v))) o.compressions.push_back(c.sync.compress);
         if (o.compressions.size() == 1) o.whatIf.compress = o.compressions.front();
       }},
      settingRow("--compress-rank", "powersgd: the rank of its factors (default: the run's)",
                 [](PredictOptions& o, const run::RunConfig& c) { o.whatIf.compressRank = c.sync.compressRank; }),
      {"format", "", "md, csv (every table, each after a '# title' line) or json", ValueKind::kText,
       [](const PredictOptions& o) { return std::string(reportFormatNames().name(o.format)); },
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.format = reportFormatNames().parse(optionText(v));
       }},
      {"table", "", "Print only these tables, comma-separated (" + predict::describePredictTables() +
                        "); one table with --format csv is plain CSV",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.tables = common::splitList(optionText(v));
         if (o.tables.empty()) throwUsage("predict", flag + " needs a table name");
         for (const std::string& name : o.tables)
           if (!predict::isPredictTable(name))
             throw UsageError(flag + ": no table '" + name + "' (the tables: " + predict::describePredictTables() +
                              ")");
       }},
      {"vary", "",
       "Predict with this number of the hardware file set to each value in turn (KEY=V1,V2,...; KEY one of " +
           common::joinList(predict::rateAxisKeys()) + "): the tables rate_axis and crossings, where the "
           "configurations listed in --compress and --topology (comma-separated) take equal steps",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.vary = predict::parseRateAxis(optionText(v)); }},
      predictTextRow("plots", "Draw predicted speedup, compute vs exposed communication and the step's terms (limits) "
                              "against world size into DIR (PNG and PDF, python3-matplotlib)", &PredictOptions::plotsDir),
      {"measured", "", "With --plots: run directories of the same configuration, drawn beside the prediction "
                       "(comma-separated)", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.measured = common::splitList(optionText(v)); }},
      {"accept-other-device", "", "Take the step's compute as the hardware's ranks' although it ran on another device "
                                  "than the hardware file's gpu (a CPU run for a GPU system; predict refuses it otherwise)",
       ValueKind::kSwitch, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue&, const std::string&) { o.acceptOtherDevice = true; }},
      {"calibrate", "", "dtbench allreduce --csv results to fit the links to (comma-separated)", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.calibrate = common::splitList(optionText(v));
         if (o.calibrate.empty()) throwUsage("predict", flag + " needs at least one CSV file");
       }},
      {"allreduce", "", "dtbench allreduce --csv results to predict on --hardware, each row beside its measurement "
                        "(validation of the link model; comma-separated)", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.allreduce = common::splitList(optionText(v));
         if (o.allreduce.empty()) throwUsage("predict", flag + " needs at least one CSV file");
       }},
      predictTextRow("output", "With --calibrate: write the fitted hardware file here; with --describe or "
                               "--describe-model: the step description (else either is printed)", &PredictOptions::outputPath),
      predictTextRow("describe", "Write the step description of RUN (a run directory or a description)",
                     &PredictOptions::describe),
      {"describe-model", "", "Write the step description of a model of the zoo, its phases given in milliseconds",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.model = optionText(v); }},
  };
  return rows;
}

// A phase of --describe-model in milliseconds (ZooStepRequest holds seconds).
PredictRow phaseRow(const std::string& name, const std::string& help, double predict::ZooStepRequest::*field,
                    bool shown) {
  return {name, "", "With --describe-model: " + help, ValueKind::kNumber,
          shown ? std::function<std::string(const PredictOptions&)>(
                      [field](const PredictOptions& o) { return numberText(o.zoo.*field * 1e3); })
                : nullptr,
          [field](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.*field = v.as<double>() / 1e3; }};
}

// --describe-model's flags; the defaults are predict::ZooStepRequest's member initializers.
const std::vector<PredictRow>& zooRows() {
  using Z = predict::ZooStepRequest;
  static const std::vector<PredictRow> rows{
      {"image-size", "", "With --describe-model: square images of this many pixels (a ResNet at 64 or more takes its "
                         "ImageNet layout)", ValueKind::kInteger,
       [](const PredictOptions& o) { return std::to_string(o.zoo.imageSize); },
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.imageSize = v.as<long long>(); }},
      {"classes", "", "With --describe-model: classes of the classifier", ValueKind::kInteger,
       [](const PredictOptions& o) { return std::to_string(o.zoo.classes); },
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.classes = v.as<long long>(); }},
      {"dataset", "", "With --describe-model: the dataset's name, as text for the tables", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.dataset = optionText(v); }},
      {"batch-size", "", "With --describe-model: images per rank and step", ValueKind::kInteger, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.zoo.batchSize = static_cast<int>(std::clamp<long long>(v.as<long long>(), INT_MIN, INT_MAX));
       }},
      {"train-samples", "", "With --describe-model: images per epoch", ValueKind::kInteger,
       [](const PredictOptions& o) { return std::to_string(o.zoo.trainSamples); },
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.trainSamples = v.as<long long>(); }},
      phaseRow("h2d-ms", "the step's copy to the device", &Z::h2dS, true),
      phaseRow("forward-ms", "the step's forward", &Z::forwardS, true),
      phaseRow("backward-ms", "the step's backward", &Z::backwardS, false),
      phaseRow("optimizer-ms", "the step's optimizer", &Z::optimizerS, true),
      {"compute-source", "", "With --describe-model: where the phases come from (text kept in the description)",
       ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.source = optionText(v); }},
      {"gpu", "", "With --describe-model: the device the phases are of, a GPU of the peak table (docs/gpu-peaks.md) "
                  "or none (CPU); predict compares it with the hardware file's gpu", ValueKind::kText, nullptr,
       [](PredictOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.zoo.gpu = optionText(v); }},
  };
  return rows;
}

// --table's names are the tables of the command's mode (prediction_table_names.h).
void checkTableMode(const PredictOptions& o, predict::PredictMode mode) {
  for (const std::string& name : o.tables)
    for (const predict::PredictTableName& table : predict::predictTableNames())
      if (table.name == name && table.mode != mode) {
        const std::string flag = predict::predictModeFlag(table.mode);
        throwUsage("predict", "--table " + name + " is a table of " +
                                  (flag.empty() ? std::string("a prediction without --vary") : flag) +
                                  "; this command's tables are " +
                                  common::joinList(predict::predictTableNames(mode), ", "));
      }
}

// --calibrate: no prediction flags, and an --output that is not one of the measurements.
void checkCalibrate(const cxxopts::ParseResult& p, const PredictOptions& o) {
  std::error_code error;
  // The same file by path, or by another name for it (a hard link): either would overwrite the measurement.
  for (const std::string& input : o.calibrate)
    if (!o.outputPath.empty() &&
        (std::filesystem::weakly_canonical(input, error) == std::filesystem::weakly_canonical(o.outputPath, error) ||
         std::filesystem::equivalent(input, o.outputPath, error)))
      throwUsage("predict", "--output " + o.outputPath + " is the measurement --calibrate reads; write the "
                            "hardware file elsewhere, e.g. --output hardware.json");
  if (p.count("run") || p.count("hardware") || p.count("world"))
    throwUsage("predict", "--calibrate fits a hardware file from all-reduce results; predict with it in a second "
                          "command (RUN --hardware FILE --world ...)");
}

void checkDescribe(const cxxopts::ParseResult& p, PredictOptions& o) {
  if (p.count("describe") && p.count("describe-model"))
    throwUsage("predict", "--describe (a run) and --describe-model (a zoo model) write one description each: give one");
  if (p.count("run") || p.count("hardware") || p.count("world"))
    throwUsage("predict", "--describe and --describe-model write a step description; predict from it in a second "
                          "command (STEP.json --hardware FILE --world ...)");
  if (p.count("table"))
    throwUsage("predict", "--table picks tables of a prediction; --describe and --describe-model write a step "
                          "description");
  if (p.count("describe-model")) o.describeModel = o.zoo;
}

// A prediction (or --allreduce's): the flags of the other modes refused, the required ones there, the
// what-if lists under --vary only.
void checkPrediction(const cxxopts::ParseResult& p, PredictOptions& o) {
  for (const PredictRow& row : zooRows())
    if (p.count(row.longName())) throwUsage("predict", "--" + row.longName() + " belongs to --describe-model");
  if (p.count("output")) throwUsage("predict", "--output belongs to --calibrate, --describe and --describe-model");
  if (!o.allreduce.empty()) {
    if (!p.count("hardware")) throwUsage("predict", "--allreduce needs --hardware FILE: the machine to predict the rows on");
    if (p.count("run") || p.count("world"))
      throwUsage("predict", "--allreduce predicts the rows of its CSV files; a run and --world belong to a step prediction");
    return;
  }
  if (!p.count("run"))
    throwUsage("predict", "name the measured run directory or a step description, e.g. dtbench predict runs/r18-1 "
                          "--hardware hw.json --world 2,4,8");
  if (!p.count("hardware")) throwUsage("predict", "--hardware FILE is required (docs/predict.md, \"The hardware file\")");
  if (!p.count("world")) throwUsage("predict", "--world is required, e.g. --world 2,4,...,64");
  for (const char* flag : {"topology", "compress"})
    if (!o.vary && p.count(flag) && common::splitList(p[flag].as<std::string>()).size() > 1) {
      const std::string text = p[flag].as<std::string>();
      throwUsage("predict", std::string("--") + flag + " '" + text + "' names several values; each prediction takes "
                            "one, and several are compared along a hardware number with --vary, e.g. --" + flag +
                            " " + text + " --vary inter_node.bandwidth_gbit_s=1,10,100");
    }
  if (o.vary && !o.plotsDir.empty())
    throwUsage("predict", "--plots draws the prediction on one hardware file; --vary prints its axis as tables (draw "
                          "them from --format csv --table rate_axis)");
  if (!o.measured.empty() && o.plotsDir.empty())
    throwUsage("predict", "--measured runs are drawn beside the prediction: give --plots DIR too");
}

}  // namespace

PredictOptions parsePredictOptions(const std::vector<std::string>& args) {
  PredictOptions o;
  cxxopts::Options options(
      "dtbench predict",
      "Predicts Tables 1-3 (and a per-step breakdown) of a training configuration at other world sizes on a\n"
      "described machine, from one measured run directory: the run's compute and the moments its gradients\n"
      "became ready, the topology's own schedule over modelled links (docs/predict.md). Or, with --calibrate,\n"
      "fits the links' latency and bandwidth to dtbench allreduce results and prints a hardware file.\n\n"
      "RUN is a run directory or a step description (docs/predict.md, \"The step description\").\n\n"
      "Synopsis: dtbench predict RUN --hardware FILE --world 2,4,...,64 [what-if flags]\n"
      "          dtbench predict --calibrate allreduce.csv[,more.csv] [--output hardware.json]\n"
      "          dtbench predict --describe RUN [--output step.json]\n"
      "          dtbench predict --describe-model MODEL [--image-size S --classes K] --batch-size B\n"
      "                       --forward-ms F --backward-ms B [--optimizer-ms O] [--output step.json]");
  options.set_width(100);
  addOptionRows(options, predictRows());
  addOptionRows(options, zooRows());
  options.add_options()("run", "Measured run directory", cxxopts::value<std::string>())("h,help", "Show this help");
  options.parse_positional({"run"});
  options.positional_help("RUN");
  refuseEmptyRequired(args);
  const ParsedOptions result = parseOptions(options, "predict", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  const cxxopts::ParseResult& p = result.result;
  if (p.count("run")) o.run = p["run"].as<std::string>();
  applyOptionRows(p, predictRows(), o);
  applyOptionRows(p, zooRows(), o);
  using Mode = predict::PredictMode;
  if (!o.calibrate.empty()) {
    checkCalibrate(p, o);
    checkTableMode(o, Mode::kCalibrate);
  } else if (p.count("describe") || p.count("describe-model")) {
    checkDescribe(p, o);
  } else {
    checkPrediction(p, o);
    checkTableMode(o, !o.allreduce.empty() ? Mode::kAllreduce : o.vary ? Mode::kVary : Mode::kPrediction);
  }
  return o;
}

}  // namespace dtbench::experiments
