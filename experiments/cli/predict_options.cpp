#include "experiments/cli/predict_options.h"

#include <filesystem>
#include <set>
#include <utility>
#include <system_error>

#include <cxxopts.hpp>

#include "comm/bucket_layout.h"
#include "comm/topology/registry.h"
#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
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

// The values of a what-if flag that --vary compares along its axis: comma-separated, each once. Without
// --vary a flag holds one value, and a list is refused saying where lists belong.
std::vector<std::string> whatIfList(const cxxopts::ParseResult& p, const char* flag, bool varied) {
  const std::string text = p[flag].as<std::string>();
  const std::vector<std::string> values = common::splitList(text);
  if (!varied) {
    if (text.find(',') != std::string::npos)
      throwUsage("predict", std::string("--") + flag + " '" + text + "' names several values; each prediction takes "
                            "one, and several are compared along a hardware number with --vary, e.g. --" + flag +
                            " " + text + " --vary inter_node.bandwidth_gbit_s=1,10,100");
    return {text};
  }
  if (values.empty()) throwUsage("predict", std::string("--") + flag + " got no value");
  std::set<std::string> seen;
  for (const std::string& v : values)
    if (!seen.insert(v).second) throwUsage("predict", std::string("--") + flag + " '" + text + "' names " + v + " twice");
  return values;
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
  // clang-format off
  options.add_options()
    ("hardware", "The machine to predict for (JSON; docs/predict.md, \"The hardware file\")", cxxopts::value<std::string>())
    ("world", "World sizes, e.g. 2,4,8 or 2,4,...,1024 (at most 65536 ranks, 1024 sizes); nodes = world / ranks_per_node", cxxopts::value<std::string>())
    ("topology", "What if the all-reduce used this topology (default: the run's)", cxxopts::value<std::string>())
    ("backend", "Backend whose native efficiency applies to --topology native (default: the run's)", cxxopts::value<std::string>())
    ("sync", "What if gradients were synchronized this way: " + run::syncNames().joined(" or ") + " (default: the run's)",
     cxxopts::value<std::string>())
    ("bucket-mb", "What if buckets were capped at this many MiB (default: the run's)", cxxopts::value<double>())
    ("bucket-layout", "What if buckets were laid out by this rule: ddp (c10d's, the trainer's) or fusion (Horovod's "
                      "Tensor Fusion, --bucket-mb its threshold; docs/predict.md) (default: the run's)",
     cxxopts::value<std::string>())
    ("no-overlap", "What if one fused all-reduce ran after backward")
    ("element-bytes", "What if every gradient element had this many bytes (2: float16/bfloat16, 4: float32)", cxxopts::value<int64_t>())
    ("segment-bytes", "Pipeline segment of a point-to-point topology (default: the run's or the topology's)", cxxopts::value<int64_t>())
    ("compress", "What if gradients were compressed (" + run::compressionNames().joined(", ", " or ") +
                 "): each bucket's compressed all-reduces, and the encoding and decoding the run measured for the "
                 "same compression (else 0, said in the Assumed table) (default: the run's)",
     cxxopts::value<std::string>())
    ("compress-rank", "powersgd: the rank of its factors (default: the run's)", cxxopts::value<int64_t>())
    ("format", "md, csv (every table, each after a '# title' line) or json", cxxopts::value<std::string>()->default_value("md"))
    ("table", "Print only these tables, comma-separated (assumed, time_speedup, compute_comm, bandwidth, "
              "step_breakdown, limits, prediction_inputs; with --vary rate_axis, crossings); one table with "
              "--format csv is plain CSV",
     cxxopts::value<std::string>())
    ("vary", "Predict with this number of the hardware file set to each value in turn (KEY=V1,V2,...; KEY one of " +
             common::joinList(predict::rateAxisKeys()) + "): the tables rate_axis and crossings, where "
             "the configurations listed in --compress and --topology (comma-separated) take equal steps",
     cxxopts::value<std::string>())
    ("plots", "Draw predicted speedup, compute vs exposed communication and the step's terms (limits) against "
              "world size into DIR (PNG and PDF, python3-matplotlib)", cxxopts::value<std::string>())
    ("measured", "With --plots: run directories of the same configuration, drawn beside the prediction "
                 "(comma-separated)", cxxopts::value<std::string>())
    ("accept-other-device", "Take the step's compute as the hardware's ranks' although it ran on another device "
                            "than the hardware file's gpu (a CPU run for a GPU system; predict refuses it otherwise)")
    ("calibrate", "dtbench allreduce --csv results to fit the links to (comma-separated)", cxxopts::value<std::string>())
    ("allreduce", "dtbench allreduce --csv results to predict on --hardware, each row beside its measurement "
                  "(validation of the link model; comma-separated)", cxxopts::value<std::string>())
    ("output", "With --calibrate: write the fitted hardware file here; with --describe or --describe-model: the step "
               "description (else either is printed)", cxxopts::value<std::string>())
    ("describe", "Write the step description of RUN (a run directory or a description)", cxxopts::value<std::string>())
    ("describe-model", "Write the step description of a model of the zoo, its phases given in milliseconds",
     cxxopts::value<std::string>())
    ("image-size", "With --describe-model: square images of this many pixels (a ResNet at 64 or more takes its "
                   "ImageNet layout)", cxxopts::value<int64_t>()->default_value("32"))
    ("classes", "With --describe-model: classes of the classifier", cxxopts::value<int64_t>()->default_value("10"))
    ("dataset", "With --describe-model: the dataset's name, as text for the tables", cxxopts::value<std::string>())
    ("batch-size", "With --describe-model: images per rank and step", cxxopts::value<int>())
    ("train-samples", "With --describe-model: images per epoch", cxxopts::value<int64_t>()->default_value("50000"))
    ("h2d-ms", "With --describe-model: the step's copy to the device", cxxopts::value<double>()->default_value("0"))
    ("forward-ms", "With --describe-model: the step's forward", cxxopts::value<double>()->default_value("0"))
    ("backward-ms", "With --describe-model: the step's backward", cxxopts::value<double>())
    ("optimizer-ms", "With --describe-model: the step's optimizer", cxxopts::value<double>()->default_value("0"))
    ("compute-source", "With --describe-model: where the phases come from (text kept in the description)",
     cxxopts::value<std::string>())
    ("gpu", "With --describe-model: the device the phases are of, a GPU of the peak table (docs/gpu-peaks.md) or "
            "none (CPU); predict compares it with the hardware file's gpu", cxxopts::value<std::string>())
    ("run", "Measured run directory", cxxopts::value<std::string>())
    ("h,help", "Show this help");
  // clang-format on
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
  o.format = reportFormatNames().parse(p["format"].as<std::string>());
  if (p.count("table")) o.tables = common::splitList(p["table"].as<std::string>());
  if (p.count("calibrate")) {
    o.calibrate = common::splitList(p["calibrate"].as<std::string>());
    if (o.calibrate.empty()) throwUsage("predict", "--calibrate needs at least one CSV file");
    if (p.count("output")) {
      o.outputPath = p["output"].as<std::string>();
      std::error_code error;
      // The same file by path, or by another name for it (a hard link): either would overwrite the measurement.
      for (const std::string& input : o.calibrate)
        if (std::filesystem::weakly_canonical(input, error) == std::filesystem::weakly_canonical(o.outputPath, error) ||
            std::filesystem::equivalent(input, o.outputPath, error))
          throwUsage("predict", "--output " + o.outputPath + " is the measurement --calibrate reads; write the "
                                "hardware file elsewhere, e.g. --output hardware.json");
    }
    if (p.count("run") || p.count("hardware") || p.count("world"))
      throwUsage("predict", "--calibrate fits a hardware file from all-reduce results; predict with it in a second "
                            "command (RUN --hardware FILE --world ...)");
    return o;
  }
  if (p.count("describe") || p.count("describe-model")) {
    if (p.count("describe") && p.count("describe-model"))
      throwUsage("predict", "--describe (a run) and --describe-model (a zoo model) write one description each: give one");
    if (p.count("run") || p.count("hardware") || p.count("world"))
      throwUsage("predict", "--describe and --describe-model write a step description; predict from it in a second "
                            "command (STEP.json --hardware FILE --world ...)");
    if (p.count("output")) o.outputPath = p["output"].as<std::string>();
    if (p.count("describe")) {
      o.describe = p["describe"].as<std::string>();
      return o;
    }
    predict::ZooStepRequest& r = o.describeModel.emplace();
    r.model = p["describe-model"].as<std::string>();
    r.imageSize = p["image-size"].as<int64_t>();
    r.classes = p["classes"].as<int64_t>();
    if (p.count("dataset")) r.dataset = p["dataset"].as<std::string>();
    if (p.count("batch-size")) r.batchSize = p["batch-size"].as<int>();
    r.trainSamples = p["train-samples"].as<int64_t>();
    r.h2dS = p["h2d-ms"].as<double>() / 1e3;
    r.forwardS = p["forward-ms"].as<double>() / 1e3;
    if (p.count("backward-ms")) r.backwardS = p["backward-ms"].as<double>() / 1e3;
    r.optimizerS = p["optimizer-ms"].as<double>() / 1e3;
    if (p.count("compute-source")) r.source = p["compute-source"].as<std::string>();
    if (p.count("gpu")) r.gpu = p["gpu"].as<std::string>();
    return o;
  }
  for (const char* flag : {"image-size", "classes", "train-samples", "h2d-ms", "forward-ms", "optimizer-ms"})
    if (p.count(flag) && !p[flag].has_default())
      throwUsage("predict", std::string("--") + flag + " belongs to --describe-model");
  for (const char* flag : {"dataset", "batch-size", "backward-ms", "compute-source", "gpu"})
    if (p.count(flag)) throwUsage("predict", std::string("--") + flag + " belongs to --describe-model");
  if (p.count("output")) throwUsage("predict", "--output belongs to --calibrate, --describe and --describe-model");
  if (p.count("allreduce")) {
    o.allreduce = common::splitList(p["allreduce"].as<std::string>());
    if (o.allreduce.empty()) throwUsage("predict", "--allreduce needs at least one CSV file");
    if (!p.count("hardware")) throwUsage("predict", "--allreduce needs --hardware FILE: the machine to predict the rows on");
    if (p.count("run") || p.count("world"))
      throwUsage("predict", "--allreduce predicts the rows of its CSV files; a run and --world belong to a step prediction");
    o.hardwarePath = p["hardware"].as<std::string>();
    return o;
  }
  if (!p.count("run")) throwUsage("predict", "name the measured run directory or a step description, e.g. dtbench predict runs/r18-1 "
                                             "--hardware hw.json --world 2,4,8");
  o.run = p["run"].as<std::string>();
  if (!p.count("hardware")) throwUsage("predict", "--hardware FILE is required (docs/predict.md, \"The hardware file\")");
  o.hardwarePath = p["hardware"].as<std::string>();
  if (!p.count("world")) throwUsage("predict", "--world is required, e.g. --world 2,4,...,64");
  o.worlds = parseWorldList(p["world"].as<std::string>());
  if (p.count("vary")) o.vary = predict::parseRateAxis(p["vary"].as<std::string>());
  if (p.count("topology")) {
    o.topologies = whatIfList(p, "topology", o.vary.has_value());
    if (o.vary)
      for (const std::string& name : o.topologies) comm::Topology::parse(name);  // refused here, naming the valid ones
    if (o.topologies.size() == 1) o.topology = o.topologies.front();
  }
  if (p.count("backend")) o.backend = p["backend"].as<std::string>();
  if (p.count("sync")) {
    o.sync = p["sync"].as<std::string>();
    run::syncNames().parse(o.sync);  // refused here, naming the valid ones
  }
  if (p.count("bucket-mb")) {
    o.bucketMb = p["bucket-mb"].as<double>();
    run::RunConfig whatIf;  // the rule of train's --bucket-mb (run/config_schema.h)
    whatIf.sync.bucketMb = *o.bucketMb;
    run::checkRule(*run::findSettingByFlag("--bucket-mb"), whatIf);
  }
  if (p.count("bucket-layout")) o.bucketLayout = comm::bucketLayoutNames().parse(p["bucket-layout"].as<std::string>());
  o.noOverlap = p.count("no-overlap") > 0;
  if (p.count("element-bytes")) {
    o.elementBytes = p["element-bytes"].as<int64_t>();
    if (*o.elementBytes != 2 && *o.elementBytes != 4)
      throw UsageError("--element-bytes is 2 (float16, bfloat16) or 4 (float32), got " + std::to_string(*o.elementBytes));
  }
  if (p.count("compress")) {
    for (const std::string& name : whatIfList(p, "compress", o.vary.has_value()))
      o.compressions.push_back(run::compressionNames().parse(name));
    if (o.compressions.size() == 1) o.compress = o.compressions.front();
  }
  if (p.count("compress-rank")) {
    o.compressRank = p["compress-rank"].as<int64_t>();
    run::RunConfig whatIf;  // the rule of train's --compress-rank (run/config_schema.h)
    whatIf.sync.compressRank = *o.compressRank;
    run::checkRule(*run::findSettingByFlag("--compress-rank"), whatIf);
  }
  o.acceptOtherDevice = p.count("accept-other-device") > 0;
  if (p.count("plots")) o.plotsDir = p["plots"].as<std::string>();
  if (o.vary && !o.plotsDir.empty())
    throwUsage("predict", "--plots draws the prediction on one hardware file; --vary prints its axis as tables (draw "
                          "them from --format csv --table rate_axis)");
  if (p.count("measured")) {
    if (o.plotsDir.empty()) throwUsage("predict", "--measured runs are drawn beside the prediction: give --plots DIR too");
    o.measured = common::splitList(p["measured"].as<std::string>());
  }
  if (p.count("segment-bytes")) {
    o.segmentBytes = p["segment-bytes"].as<int64_t>();
    if (*o.segmentBytes < 0) throw UsageError("--segment-bytes must be >= 0 (0: whole chunks)");
  }
  return o;
}

}  // namespace dtbench::experiments
