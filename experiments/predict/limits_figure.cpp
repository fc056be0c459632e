#include "experiments/predict/limits_figure.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "experiments/report/output_set.h"

namespace dtbench::predict {
namespace {

namespace fs = std::filesystem;

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::vector<std::string> drawLimitsFigure(const std::string& directory, const std::string& python,
                                          const std::vector<std::string>& drawn) {
  const fs::path dir(directory);
  {
    std::ofstream script(dir / "limits_plot.py");
    script << limitsPlotScript();
    if (!script) throw std::runtime_error("--plots: cannot write into " + directory);
  }
  const std::string command = shellQuote(python) + " " + shellQuote((dir / "limits_plot.py").string()) + " " +
                              shellQuote((dir / "figures.json").string()) + " " + shellQuote(directory);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("--plots: cannot run " + python);
  std::vector<std::string> files;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string path = line;
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
    if (!path.empty()) files.push_back(path);
  }
  const int status = pclose(pipe);
  if (status != 0)
    throw std::runtime_error("--plots: " + python + " limits_plot.py failed (exit " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                             "; its message is above). The data is in " + (dir / "figures.json").string());
  // One set with the report's figures, so that the next --plots into this directory replaces them all.
  report::OutputSet written(directory);
  for (const std::string& file : drawn) written.add(file);
  for (const std::string& file : files) written.add(file);
  for (const char* name : {"figures.json", "plots.py", "limits_plot.py"}) written.add(name);
  written.commit();
  return files;
}

}  // namespace dtbench::predict
