#include "cli/ModelCommand.h"

#include "cli/ModelArgs.h"
#include "cli/OptionChecks.h"
#include "cli/TuningTasks.h"
#include "cli/VtaFlow.h"

#include <fmt/format.h>

#include <optional>

#include "driver/BuildNetwork.h"
#include "driver/ModuleOutput.h"
#include "graph/Build.h"
#include "graph/GraphParams.h"
#include "graph/ModelZoo.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "support/Files.h"

namespace tessel::cli {

namespace {

/// compile's own options beside the shared ones.
struct CompileArgs : ModelArgs {
  std::string output, records;
  bool noFuse = false, naive = false, noShippedRecords = false;
  std::string channelTile = "auto";  ///< GPU targets: output channels per thread of a convolution
  std::string reductionParts = "auto";  ///< GPU targets: parts of a reduction split across threads
};

/// The flags as the driver's build options, each parsed here once (the model is loaded later).
driver::BuildNetworkOptions buildOptions(const CompileArgs& a) {
  driver::BuildNetworkOptions options;
  options.prepare = prepareOptions(a);
  options.records = a.records;
  options.shippedRecords = !a.noShippedRecords;
  options.naive = a.naive;
  options.fuse = !a.noFuse;
  options.output = a.output;
  // A CPU build reads no host target: --target-host is for GPU and VTA targets, as it always was.
  if (a.parsedTarget.isGpu()) options.targetHost = a.targetHost;
  options.channelTile = a.channelTile;
  options.reductionParts = a.reductionParts;
  return options;
}

/// The last line: what was built, with what, and the module's sizes.
void printCompiled(const CompileArgs& a, const driver::BuildNetworkResult& built) {
  const graph::BuildReport& report = built.report;
  if (const std::optional<driver::GpuBuildSummary>& gpu = built.gpu) {
    fmt::print("compiled {} for {}{} into {}: {} fused functions, {} distinct kernels ({}, limits of {}; code built in {:.1f} s); "
               "activations {:.1f} MiB planned, {:.1f} MiB without reuse\n",
               a.model, a.target, gpu->host == "cpu" ? "" : fmt::format(" (host {})", gpu->host), a.output, report.functions,
               report.distinctKernels, gpu->schedules, gpu->limits, report.compileSeconds, report.plannedBytes / 1048576.0,
               report.naiveBytes / 1048576.0);
    return;
  }
  fmt::print("compiled {} for {} into {}: {} fused functions, {} distinct kernels (compiled in {:.1f} s); activations {:.1f} MiB "
             "planned, {:.1f} MiB without reuse\n",
             a.model, a.parsedTarget.cpu.summary(), a.output, report.functions, report.distinctKernels, report.compileSeconds,
             report.plannedBytes / 1048576.0, report.naiveBytes / 1048576.0);
}

/// compile for a CPU or GPU target through driver::buildNetwork (VTA: cli/VtaFlow.h).
void compile(const CompileArgs& a) {
  driver::checkGpuRulesApply(a.parsedTarget, a.channelTile, a.reductionParts);
  if (isVtaTarget(a.target)) {
    TESSEL_CHECK(!a.naive && !a.noFuse, "--naive and --no-fuse apply to CPU targets");
    return compileVta(a, a.output, a.records, !a.noShippedRecords);
  }
  if (!a.parsedTarget.isGpu()) checkCpuTarget(a.target);
  driver::BuildNetworkOptions options = buildOptions(a);
  driver::checkBuildNetworkOptions(options);  // a bad option fails before the model loads
  options.model = loadNetwork(a);
  driver::BuildNetworkResult built = driver::buildNetwork(options);
  for (const std::string& line : built.lines) fmt::print("{}\n", line);
  for (const std::string& skipped : built.warnings) fmt::print(stderr, "warning: {}\n", skipped);
  if (!a.params.empty()) fmt::print("weights from {}\n", a.params);
  printCompiled(a, built);
}

/// tasks' options beside the shared ones.
struct TasksArgs : ModelArgs {
  std::string scheduler = "autotvm";
  bool dags = false;
};

/// params' options: the network's parameters depend on its layout (and nothing else), the
/// batch is accepted so that the same options as compile's may be passed.
struct ParamsArgs : ModelArgs {
  std::string output;
  bool force = false;
};

void writeParams(const ParamsArgs& a) {
  checkOutputFile(a.output, a.force);
  graph::Graph g = loadModel(a);
  graph::saveGraphParams(g, a.output);
  int64_t values = 0;
  const auto learned = graph::learnedParams(g);
  for (const auto& [name, tensor] : learned) values += tensor.numel();
  fmt::print("wrote the {} parameters of {} ({}, {} values) to {}\n", learned.size(), a.model, a.layout, values, a.output);
}

}  // namespace

void addModelCommands(CLI::App& app) {
  auto tasksArgs = std::make_shared<TasksArgs>();
  CLI::App* tasks = app.add_subcommand(
      "tasks", "list the tasks `tessel tune` tunes for a network (zoo or ONNX), numbered as `tune --tasks` takes them; for "
               "template tuning, also the functions no template applies to");
  addModelOptions(tasks, *tasksArgs);
  addSchedulerOption(tasks, tasksArgs->scheduler);
  tasks->add_flag("--dag", tasksArgs->dags, "also print each task's compute DAG");
  tasks->callback([tasksArgs] { printNetworkTasks(*tasksArgs, searchKind(tasksArgs->scheduler), ColdCacheMode::Auto, tasksArgs->dags); });

  auto compileArgs = std::make_shared<CompileArgs>();
  CLI::App* compileCommand = app.add_subcommand("compile", "compile a network (zoo or ONNX) into a deployable module directory");
  addModelOptions(compileCommand, *compileArgs);
  compileCommand->add_option("-o,--output", compileArgs->output,
                             "the module directory to write: a new or empty directory, or a module, which is replaced "
                             "as a whole once the new one is complete")
      ->required();
  compileCommand->add_flag("--no-fuse", compileArgs->noFuse, "one function per operator");
  compileCommand->add_flag("--naive", compileArgs->naive, "no schedule at all (debugging)");
  compileCommand->add_option("--records", compileArgs->records,
                             "a records log (tessel tune --log): each kernel takes the best record of its workload that "
                             "replays (apply-history-best), the others the default schedule; says which and why");
  compileCommand->add_flag("--no-shipped-records", compileArgs->noShippedRecords,
                           "kernels without a record in --records take the default schedule, not the records shipped with "
                           "tessel for the target's class of device (records/)");
  compileCommand->add_option("--params", compileArgs->params,
                              "a params file (tessel params) with the network's weights, for the same --layout; default: "
                              "random weights");
  compileCommand->add_option("--channel-tile", compileArgs->channelTile,
                             "GPU targets: output channels each thread computes in a direct convolution: auto (4 or 2 where the "
                             "device keeps enough threads busy), 1, 2 or 4");
  compileCommand->add_option("--reduction-parts", compileArgs->reductionParts,
                             "GPU targets: parts each reduction with few outputs is split into across threads (partial sums "
                             "added in shared memory): auto (where the device would have too few threads), 1 (never), 2, 4, 8 "
                             "or 16 (wherever the reduction axis divides)");
  compileCommand->callback([compileArgs] { compile(*compileArgs); });

  auto paramsArgs = std::make_shared<ParamsArgs>();
  CLI::App* params = app.add_subcommand("params", "write the parameters of a network (zoo or ONNX) to a params file");
  addModelSourceOptions(params, *paramsArgs);
  params->add_option("-o,--output", paramsArgs->output, "the params file to write")->required();
  params->add_flag("--force", paramsArgs->force, "replace the output if it exists");
  params->callback([paramsArgs] { writeParams(*paramsArgs); });
}

}  // namespace tessel::cli
