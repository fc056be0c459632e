#include "experiments/cli/report_options.h"

#include <cxxopts.hpp>

#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"

#include <memory>

namespace dtbench::experiments {

using common::UsageError;

const common::NamedValues<ReportFormat>& reportFormatNames() {
  static const common::NamedValues<ReportFormat> names("--format", {{ReportFormat::kMarkdown, "md"},
                                                                    {ReportFormat::kCsv, "csv"},
                                                                    {ReportFormat::kJson, "json"}});
  return names;
}

ReportOptions parseReportOptions(const std::vector<std::string>& args) {
  ReportOptions o;
  cxxopts::Options options("dtbench report",
                           "Reads run directories (any mix; a sweep's parent directory works too) and prints\n"
                           "Table 1 (time and speedup), Table 2 (compute vs communication), Table 3 (bandwidth\n"
                           "utilization), traffic, batch times, stragglers, cost, accuracy, the job table and the\n"
                           "runs left out. With --sacct or --trace also the job traces' tables (duration and queueing-delay\n"
                           "CDFs, final states and GPU time by job size); DIR may then be left out. Every column is\n"
                           "defined under its table and in docs/report.md.\n\n"
                           "Synopsis: dtbench report [OPTIONS] DIR...\n"
                           "          dtbench report [OPTIONS] [DIR...] --sacct FILE --trace FILE...");
  options.set_width(100);
  // clang-format off
  options.add_options()
    ("format", "md, csv (every table, each after a '# title' line) or json", cxxopts::value<std::string>()->default_value("md"))
    ("table", "Print only these tables, comma-separated (time_speedup, compute_comm, bandwidth, traffic, batch_times, "
              "stragglers, cost, best, accuracy, jobs, excluded; with job traces trace_jobs, job_duration_cdf, queue_delay_cdf, "
              "final_states, gpu_time_by_size, trace_skipped); one table with --format csv is plain CSV",
     cxxopts::value<std::string>())
    ("epoch", "The epoch of every run to report (default: each run's last)", cxxopts::value<int>())
    ("ceiling", "A dtbench allreduce --csv/--json result: Table 3's utilization is busbw / its busbw",
     cxxopts::value<std::string>())
    ("gpu-hour-price", "Price of one GPU-hour: cost per epoch and per million images", cxxopts::value<double>())
    ("target-accuracy", "Test accuracy (a fraction) whose time and bytes to reach are reported", cxxopts::value<double>())
    ("csv-dir", "Also write every table as DIR/<table>.csv", cxxopts::value<std::string>())
    ("job-table", "Also write the job table as CSV to FILE", cxxopts::value<std::string>())
    ("plots", "Draw the figures (PNG and PDF) into DIR with python3-matplotlib", cxxopts::value<std::string>())
    ("sacct", "sacct -a -D -X --parsable2 output of the documented --format (docs/report.md); repeatable. Also "
              "joins the runs' slurm_job_id: the job table's queue wait, requeues, state; the cost table's time to "
              "result", cxxopts::value<std::vector<std::string>>())
    ("trace", "A cluster trace CSV in the Helios layout (job_id,user,gpu_num,cpu_num,node_num,state,submit_time,"
              "start_time,end_time,duration,queue); repeatable", cxxopts::value<std::vector<std::string>>())
    ("trace-columns", "Map other traces' column names onto Helios's: HELIOS=THEIRS,... e.g. "
                      "gpu_num=num_gpus,submit_time=submitted_time", cxxopts::value<std::string>())
    ("directories", "Run directories", cxxopts::value<std::vector<std::string>>())
    ("h,help", "Show this help");
  // clang-format on
  options.parse_positional({"directories"});
  options.positional_help("DIR...");
  const ParsedOptions result = parseOptions(options, "report", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  const cxxopts::ParseResult& parsed = result.result;
  if (parsed.count("sacct")) o.sacctFiles = parsed["sacct"].as<std::vector<std::string>>();
  if (parsed.count("trace")) o.traceFiles = parsed["trace"].as<std::vector<std::string>>();
  if (parsed.count("trace-columns")) {
    o.traceColumns = parsed["trace-columns"].as<std::string>();
    if (o.traceFiles.empty()) throw UsageError("--trace-columns maps the columns of --trace files; name one with --trace");
  }
  if (!parsed.count("directories") && o.sacctFiles.empty() && o.traceFiles.empty())
    throwUsage("report", "name at least one run directory, e.g. dtbench report runs/ (or a --sacct or --trace file)");
  if (parsed.count("directories")) o.directories = parsed["directories"].as<std::vector<std::string>>();
  o.format = reportFormatNames().parse(parsed["format"].as<std::string>());
  if (parsed.count("table")) {
    o.tables = common::splitList(parsed["table"].as<std::string>());
    if (o.tables.empty()) throwUsage("report", "--table needs a table name");
  }
  if (parsed.count("epoch")) {
    o.epoch = parsed["epoch"].as<int>();
    if (*o.epoch < 1) throw UsageError("--epoch counts from 1, got " + std::to_string(*o.epoch));
  }
  if (parsed.count("ceiling")) o.ceilingPath = parsed["ceiling"].as<std::string>();
  if (parsed.count("gpu-hour-price")) {
    o.gpuHourPrice = parsed["gpu-hour-price"].as<double>();
    if (!(*o.gpuHourPrice > 0)) throw UsageError("--gpu-hour-price must be positive");
  }
  if (parsed.count("target-accuracy")) {
    o.targetAccuracy = parsed["target-accuracy"].as<double>();
    if (!(*o.targetAccuracy > 0 && *o.targetAccuracy <= 1))
      throw UsageError("--target-accuracy is a fraction in (0, 1], e.g. 0.9 for 90%");
  }
  if (parsed.count("csv-dir")) o.csvDir = parsed["csv-dir"].as<std::string>();
  if (parsed.count("job-table")) o.jobTablePath = parsed["job-table"].as<std::string>();
  if (parsed.count("plots")) o.plotsDir = parsed["plots"].as<std::string>();
  return o;
}

}  // namespace dtbench::experiments
