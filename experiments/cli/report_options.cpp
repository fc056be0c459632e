#include "experiments/cli/report_options.h"

#include <climits>

#include <cxxopts.hpp>

#include "common/lists.h"
#include "common/usage_error.h"
#include "experiments/cli/command_line.h"
#include "experiments/cli/option_rows.h"
#include "experiments/report/report.h"

namespace dtbench::experiments {

using common::UsageError;

const common::NamedValues<ReportFormat>& reportFormatNames() {
  static const common::NamedValues<ReportFormat> names("--format", {{ReportFormat::kMarkdown, "md"},
                                                                    {ReportFormat::kCsv, "csv"},
                                                                    {ReportFormat::kJson, "json"}});
  return names;
}

namespace {

using ReportRow = OptionRow<ReportOptions>;

// The names of report::reportTableNames() from `source`, comma-separated ("traffic_matrix_<run id>").
std::string tableNames(report::TableSource source) {
  std::vector<std::string> names;
  for (const report::TableName& table : report::reportTableNames())
    if (table.source == source || (source == report::TableSource::kRuns && table.source == report::TableSource::kEachRun))
      names.push_back(table.name + (table.source == report::TableSource::kEachRun ? "<run id>" : ""));
  return common::joinList(names, ", ");
}

std::string tableHelp() {
  return "Print only these tables, comma-separated (" + tableNames(report::TableSource::kRuns) +
         "; with wire captures " + tableNames(report::TableSource::kWire) + "; with job traces " +
         tableNames(report::TableSource::kTraces) + "); one table with --format csv is plain CSV";
}

// A text flag that sets one string of ReportOptions.
ReportRow reportTextRow(const std::string& name, const std::string& help, std::string ReportOptions::*field) {
  return {name, "", help, ValueKind::kText, nullptr,
          [field](ReportOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.*field = optionText(v); }};
}

// `dtbench report`'s flags besides the run directories (positional), in --help's order; the defaults
// are ReportOptions' member initializers.
const std::vector<ReportRow>& reportRows() {
  static const std::vector<ReportRow> rows{
      {"format", "", "md, csv (every table, each after a '# title' line) or json", ValueKind::kText,
       [](const ReportOptions& o) { return std::string(reportFormatNames().name(o.format)); },
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string&) {
         o.format = reportFormatNames().parse(optionText(v));
       }},
      {"table", "", tableHelp(), ValueKind::kText, nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.tables = common::splitList(optionText(v));
         if (o.tables.empty()) throwUsage("report", flag + " needs a table name");
         for (const std::string& name : o.tables)
           if (!report::isReportTable(name))
             throw UsageError(flag + ": no table '" + name + "' (the tables: " + tableNames(report::TableSource::kRuns) +
                              ", " + tableNames(report::TableSource::kWire) + ", " +
                              tableNames(report::TableSource::kTraces) + ")");
       }},
      {"epoch", "", "The epoch of every run to report (default: each run's last)", ValueKind::kInteger, nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         const long long epoch = v.as<long long>();
         if (epoch < 1) throw UsageError(flag + " counts from 1, got " + std::to_string(epoch));
         if (epoch > INT_MAX) throw UsageError(flag + " must be at most " + std::to_string(INT_MAX));
         o.epoch = static_cast<int>(epoch);
       }},
      reportTextRow("ceiling", "A dtbench allreduce --csv/--json result: Table 3's utilization is busbw / its busbw",
              &ReportOptions::ceilingPath),
      {"gpu-hour-price", "", "Price of one GPU-hour: cost per epoch and per million images", ValueKind::kNumber,
       nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.gpuHourPrice = v.as<double>();
         if (!(*o.gpuHourPrice > 0)) throw UsageError(flag + " must be positive");
       }},
      {"target-accuracy", "", "Test accuracy (a fraction) whose time and bytes to reach are reported",
       ValueKind::kNumber, nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string& flag) {
         o.targetAccuracy = v.as<double>();
         if (!(*o.targetAccuracy > 0 && *o.targetAccuracy <= 1))
           throw UsageError(flag + " is a fraction in (0, 1], e.g. 0.9 for 90%");
       }},
      reportTextRow("csv-dir", "Also write every table as DIR/<table>.csv", &ReportOptions::csvDir),
      reportTextRow("job-table", "Also write the job table as CSV to FILE", &ReportOptions::jobTablePath),
      reportTextRow("plots", "Draw the figures (PNG and PDF) into DIR with python3-matplotlib", &ReportOptions::plotsDir),
      {"sacct", "",
       "sacct -a -D -X --parsable2 output of the documented --format (docs/report.md); repeatable. Also joins the "
       "runs' slurm_job_id: the job table's queue wait, requeues, state; the cost table's time to result",
       ValueKind::kText, nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.sacctFiles = optionTexts(v); }, "",
       false, true},
      {"trace", "",
       "A cluster trace CSV in the Helios layout (job_id,user,gpu_num,cpu_num,node_num,state,submit_time,"
       "start_time,end_time,duration,queue); repeatable",
       ValueKind::kText, nullptr,
       [](ReportOptions& o, const cxxopts::OptionValue& v, const std::string&) { o.traceFiles = optionTexts(v); }, "",
       false, true},
      reportTextRow("trace-columns",
              "Map other traces' column names onto Helios's: HELIOS=THEIRS,... e.g. "
              "gpu_num=num_gpus,submit_time=submitted_time",
              &ReportOptions::traceColumns),
  };
  return rows;
}

// What the rows cannot check alone: something to report, and --trace-columns with its --trace files.
void checkTogether(const ReportOptions& o) {
  if (!o.traceColumns.empty() && o.traceFiles.empty())
    throw UsageError("--trace-columns maps the columns of --trace files; name one with --trace");
  if (o.directories.empty() && o.sacctFiles.empty() && o.traceFiles.empty())
    throwUsage("report", "name at least one run directory, e.g. dtbench report runs/ (or a --sacct or --trace file)");
}

}  // namespace

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
  addOptionRows(options, reportRows());
  options.add_options()("directories", "Run directories", cxxopts::value<std::vector<std::string>>())(
      "h,help", "Show this help");
  options.parse_positional({"directories"});
  options.positional_help("DIR...");
  const ParsedOptions result = parseOptions(options, "report", args);
  if (result.help) {
    o.help = true;
    o.helpText = result.helpText;
    return o;
  }
  if (result.result.count("directories")) o.directories = result.result["directories"].as<std::vector<std::string>>();
  applyOptionRows(result.result, reportRows(), o);
  checkTogether(o);
  return o;
}

}  // namespace dtbench::experiments
