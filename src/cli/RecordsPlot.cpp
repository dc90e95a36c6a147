#include "cli/RecordsPlot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>

#include "cli/ModelArgs.h"
#include "driver/NetworkTaskWeights.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/HelperPrograms.h"
#include "support/Subprocess.h"
#include "tune/RecordLog.h"
#include "tune/TuningCurves.h"

namespace tessel::cli {

namespace {

struct PlotArgs {
  std::string log, output, target, title;
  bool force = false;
  ModelArgs model;  ///< --model and its source options: where the weights come from
};

/// The exit codes of records_plot.py (its EXIT_BAD_OUTPUT, EXIT_NO_MATPLOTLIB).
constexpr int kBadOutput = 2, kNoMatplotlib = 3;

/// The Python that draws: $TESSEL_PYTHON, else the one the package is built for.
std::string pythonProgram() {
  const char* chosen = std::getenv("TESSEL_PYTHON");
  return chosen && *chosen ? chosen : TESSEL_PYTHON_PROGRAM;
}

/// The weights of the log's tasks in the network of --model, prepared for the target of the curves.
std::map<std::string, double> weightsOf(PlotArgs& a, const std::string& target) {
  a.model.target = target;
  a.model.parsedTarget = target::Target::parse(target);
  TESSEL_CHECK(!a.model.parsedTarget.isVta(),
               "--model: the records of {} are VTA's, whose tasks tessel vta lists; draw them without --model", target);
  return driver::networkTaskWeights(prepareModel(a.model), a.model.parsedTarget);
}

/// The drawing code: an installed tessel's, in the Python package installed with it (found from
/// the executable, so that a moved prefix still finds it), else the build tree's when this
/// `tessel` runs from that tree.
std::string drawingCode() {
  std::vector<std::string> tried;
  if (std::string self = executableDirectory(); !self.empty()) {
    std::filesystem::path installed = std::filesystem::path(self) / TESSEL_INSTALLED_RECORDS_PLOT_SCRIPT;
    if (std::filesystem::exists(installed)) return installed.lexically_normal().string();
    tried.push_back(installed.lexically_normal().string());
  }
  if (runningFromBuildTree()) {
    if (std::filesystem::exists(TESSEL_RECORDS_PLOT_SCRIPT)) return TESSEL_RECORDS_PLOT_SCRIPT;
    tried.push_back(TESSEL_RECORDS_PLOT_SCRIPT);
  }
  fail("tessel records plot: the drawing code of the tessel Python package (records_plot.py) is missing (tried {}): install the "
       "Python package with tessel (make install), or build the tessel_python target in the build tree",
       fmt::join(tried, ", "));
}

/// Runs the drawing code on the curves; Error saying what is missing when it cannot.
void draw(const PlotArgs& a, const tune::TuningCurves& curves) {
  const std::string python = pythonProgram();
  TESSEL_CHECK(std::filesystem::exists(python),
               "{}: no such program; tessel records plot draws with Python 3 and matplotlib (Debian: apt-get install python3 "
               "python3-matplotlib; $TESSEL_PYTHON names another Python)",
               python);
  const std::string script = drawingCode();
  std::vector<std::string> argv{python, script, a.output};
  if (!a.title.empty()) argv.push_back(a.title);
  SubprocessOptions options;
  options.standardInput = tune::tuningCurvesToJson(curves).dump();
  options.timeout = std::chrono::seconds(300);
  SubprocessResult result = runSubprocess(argv, options);
  std::string said = result.output;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (result.exitCode == 0) return;
  if (result.exitCode == kBadOutput) fail("-o {}", said);
  if (result.exitCode == kNoMatplotlib) fail("tessel records plot: {}", said);
  fail("tessel records plot: drawing with {} failed ({}): {}", python,
       result.timedOut ? "timed out" : result.signal ? fmt::format("signal {}", result.signal) : fmt::format("exit code {}", result.exitCode),
       said);
}

/// A latency in ms, or in us below 0.1 ms (as the picture's axis: tiny kernels read 0.0000 ms).
std::string latencyText(double seconds) {
  return seconds >= 1e-4 ? fmt::format("{:.4f} ms", seconds * 1e3) : fmt::format("{:.4f} us", seconds * 1e6);
}

/// What the picture shows, in words: each task's best and when it reached it, the estimate.
void describe(const PlotArgs& a, const tune::TuningCurves& curves) {
  fmt::print("{}: {} records of {} tasks on {}{}\n", a.log, curves.records, curves.tasks.size(), curves.target,
             curves.otherTargetRecords ? fmt::format(" ({} records of other targets left out)", curves.otherTargetRecords) : "");
  for (const tune::TaskCurve& t : curves.tasks) {
    std::string best = "no valid trial";
    if (!t.gflops.empty()) {
      // The trial that reached the best: the last point is the task's last trial, which repeats
      // the best unless it improved it.
      size_t reached = t.gflops.size() > 1 && t.gflops[t.gflops.size() - 2] == t.gflops.back() ? t.gflops.size() - 2 : t.gflops.size() - 1;
      best = fmt::format("best {:.2f} GFLOPS at trial {}", t.gflops.back(), t.trial[reached]);
    }
    fmt::print("  {:>3}  {:<28}  {:>5} trials  {}{}{}\n", t.number, t.name, t.trials, best,
               t.weight != 1 && t.inNetwork ? fmt::format("  weight {:g}", t.weight) : "", t.inNetwork ? "" : "  (not the network's)");
  }
  const tune::LatencyCurve& n = curves.network;
  if (n.latency.empty()) {
    fmt::print("estimated network latency: unknown (a task has no valid trial yet)\n");
  } else {
    fmt::print("estimated network latency: {} after {} trials ({:.0f} s), from {} when every task had a valid one (trial {}); {}\n",
               latencyText(n.latency.back()), n.trial.back(), n.seconds.back(), latencyText(n.latency.front()), n.trial.front(),
               curves.weighted ? fmt::format("weights from {}", a.model.model) : "each task counted once (--model gives the network's weights)");
  }
  fmt::print("wrote {}\n", a.output);
}

void plot(PlotArgs& a) {
  checkOutputFile(a.output, a.force);
  tune::RecordFile file = tune::readRecords(a.log);
  tune::warnSkippedLines(file, a.log);
  tune::TuningCurveOptions options;
  try {
    options.target = tune::curveTarget(file.records, a.target);
  } catch (const Error& e) {
    throw e.withContext(a.log);
  }
  if (!a.model.model.empty()) options.weights = weightsOf(a, options.target);
  tune::TuningCurves curves = tune::tuningCurves(file, options);
  draw(a, curves);
  describe(a, curves);
}

}  // namespace

void addRecordsPlotCommand(CLI::App* records) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* c = records->add_subcommand("plot", "draw each task's best GFLOPS over its trials and the estimated network latency over time");
  c->add_option("log", args->log, "the records log")->required();
  c->add_option("-o,--output", args->output, "the picture to write: FILE.svg or FILE.png")->required();
  c->add_option("--target", args->target, "the target whose records to draw (default: the log's only target)");
  c->add_option("--title", args->title, "the picture's title");
  c->add_flag("--force", args->force, "replace the output if it exists");
  addModelSourceOptions(c, args->model);
  c->get_option("--model")->required(false)->description(
      "the network the log tuned (a zoo name or an ONNX file): its tasks' weights in the estimated latency (default: each task once)");
  c->callback([args] { plot(*args); });
}

}  // namespace tessel::cli
