#include "experiments/predict/limits_figure.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "experiments/report/figures.h"
#include "experiments/report/output_set.h"

namespace dtbench::predict {

std::vector<std::string> drawLimitsFigure(const std::string& directory, const std::string& python,
                                          const std::vector<std::string>& drawn) {
  const std::filesystem::path dir(directory);
  {
    std::ofstream script(dir / "limits_plot.py");
    script << limitsPlotScript();
    if (!script) throw std::runtime_error("--plots: cannot write into " + directory);
  }
  const std::vector<std::string> files = report::runFigureScript(python, (dir / "limits_plot.py").string(), directory);
  report::OutputSet written(directory);
  for (const std::string& file : drawn) written.add(file);
  for (const std::string& file : files) written.add(file);
  for (const char* name : {"figures.json", "plots.py", "limits_plot.py"}) written.add(name);
  written.commit();
  return files;
}

}  // namespace dtbench::predict
