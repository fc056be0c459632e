#include "experiments/cli/capture_options.h"

#include <algorithm>

#include <cxxopts.hpp>

#include "common/lists.h"
#include "experiments/cli/command_line.h"

namespace dtbench::experiments {
namespace {

const char kOverview[] =
    "Captures a run's packets with libpcap on a node's interfaces (record) and turns the captures of\n"
    "every node into wire tables (analyze); docs/wire.md.\n\n"
    "Synopsis: dtbench capture record --node NAME --interface IF[,IF...] --output DIR [--snaplen N] [--duration S]\n"
    "          dtbench capture analyze DIR [--output ODIR] [--keep-pcap] [--messages MDIR]\n\n"
    "`dtbench capture record --help` and `dtbench capture analyze --help` show each one's options.";

CaptureOptions parseRecord(const std::vector<std::string>& args) {
  CaptureOptions o;
  o.action = CaptureAction::kRecord;
  cxxopts::Options options("dtbench capture record",
                           "Captures the packets of the named interfaces of this network namespace (headers only\n"
                           "by default) into DIR/<node>.<interface>.pcap until SIGINT, SIGTERM or --duration, then\n"
                           "writes DIR/<node>.capture.json (pcap_stats, the interfaces' counters). Prints `ready`\n"
                           "and creates DIR/<node>.ready once every interface is capturing. Needs root (CAP_NET_RAW).");
  options.set_width(100);
  // clang-format off
  options.add_options()
    ("node", "This node's name (the files' prefix)", cxxopts::value<std::string>())
    ("interface", "Interfaces to capture, comma-separated (e.g. the node's link and lo)", cxxopts::value<std::string>())
    ("output", "The capture directory (created if missing)", cxxopts::value<std::string>())
    ("snaplen", "Bytes kept per packet (128: Ethernet, IP and TCP headers with options)",
     cxxopts::value<int>()->default_value("128"))
    ("duration", "Stop after this many seconds (default: at SIGINT or SIGTERM)", cxxopts::value<double>())
    ("h,help", "Show this help");
  // clang-format on
  const ParsedOptions result = parseOptions(options, "capture record", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  const cxxopts::ParseResult& p = result.result;
  if (!p.count("node")) throwUsage("capture record", "--node NAME is required");
  if (!p.count("interface")) throwUsage("capture record", "--interface IF[,IF...] is required");
  if (!p.count("output")) throwUsage("capture record", "--output DIR is required");
  o.node = p["node"].as<std::string>();
  if (o.node.find('/') != std::string::npos) throwUsage("capture record", "--node is a name, not a path: '" + o.node + "'");
  o.interfaces = common::splitList(p["interface"].as<std::string>());
  if (o.interfaces.empty()) throwUsage("capture record", "--interface needs at least one interface");
  for (size_t k = 0; k < o.interfaces.size(); ++k)
    if (std::find(o.interfaces.begin(), o.interfaces.begin() + k, o.interfaces[k]) != o.interfaces.begin() + k)
      throwUsage("capture record", "--interface names " + o.interfaces[k] + " twice; name each interface once");
  o.output = p["output"].as<std::string>();
  o.snaplen = p["snaplen"].as<int>();
  if (o.snaplen < 64 || o.snaplen > 262144)
    throwUsage("capture record", "--snaplen is from 64 to 262144 bytes, got " + std::to_string(o.snaplen));
  if (p.count("duration")) {
    o.duration_s = p["duration"].as<double>();
    if (!(o.duration_s > 0)) throwUsage("capture record", "--duration must be a positive number of seconds");
  }
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
  // clang-format off
  options.add_options()
    ("output", "Where the tables go (default: DIR)", cxxopts::value<std::string>())
    ("keep-pcap", "Keep the pcap files")
    ("messages", "The ranks' message log (--message-log of the run): reconcile the wire with it",
     cxxopts::value<std::string>())
    ("dir", "The capture directory", cxxopts::value<std::string>())
    ("h,help", "Show this help");
  // clang-format on
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
  if (p.count("output")) o.output = p["output"].as<std::string>();
  o.keepPcap = p.count("keep-pcap") > 0;
  if (p.count("messages")) o.messages = p["messages"].as<std::string>();
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
