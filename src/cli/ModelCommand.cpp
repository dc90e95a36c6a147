#include "cli/ModelCommand.h"

#include "cli/ModelArgs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "graph/Build.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "ops/Schedules.h"
#include "cli/ReportErrors.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

/// compile's own options beside the shared ones.
struct CompileArgs : ModelArgs {
  std::string output;
  bool noFuse = false, naive = false;
};

void listTasks(const ModelArgs& a) {
  checkCpuTarget(a.target);
  auto tasks = graph::extractTasks(preparedModel(a));
  fmt::print("Extract tasks...\n{}", graph::formatTasks(tasks));
}

void compile(const CompileArgs& a) {
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

  auto compileArgs = std::make_shared<CompileArgs>();
  CLI::App* compileCommand = app.add_subcommand("compile", "compile a zoo network into a deployable module directory");
  addModelOptions(compileCommand, *compileArgs);
  compileCommand->add_option("-o,--output", compileArgs->output, "the module directory to write")->required();
  compileCommand->add_flag("--no-fuse", compileArgs->noFuse, "one function per operator");
  compileCommand->add_flag("--naive", compileArgs->naive, "no schedule at all (debugging)");
  compileCommand->callback([compileArgs] { reportingErrors([&] { compile(*compileArgs); }); });
}

}  // namespace tessel::cli
