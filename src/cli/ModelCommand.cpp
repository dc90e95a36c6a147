#include "cli/ModelCommand.h"

#include "cli/GpuTargets.h"
#include "cli/ModelArgs.h"
#include "cli/OptionChecks.h"
#include "cli/TuningTasks.h"
#include "cli/VtaFlow.h"

#include <fmt/format.h>

#include <optional>

#include "driver/BuildNetwork.h"
#include "driver/ModuleOutput.h"
#include "driver/ShippedRecordsUse.h"
#include "graph/Build.h"
#include "graph/GpuTargetLimits.h"
#include "graph/GraphParams.h"
#include "graph/ModelZoo.h"
#include "ops/GpuSchedules.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "support/Files.h"
#include "tune/HistoryBest.h"
#include "tune/ShippedRecords.h"

namespace tessel::cli {

namespace {

/// compile's own options beside the shared ones.
struct CompileArgs : ModelArgs {
  std::string output, records;
  bool noFuse = false, naive = false, noShippedRecords = false;
  std::string channelTile = "auto";  ///< GPU targets: output channels per thread of a convolution
  std::string reductionParts = "auto";  ///< GPU targets: parts of a reduction split across threads
};

using driver::ShippedRecordsUse;

/// After the build: how many kernels took a shipped record, or why none did (driver::ShippedRecordsUse).
void reportShippedUse(const ShippedRecordsUse& shipped, const std::optional<tune::HistoryBest>& best, const std::string& target) {
  if (std::string line = shipped.summary(best, target); !line.empty()) fmt::print("{}\n", line);
  for (const std::string& skipped : shipped.skipped(best)) fmt::print(stderr, "warning: {}\n", skipped);
}

/// compile --target cuda|opencl: the standard passes without the CPU's packed and fused
/// convolution variants (their layouts and tiles are the CPU kernels'), every function with the
/// default GPU schedule, or its best record of the log (--records: apply-history-best, as for
/// the CPU; under --winograd auto a candidate layer measured both ways takes the faster form),
/// verified against the limits of the device present or of the target's profile.
void compileGpu(const CompileArgs& a) {
  TESSEL_CHECK(!a.naive, "--naive: a GPU kernel needs its loops bound to blocks and threads; the naive schedule has none");
  TESSEL_CHECK(a.records.empty() || (a.channelTile == "auto" && a.reductionParts == "auto"),
               "--channel-tile and --reduction-parts set the default GPU schedule; with --records the records choose them");
  std::string host = checkGpuTargetHost(a.target, a.targetHost);
  driver::checkModuleOutput(a.output);
  // Shipped records choose their own tiles: an explicit default-schedule rule leaves them out.
  bool rulesGiven = a.channelTile != "auto" || a.reductionParts != "auto";
  ShippedRecordsUse shipped = a.noShippedRecords || rulesGiven ? ShippedRecordsUse{} : ShippedRecordsUse::of(tune::shippedRecordSetForGpu(a.parsedTarget), a.parsedTarget);
  // The log is read before the network is prepared: a bad log fails before any work.
  std::optional<tune::HistoryBest> best = shipped.historyBest(a.records, a.parsedTarget);
  PreparedModel prepared = prepareModel(a);
  RecordsChoice chosen = best ? chooseByRecords(prepared, *best) : RecordsChoice{prepared.chosen, winogradSummary(prepared, prepared.chosen)};
  const graph::Graph& g = chosen.graph;
  graph::BuildOptions options;
  options.target = a.parsedTarget;
  options.fuse = !a.noFuse;
  options.gpuLimits = graph::gpuLimitsForBuild(a.parsedTarget);
  const passes::GpuLimits& limits = *options.gpuLimits;
  ops::GpuScheduleOptions rules = ops::gpuScheduleOptionsFor(limits, a.parsedTarget.matmulPrecision);
  if (a.channelTile != "auto") {
    TESSEL_CHECK(a.channelTile == "1" || a.channelTile == "2" || a.channelTile == "4", "--channel-tile: '{}' is not auto, 1, 2 or 4",
                 a.channelTile);
    rules.channelTile = std::stoi(a.channelTile);
  }
  if (a.reductionParts != "auto") {
    TESSEL_CHECK(a.reductionParts == "1" || a.reductionParts == "2" || a.reductionParts == "4" || a.reductionParts == "8" ||
                     a.reductionParts == "16",
                 "--reduction-parts: '{}' is not auto, 1, 2, 4, 8 or 16", a.reductionParts);
    rules.reductionParts = std::stoi(a.reductionParts);
  }
  options.schedule = best ? gpuRecordsProvider(*best, limits, a.parsedTarget) : driver::defaultGpuSchedules(rules);
  graph::BuildReport report;
  driver::writeModule(a.output, [&](const std::string& directory) { report = graph::buildGraph(g, directory, options); });
  if (!a.records.empty()) fmt::print("{}: {}\n", a.records, best->summary());
  reportShippedUse(shipped, best, a.parsedTarget.str());
  if (!chosen.summary.empty()) fmt::print("{}\n", chosen.summary);
  if (!a.params.empty()) fmt::print("weights from {}\n", a.params);
  fmt::print("compiled {} for {}{} into {}: {} fused functions, {} distinct kernels ({}, limits of {}; code built in {:.1f} s); "
             "activations {:.1f} MiB planned, {:.1f} MiB without reuse\n",
             a.model, a.target, host == "cpu" ? "" : fmt::format(" (host {})", host), a.output, report.functions, report.distinctKernels,
             best ? "best records, else the default GPU schedule" : "default GPU schedule", options.gpuLimits->profile,
             report.compileSeconds, report.plannedBytes / 1048576.0, report.naiveBytes / 1048576.0);
}

void compile(const CompileArgs& a) {
  TESSEL_CHECK(a.channelTile == "auto" || a.parsedTarget.isGpu(), "--channel-tile applies to GPU targets (cuda, opencl)");
  TESSEL_CHECK(a.reductionParts == "auto" || a.parsedTarget.isGpu(), "--reduction-parts applies to GPU targets (cuda, opencl)");
  if (isVtaTarget(a.target)) {
    TESSEL_CHECK(!a.naive && !a.noFuse, "--naive and --no-fuse apply to CPU targets");
    return compileVta(a, a.output, a.records, !a.noShippedRecords);
  }
  if (a.parsedTarget.isGpu()) return compileGpu(a);
  checkCpuTarget(a.target);
  driver::BuildNetworkOptions options;
  options.prepare = prepareOptions(a);  // a bad option fails before the model loads
  options.records = a.records;
  options.shippedRecords = !a.noShippedRecords;
  options.naive = a.naive;
  options.fuse = !a.noFuse;
  options.output = a.output;
  options.model = loadNetwork(a);
  driver::BuildNetworkResult built = driver::buildNetwork(options);
  for (const std::string& line : built.lines) fmt::print("{}\n", line);
  for (const std::string& skipped : built.warnings) fmt::print(stderr, "warning: {}\n", skipped);
  if (!a.params.empty()) fmt::print("weights from {}\n", a.params);
  const graph::BuildReport& report = built.report;
  fmt::print("compiled {} for {} into {}: {} fused functions, {} distinct kernels (compiled in {:.1f} s); activations {:.1f} MiB "
             "planned, {:.1f} MiB without reuse\n",
             a.model, a.parsedTarget.cpu.summary(), a.output, report.functions, report.distinctKernels, report.compileSeconds,
             report.plannedBytes / 1048576.0, report.naiveBytes / 1048576.0);
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
