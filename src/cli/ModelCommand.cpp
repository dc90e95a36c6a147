#include "cli/ModelCommand.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "graph/Build.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "cli/ReportErrors.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

struct ModelArgs {
  std::string model, layout = "NCHW", target = "cpu", output;
  int64_t batch = 1;
  bool noFuse = false, naive = false, noOptimize = false;
  std::string desiredLayout = "NHWC";
  std::vector<std::string> printAfter;
  graph::ModelOptions options() const {
    graph::ModelOptions o;
    o.batch = batch;
    o.layout = ops::parseLayout(layout);
    return o;
  }
};

void addModelOptions(CLI::App* c, ModelArgs& a) {
  c->add_option("--model", a.model, fmt::format("the network: {}", fmt::join(graph::modelNames(), ", ")))->required();
  c->add_option("--layout", a.layout, "NCHW or NHWC");
  c->add_option("--batch", a.batch, "batch size");
  c->add_option("--target", a.target, "target string, e.g. \"cpu -mcpu=native\"");
  c->add_option("--desired-layout", a.desiredLayout,
                "layout the image operators are converted to before building: NHWC (default: the CPU "
                "schedules' fastest), NCHW, or keep");
  c->add_flag("--no-optimize", a.noOptimize, "skip the graph passes (batch-norm folding, layout conversion, ...)");
  c->add_option("--print-after", a.printAfter, "print the graph after this pass (repeatable; 'all': after every one)");
}

/// The zoo network after the standard graph passes: what gets extracted, tuned and built.
graph::Graph preparedModel(const ModelArgs& a) {
  graph::OptimizeOptions options;
  options.desiredLayout = graph::parseDesiredLayout(a.desiredLayout);
  options.simplify = !a.noOptimize;
  graph::PassRunOptions run;
  run.printAfter = {a.printAfter.begin(), a.printAfter.end()};
  run.printTo = &std::cout;
  return graph::optimizeGraph(graph::buildModel(a.model, a.options()), options, run);
}

void checkCpuTarget(const std::string& target) {
  TESSEL_CHECK(target.rfind("cpu", 0) == 0 || target.rfind("llvm", 0) == 0, "target '{}': only CPU targets can build networks yet", target);
}

void listTasks(const ModelArgs& a) {
  checkCpuTarget(a.target);
  auto tasks = graph::extractTasks(preparedModel(a));
  fmt::print("Extract tasks...\n{}", graph::formatTasks(tasks));
}

void compile(const ModelArgs& a) {
  checkCpuTarget(a.target);
  auto g = preparedModel(a);
  graph::BuildOptions options;
  options.target = a.target;
  options.fuse = !a.noFuse;
  if (!a.naive) options.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  auto report = graph::buildGraph(g, a.output, options);
  fmt::print("compiled {} into {}: {} fused functions, {} distinct kernels (compiled in {:.1f} s); activations {:.1f} MiB planned, {:.1f} MiB without reuse\n",
             a.model, a.output, report.functions, report.distinctKernels, report.compileSeconds, report.plannedBytes / 1048576.0,
             report.naiveBytes / 1048576.0);
}

}  // namespace

void addModelCommands(CLI::App& app) {
  auto tasksArgs = std::make_shared<ModelArgs>();
  CLI::App* tasks = app.add_subcommand("tasks", "list the tuning tasks of a zoo network");
  addModelOptions(tasks, *tasksArgs);
  tasks->callback([tasksArgs] { reportingErrors([&] { listTasks(*tasksArgs); }); });

  auto compileArgs = std::make_shared<ModelArgs>();
  CLI::App* compileCommand = app.add_subcommand("compile", "compile a zoo network into a deployable module directory");
  addModelOptions(compileCommand, *compileArgs);
  compileCommand->add_option("-o,--output", compileArgs->output, "the module directory to write")->required();
  compileCommand->add_flag("--no-fuse", compileArgs->noFuse, "one function per operator");
  compileCommand->add_flag("--naive", compileArgs->naive, "no schedule at all (debugging)");
  compileCommand->callback([compileArgs] { reportingErrors([&] { compile(*compileArgs); }); });
}

}  // namespace tessel::cli
