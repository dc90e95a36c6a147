#include "driver/TuneNetwork.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "driver/AutoScheduleTasks.h"
#include "driver/DefaultSchedules.h"
#include "driver/GpuSchedules.h"
#include "driver/ModuleOutput.h"
#include "driver/NetworkEvaluation.h"
#include "driver/NetworkMeasurement.h"
#include "driver/TemplateTuning.h"
#include "driver/TuningSession.h"
#include "graph/Build.h"
#include "ops/Schedules.h"
#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "tune/HistoryBest.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/Tuner.h"

namespace tessel::driver {

namespace {

/// The options' own checks, before any work: a run must not tune for hours and then fail to
/// write its module or its log, nor find a combination it cannot measure.
void checkOptions(const TuneNetworkOptions& o) {
  const target::Target& target = o.prepare.target;
  TESSEL_CHECK(target.isCpu() || target.isGpu(), "target '{}': a network is tuned for a CPU or a GPU target (VTA's tasks have their own flow)",
               target.str());
  if (target.isGpu()) {
    TESSEL_CHECK(!o.measure.enableCpuCacheFlush, "--enable-cpu-cache-flush: GPU candidates are timed on the device, with its memory warm");
    TESSEL_CHECK(o.coldCache != ColdCacheMode::Always, "--cold-cache always: GPU candidates are timed on the device, with its memory warm");
    // The local runner's device is in this machine: its host, which runs the reference, is this CPU.
    TESSEL_CHECK(!o.measure.checkCorrectness || o.remote || o.gpuHost.mtriple.empty(),
                 "--target-host '{}' with --runner local --check-correctness: the local device's host is this machine's CPU "
                 "(leave out --target-host, or measure on the device's own machine with --runner rpc)",
                 o.gpuHost.text);
  }
  TESSEL_CHECK(o.nTrial >= 1, "--n-trial must be at least 1, got {}", o.nTrial);
  TESSEL_CHECK(o.earlyStopping >= 0, "--early-stopping must not be negative, got {}", o.earlyStopping);
  TESSEL_CHECK(o.batchSize >= 1, "--batch-size must be at least 1, got {}", o.batchSize);
  TESSEL_CHECK(o.evaluateRepeat >= 1, "--evaluate-repeat must be at least 1, got {}", o.evaluateRepeat);
  tune::autotvm::checkTunerName(o.tuner);
  if (o.remote) {
    const RemoteMeasurement& r = *o.remote;
    TESSEL_CHECK(r.makeRunner, "a remote measurement without its runner");
    TESSEL_CHECK(target.isGpu() || r.scheduledTarget, "a remote measurement of CPU kernels without the devices' target");
    TESSEL_CHECK(!target.isGpu() || (r.gpuLimits && r.benchmark), "a remote measurement of GPU kernels without the devices' limits and timing");
  }
  TESSEL_CHECK(o.buildModule || (o.output.empty() && !o.evaluate), "--output and the evaluation need the tuned module built");
  if (!o.output.empty()) checkModuleOutput(o.output);
  TESSEL_CHECK(!o.log.empty(), "--log: a tuning run needs a records log to append its trials to");
  checkWritableFilePath(o.log, "--log");
}

/// The log's records before this run (resumed trials, or history), and the check that an
/// existing log is a records log: appending JSON lines to a params file would ruin it.
std::vector<tune::TuningRecord> readEarlierRecords(const TuneNetworkOptions& o, const TuneCallbacks& callbacks) {
  auto note = [&](const std::string& line) {
    if (callbacks.onNote) callbacks.onNote(line);
  };
  if (!std::filesystem::exists(o.log)) {
    if (o.resume) note(fmt::format("Nothing to resume: {} does not exist yet", o.log));
    return {};
  }
  auto file = tune::readRecords(o.log);
  if (!o.forceLog && !tune::looksLikeRecordsLog(file))
    fail("--log {}: the file exists and is not a records log ({}); pass --force to append to it anyway", o.log,
         file.report.describeSkipped(1));
  tune::warnSkippedLines(file, o.log);
  if (o.resume) note(fmt::format("Resuming from {}: {} records", o.log, file.records.size()));
  return std::move(file.records);
}

/// One outcome per selected task, named as listed.
std::vector<TunedTask> outcomesOf(const std::vector<ListedTask>& selection) {
  std::vector<TunedTask> outcomes;
  for (const ListedTask& t : selection) {
    TunedTask o;
    o.number = t.number;
    o.name = t.function.name;
    o.workloadKey = recordedWorkloadKey(t);
    if (t.tuning) o.templateName = t.tuning->templateName;
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

/// The network built with the log's best records into `directory` (the options' output, written
/// whole, or a temporary one).
BuildReport buildWithBestRecords(const TuneNetworkOptions& o, const PreparedModel& prepared, const NetworkMeasurement& m,
                                 const std::string& directory) {
  auto best = tune::HistoryBest::fromLog(o.log, m.target);
  graph::BuildOptions build;
  build.target = m.target;
  std::optional<DefaultSchedules> defaults;
  if (m.gpuLimits) {
    build.gpuLimits = *m.gpuLimits;
    build.schedule = gpuRecordsProvider(best, *m.gpuLimits, m.target);
  } else {
    build.schedule = best.provider(defaults.emplace(m.target).provider());
  }
  RecordsChoice chosen = chooseByRecords(prepared, best);
  if (o.output.empty()) graph::buildGraph(chosen.graph, directory, build);
  else writeModule(o.output, [&](const std::string& staging) { graph::buildGraph(chosen.graph, staging, build); });
  return {best.summary(), chosen.summary, defaults ? defaults->summary() : "", o.output};
}

/// The tuned module in `tunedDirectory` timed: on a remote GPU alone, here against the untuned
/// build (`untuned`, the default schedules) in alternation.
NetworkEvaluation evaluate(const TuneNetworkOptions& o, const NetworkMeasurement& m, const graph::Graph& untuned,
                           const std::string& tunedDirectory, const std::string& scratch, const TuneCallbacks& callbacks) {
  if (m.gpuLimits && o.remote) {
    // On a device of the key, as `tessel benchmark --runner rpc` (the seed: number 1).
    NetworkEvaluation e;
    e.tuned = o.remote->benchmark(tunedDirectory, o.evaluateRepeat);
    return e;
  }
  const std::string untunedDirectory = scratch + "/untuned";
  graph::BuildOptions untunedBuild;
  untunedBuild.target = m.target;
  if (m.gpuLimits) {
    untunedBuild.gpuLimits = *m.gpuLimits;
    graph::buildGraph(untuned, untunedDirectory, untunedBuild);
    return timeAgainstUntuned(tunedDirectory, untunedDirectory, runtime::Device::parse(m.target.kindName()), o.evaluateRepeat);
  }
  untunedBuild.schedule = [rules = ops::cpuScheduleOptionsFor(m.target)](const te::ComputeDAG& dag) {
    return ops::defaultCpuSchedule(dag, rules);
  };
  graph::buildGraph(untuned, untunedDirectory, untunedBuild);
  // As many threads as the machine has free cores now (not at the start of the tuning).
  runtime::MachineLoad now = runtime::sampleMachineLoad(std::chrono::milliseconds(150));
  runtime::setKernelThreadCount(o.threads > 0 ? o.threads : runtime::kernelThreadsFor(now));
  const int threads = runtime::kernelThreadCount();
  if (threads < now.cores && callbacks.onNote)
    callbacks.onNote(fmt::format("machine busy: {}; timing with {} thread{}", now.describe(), threads, threads == 1 ? "" : "s"));
  return timeAgainstUntuned(tunedDirectory, untunedDirectory, runtime::Device::cpu(), o.evaluateRepeat);
}

}  // namespace

TuneNetworkResult tuneNetwork(const TuneNetworkOptions& o, const TuneCallbacks& callbacks) {
  checkOptions(o);
  TuneNetworkResult result;
  result.log = o.log;
  const std::vector<tune::TuningRecord> earlier = readEarlierRecords(o, callbacks);
  NetworkMeasurement m(o, callbacks);

  if (callbacks.onStage) callbacks.onStage(TuneStage::ExtractTasks);
  const PreparedModel prepared = prepareModel(o.model, o.prepare);
  // The tasks as `tessel tasks` lists them; the selection keeps their listed numbers.
  TaskListOptions listOptions;
  listOptions.search = o.search;
  listOptions.coldCache = o.coldCache;
  listOptions.target = m.target;
  if (m.gpuLimits) {
    listOptions.gpuLimits = m.gpuLimits;
    listOptions.gpuHost = o.gpuHost;
  }
  const TaskList list = listTuningTasks(prepared, listOptions);
  const std::vector<ListedTask> selection = selectTasks(list, o.tasks, o.ops);
  if (callbacks.onTasks) callbacks.onTasks(list, selection);

  tune::RecordLogWriter log(o.log);
  result.tasks = outcomesOf(selection);
  TuningSession session{.options = o,
                        .callbacks = callbacks,
                        .list = list,
                        .tasks = selection,
                        .builder = m.builder,
                        .runner = *m.runner,
                        .log = log,
                        .monitor = m.monitor ? &*m.monitor : nullptr,
                        .earlier = earlier,
                        .target = m.target,
                        .gpuLimits = m.gpuLimits,
                        .outcomes = result.tasks};
  result.summary = o.search == SearchKind::AutoScheduler ? autoScheduleTasks(session) : tuneTemplateTasks(session);
  if (callbacks.onTuned) callbacks.onTuned(result.summary);
  if (!o.buildModule) return result;

  if (callbacks.onStage) callbacks.onStage(TuneStage::Compile);
  TempDir scratch;
  const std::string tunedDirectory = o.output.empty() ? scratch.path() + "/tuned" : o.output;
  result.build = buildWithBestRecords(o, prepared, m, tunedDirectory);
  if (callbacks.onBuilt) callbacks.onBuilt(result.build);
  if (!o.evaluate) return result;

  if (callbacks.onStage) callbacks.onStage(TuneStage::Evaluate);
  result.evaluation = evaluate(o, m, prepared.chosen, tunedDirectory, scratch.path(), callbacks);
  if (callbacks.onEvaluated) callbacks.onEvaluated(*result.evaluation);
  return result;
}

}  // namespace tessel::driver
