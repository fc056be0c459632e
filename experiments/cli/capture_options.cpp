#include "experiments/cli/capture_options.h"

#include <algorithm>

#include <cxxopts.hpp>

#include "common/lists.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"

namespace dtbench::experiments {
namespace {

const char kOverview[] =
    "Captures a run's packets with libpcap on a node's interfaces (record) and turns the captures of\n"
    "every node into wire tables (analyze); docs/wire.md.\n\n"
    "Synopsis: dtbench capture record --node NAME --interface IF[,IF...] --output DIR [--snaplen N] [--duration S]\n"
    "          dtbench capture analyze DIR [--output ODIR] [--keep-pcap] [--messages MDIR]\n\n"
    "`dtbench capture record --help` and `dtbench capture analyze --help` show each one's options.";

using CaptureRow = OptionRow<CaptureOptions>;


// `dtbench capture record`'s flags; defaults from CaptureOptions.
const std::vector<CaptureRow>& recordRows() {
  static const std::vector<CaptureRow> rows{
      {"node", "", "This node's name (the files' prefix)", ValueKind::kText, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.node = optionText(v);
         if (o.node.find('/') != std::string::npos)
           throw common::UsageError(flag + " is a name, not a path: '" + o.node + "'");
       },
       "NAME", true},
      {"interface", "", "Interfaces to capture, comma-separated (e.g. the node's link and lo)", ValueKind::kText,
       nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.interfaces = common::splitList(optionText(v));
         if (o.interfaces.empty()) throw common::UsageError(flag + " needs at least one interface");
         for (size_t k = 0; k < o.interfaces.size(); ++k)
           if (std::find(o.interfaces.begin(), o.interfaces.begin() + k, o.interfaces[k]) != o.interfaces.begin() + k)
             throw common::UsageError(flag + " names " + o.interfaces[k] + " twice; name each interface once");
       },
       "IF[,IF...]", true},
      {"output", "", "The capture directory (created if missing)", ValueKind::kText, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.output = optionText(v); }, "DIR",
       true},
      {"snaplen", "", "Bytes kept per packet (128: Ethernet, IP and TCP headers with options)", ValueKind::kInteger,
       [](const CaptureOptions& o) { return std::to_string(o.snaplen); },
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long snaplen = v.as<long long>();
         if (snaplen < 64 || snaplen > 262144)
           throw common::UsageError(flag + " is from 64 to 262144 bytes, got " + std::to_string(snaplen));
         o.snaplen = static_cast<int>(snaplen);
       },
       "N"},
      {"duration", "", "Stop after this many seconds (default: at SIGINT or SIGTERM)", ValueKind::kNumber, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.duration_s = v.as<double>();
         if (!(o.duration_s > 0)) throw common::UsageError(flag + " must be a positive number of seconds");
       },
       "S"},
  };
  return rows;
}

// `dtbench capture analyze`'s flags (DIR is positional).
const std::vector<CaptureRow>& analyzeRows() {
  static const std::vector<CaptureRow> rows{
      {"output", "", "Where the tables go (default: DIR)", ValueKind::kText, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.output = optionText(v); }, "ODIR"},
      {"keep-pcap", "", "Keep the pcap files", ValueKind::kSwitch, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue&, const std::string&) { o.keepPcap = true; }},
      {"messages", "", "The ranks' message log (--message-log of the run): reconcile the wire with it",
       ValueKind::kText, nullptr,
       [](CaptureOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.messages = optionText(v); }, "MDIR"},
  };
  return rows;
}

// The rows' values, a rule broken saying "; see dtbench <subcommand> --help".
void applyRows(const std::string& subcommand, const cxxopts::ParseResult& parsed, const std::vector<CaptureRow>& rows,
               CaptureOptions& o) {
  try {
    applyOptionRows(parsed, rows, o);
  } catch (const common::UsageError& e) {
    throwUsage(subcommand, e.what());
  }
}

CaptureOptions parseRecord(const std::vector<std::string>& args) {
  CaptureOptions o;
  o.action = CaptureAction::kRecord;
  cxxopts::Options options("dtbench capture record",
                           "Captures the packets of the named interfaces of this network namespace (headers only\n"
                           "by default) into DIR/<node>.<interface>.pcap until SIGINT, SIGTERM or --duration, then\n"
                           "writes DIR/<node>.capture.json (pcap_stats, the interfaces' counters). Prints `ready`\n"
                           "and creates DIR/<node>.ready once every interface is capturing. Needs root (CAP_NET_RAW).");
  options.set_width(100);
  addOptionRows(options, recordRows());
  options.add_options()("h,help", "Show this help");
  const ParsedOptions result = parseOptions(options, "capture record", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  applyRows("capture record", result.result, recordRows(), o);
  return o;
}

CaptureOptions parseAnalyze(const std::vector<std::string>& args) {
  CaptureOptions o;
  o.action = CaptureAction::kAnalyze;
  cxxopts::Options options("dtbench capture analyze",
                           "Reads every <node>.capture.json and its pcaps in DIR and writes the wire tables\n"
                           "(wire_pairs.csv, wire_links.csv, wire_flows.csv, wire_flow_bins.csv,\n"
                           "wire_retransmissions.csv, wire_summary.json; with --messages also reconciliation.csv).\n"
                           "Deletes the pcaps afterwards unless --keep-pcap. With DTBENCH_CLUSTER set, the\n"
                           "cluster's node and controller addresses get their host names.");
  options.set_width(100);
  addOptionRows(options, analyzeRows());
  options.add_options()("dir", "The capture directory", cxxopts::value<std::string>())("h,help", "Show this help");
  options.parse_positional({"dir"});
  options.positional_help("DIR");
  const ParsedOptions result = parseOptions(options, "capture analyze", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  const cxxopts::ParseResult& p = result.result;
  if (!p.count("dir")) throwUsage("capture analyze", "name the capture directory, e.g. dtbench capture analyze runs/cap1");
  o.directory = p["dir"].as<std::string>();
  applyRows("capture analyze", p, analyzeRows(), o);
  return o;
}

}  // namespace

CaptureOptions parseCaptureOptions(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    CaptureOptions o;
    o.help = true;
    o.helpText = kOverview;
    if (args.empty()) throwUsage("capture", "name an action: record or analyze");
    return o;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "record") return parseRecord(rest);
  if (args[0] == "analyze") return parseAnalyze(rest);
  throwUsage("capture", "unknown action '" + args[0] + "'; valid actions: record, analyze");
}

}  // namespace dtbench::experiments
