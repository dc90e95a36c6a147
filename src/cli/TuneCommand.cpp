#include "cli/TuneCommand.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <filesystem>

#include "cli/AutoScheduleTasks.h"
#include "cli/GpuTargets.h"
#include "cli/OptionChecks.h"
#include "cli/ModelArgs.h"
#include "cli/RpcCommands.h"
#include "cli/TuningTasks.h"
#include "cli/VtaFlow.h"
#include "driver/ModuleOutput.h"
#include "graph/Build.h"
#include "graph/GpuTargetLimits.h"
#include "graph/TaskExtraction.h"
#include "ops/Schedules.h"
#include "codegen/GpuBuild.h"
#include "runtime/CudaDevice.h"
#include "runtime/GraphExecutor.h"
#include "runtime/OpenclDevice.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "support/Files.h"
#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "tune/Confirmation.h"
#include "tune/LoadMonitor.h"
#include "support/TempDir.h"
#include "tune/HistoryBest.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/RecordLog.h"
#include "tune/RunEstimate.h"
#include "tune/TaskScheduler.h"
#include "tune/autotvm/ResumedTrials.h"
#include "tune/autotvm/TuneTask.h"

namespace tessel::cli {

namespace {

/// The line that sums up the tasks' decisions (tune/Confirmation.h).
std::string decisionSummary(int decided, int keptDefault, int withoutRounds, const char* otherwise) {
  if (withoutRounds == 0)
    return fmt::format("Confirmed {} tasks by interleaved re-measurement: {} kept the default schedule, {} {}\n", decided, keptDefault,
                       decided - keptDefault, otherwise);
  return fmt::format("Confirmed {} tasks: {} kept the default schedule, {} {} ({} by interleaved re-measurement; for {} the default "
                     "was more than {}x faster than every candidate)\n",
                     decided, keptDefault, decided - keptDefault, otherwise, decided - withoutRounds, withoutRounds,
                     tune::kContenderSlack);
}

struct TuneArgs : ModelArgs {
  std::string tuner = "xgb", log, output, ops, coldCache = "auto", scheduler = "autotvm", taskScheduler;
  std::vector<size_t> onlyTasks;  ///< the numbers of the tasks to tune, as listed (TuningTasks.h; empty: all)
  int64_t nTrial = 1000, earlyStopping = 0;
  bool resume = false, transferLearning = false, checkCorrectness = false, cacheFlush = false, noEvaluate = false, force = false;
  bool listTasks = false;
  int nParallel = 0, number = 4, repeat = 3, confirmTop = 5, confirmRounds = 5, threads = 0, evaluateRepeat = 10;
  double busyPause = 10;
  double busyPauseShare = 0.2;
  size_t batchSize = 8;
  double minRepeatMs = 0, timeout = 10, buildTimeout = 10, cooldown = 0;
  uint64_t seed = 0;
  RunnerArgs runnerArgs;  ///< --runner local|rpc and the rpc runner's options
};

struct Evaluation {
  double mean = 0, stddev = 0;
};

/// The tuned and the untuned module timed in alternation, and the rounds' own ratios of the
/// untuned time over the tuned.
struct Comparison {
  Evaluation tuned, untuned;
  runtime::RoundRatios rounds;
  /// "speedup 1.08x (timed in alternation; round by round 1.07x, the middle half of the rounds
  /// 1.02-1.11x)", with ": a tie on this machine" where the middle half holds 1: one ratio of a
  /// noisy machine's means would otherwise read as a gain or a loss.
  std::string speedup() const {
    return fmt::format("speedup {:.2f}x (timed in alternation; round by round {:.2f}x, the middle half of the rounds {:.2f}-{:.2f}x{})",
                       untuned.mean / tuned.mean, rounds.median, rounds.lowerQuartile, rounds.upperQuartile,
                       rounds.tie() ? ": a tie on this machine" : "");
  }
};

/// The tuned and the untuned module, timed in alternation (10 rounds of at least 100 ms each):
/// the speedup printed is a same-run ratio.
Comparison evaluate(const std::string& tunedDirectory, const std::string& untunedDirectory, const runtime::Device& device,
                    int repeat) {
  auto tuned = runtime::GraphExecutor::load(tunedDirectory, {device});
  auto untuned = runtime::GraphExecutor::load(untunedDirectory, {device});
  tuned.setZeroInputs();
  untuned.setZeroInputs();
  runtime::TimeEvaluatorOptions timing;
  timing.number = 1;
  timing.repeat = repeat;
  timing.minRepeatMs = 100;
  auto r = runtime::timeInterleaved({[&] { tuned.run(); }, [&] { untuned.run(); }}, timing);
  return {{r[0].mean * 1e3, r[0].stddev * 1e3}, {r[1].mean * 1e3, r[1].stddev * 1e3}, runtime::roundRatios(r[1], r[0])};
}

void tune(const TuneArgs& a) {
  if (a.listTasks) return printNetworkTasks(a, searchKind(a.scheduler), coldCacheMode(a.coldCache), false, a.onlyTasks, parseOps(a.ops));
  // Required, but not for --list-tasks: refused as the parser refuses a missing option.
  if (a.log.empty()) throw CLI::RequiredError("--log");
  if (isVtaTarget(a.target)) {
    VtaTuneOptions v;
    v.tuner = a.tuner;
    v.log = a.log;
    v.nTrial = a.nTrial;
    v.earlyStopping = a.earlyStopping;
    v.batchSize = a.batchSize;
    v.seed = a.seed;
    v.number = a.number;
    v.repeat = a.repeat;
    v.timeout = a.timeout;
    v.onlyTasks = a.onlyTasks;
    v.ops = parseOps(a.ops);
    v.resume = a.resume;
    v.noEvaluate = a.noEvaluate;
    v.runner = a.runnerArgs;
    tuneVta(a, v);
    return;
  }
  // GPU targets: the functions' kernels run on a device; the host target only compiles the
  // correctness reference (GpuTargets.h).
  const bool gpu = a.parsedTarget.isGpu();
  std::string gpuHost;
  if (gpu) {
    gpuHost = checkGpuTargetHost(a.target, a.targetHost);
    TESSEL_CHECK(!a.cacheFlush, "--enable-cpu-cache-flush: GPU candidates are timed on the device, with its memory warm");
    TESSEL_CHECK(a.coldCache != "always", "--cold-cache always: GPU candidates are timed on the device, with its memory warm");
    // The local runner's device is in this machine: its host, which runs the reference, is this CPU.
    TESSEL_CHECK(!a.checkCorrectness || a.runnerArgs.runner != "local" || gpuHost.find("-mtriple") == std::string::npos,
                 "--target-host '{}' with --runner local --check-correctness: the local device's host is this machine's CPU "
                 "(leave out --target-host, or measure on the device's own machine with --runner rpc)",
                 a.targetHost);
  } else {
    checkCpuTarget(a.target);
  }
  TESSEL_CHECK(a.nTrial >= 1, "--n-trial must be at least 1, got {}", a.nTrial);
  TESSEL_CHECK(a.earlyStopping >= 0, "--early-stopping must not be negative, got {}", a.earlyStopping);
  auto ops = parseOps(a.ops);
  tune::autotvm::checkTunerName(a.tuner);  // before any work
  // Where the results go is checked before any work: a run must not tune for hours and then
  // fail to write its module or its log.
  if (!a.output.empty()) driver::checkModuleOutput(a.output);
  checkWritableFilePath(a.log, "--log");
  // The earlier trials (resumed, or history for transfer learning), and the check that an
  // existing --log is a records log: appending JSON lines to a params file would ruin it.
  std::vector<tune::TuningRecord> earlier;
  if (std::filesystem::exists(a.log)) {
    auto file = tune::readRecords(a.log);
    if (!a.force && !tune::looksLikeRecordsLog(file))
      fail("--log {}: the file exists and is not a records log ({}); pass --force to append to it anyway", a.log,
           file.report.describeSkipped(1));
    tune::warnSkippedLines(file, a.log);
    earlier = std::move(file.records);
    if (a.resume) fmt::print("Resuming from {}: {} records\n", a.log, earlier.size());
  } else if (a.resume) {
    fmt::print("Nothing to resume: {} does not exist yet\n", a.log);
  }

  tune::LocalBuilderOptions builderOptions;
  builderOptions.nParallel = a.nParallel;
  builderOptions.timeout = std::chrono::milliseconds(int64_t(a.buildTimeout * 1000));
  tune::LocalBuilder builder(builderOptions);
  tune::LocalRunnerOptions runnerOptions;
  runnerOptions.number = a.number;
  runnerOptions.repeat = a.repeat;
  runnerOptions.minRepeatMs = a.minRepeatMs;
  runnerOptions.timeoutSeconds = a.timeout;
  runnerOptions.cooldownIntervalSeconds = a.cooldown;
  runnerOptions.enableCpuCacheFlush = a.cacheFlush;
  runnerOptions.checkCorrectness = a.checkCorrectness;
  // Kernel threads from the cores other programs leave free: a 2-thread kernel sharing a core
  // with another program measures that program, not itself.
  bool local = a.runnerArgs.runner == "local";
  if (local && !gpu) {
    runtime::MachineLoad load = runtime::sampleMachineLoad(std::chrono::milliseconds(300));
    runnerOptions.threads = a.threads > 0 ? a.threads : runtime::kernelThreadsFor(load);
    runnerOptions.passiveWait = runnerOptions.threads < load.cores;
    if (runnerOptions.threads < load.cores)
      fmt::print("machine busy: {}; candidates are measured with {} thread{} and results may be noisy\n", load.describe(),
                 runnerOptions.threads, runnerOptions.threads == 1 ? "" : "s");
  }
  // A remote runner checks the tracker and the key here, before any work.
  auto runner = makeRunner(a.runnerArgs, runnerOptions);
  const target::Target target = gpu ? a.parsedTarget : target::Target::parse(targetForDevices(a.runnerArgs, a.target));
  const target::Target gpuHostTarget = target::Target::parse(gpu ? gpuHost : "cpu");
  // The limits GPU kernels are verified against: the remote device's, or this machine's device
  // (the profile for a named -device= or without one).
  passes::GpuLimits gpuLimits;
  if (gpu && local) {
    std::string why;
    bool cuda = codegen::gpuDialectOfTarget(target) == codegen::GpuDialect::Cuda;
    bool present = cuda ? runtime::cudaDeviceAvailable(&why) : runtime::openclDeviceAvailable(&why);
    TESSEL_CHECK(present, "--target {} --runner local: candidates run on this machine's device, and {}; measure on a machine with "
                 "one through --runner rpc (`tessel server --device {}`)", target.str(), why, cuda ? "cuda" : "opencl");
  }
  if (gpu) {
    if (!local) {
      gpuLimits = gpuLimitsOfDevices(a.runnerArgs, target.str());  // prints them
    } else {
      gpuLimits = graph::gpuLimitsForBuild(target);
      fmt::print("GPU kernels verified against the limits of {}: {} threads per block, {} bytes of shared memory\n",
                 gpuLimits.profile, gpuLimits.maxThreadsPerBlock, gpuLimits.maxSharedMemoryPerBlock);
    }
  }
  std::optional<tune::LoadMonitor> monitor;
  if (local && !gpu) {
    tune::LoadMonitorOptions m;
    m.pauseSeconds = a.busyPause;
    m.pauseShare = a.busyPauseShare;
    m.warnTo = stdout;
    monitor.emplace(*runner, m);
  }
  fmt::print("Extract tasks...\n");
  PreparedModel prepared = prepareModel(a);
  const graph::Graph& g = prepared.chosen;
  // The tasks as `tessel tasks` lists them (TuningTasks.h); --tasks and --ops select by the
  // listed numbers, which every line about a task keeps.
  TaskListOptions listOptions;
  listOptions.search = searchKind(a.scheduler);
  listOptions.coldCache = coldCacheMode(a.coldCache);
  listOptions.target = target;
  if (gpu) {
    listOptions.gpuLimits = gpuLimits;
    listOptions.gpuHost = gpuHostTarget;
  }
  const TaskList list = listTuningTasks(prepared, listOptions);
  const std::vector<ListedTask> selection = selectTasks(list, a.onlyTasks, ops);
  fmt::print("{}", formatTaskList(list, a.onlyTasks, ops));
  tune::RecordLogWriter log(a.log);
  if (a.scheduler == "auto") {
    std::vector<graph::Task> autoTasks;
    AutoScheduleOptions o;
    for (const ListedTask& t : selection) {
      autoTasks.push_back(t.function);
      o.coldCache.push_back(t.measureCold);
      o.prefixes.push_back(taskPrefix(t, list));
      o.numbers.push_back(t.number);
    }
    o.confirmTop = a.confirmTop;
    o.confirmRounds = a.confirmRounds;
    o.target = target;
    if (gpu) {
      o.gpuLimits = gpuLimits;
      o.hostTarget = gpuHostTarget;
    }
    o.nTrial = a.nTrial;
    o.taskScheduler = a.taskScheduler.empty() ? "gradient" : a.taskScheduler;
    o.batchSize = a.batchSize;
    o.seed = a.seed;
    o.resume = a.resume;
    o.liveProgress = isatty(fileno(stdout));
    if (monitor) o.loadMonitor = &*monitor;
    auto summary = autoScheduleTasks(autoTasks, o, builder, *runner, log, earlier);
    if (summary.seconds > 0)
      fmt::print("Tuned {} tasks: {} trials in {:.1f} s ({:.2f} trials per second; search {:.1f} s for {} states scored, build "
                 "{:.1f} s, run {:.1f} s); log: {}\n",
                 autoTasks.size(), summary.trials, summary.seconds, double(summary.trials) / summary.seconds, summary.policySeconds,
                 summary.statesScored, summary.buildSeconds, summary.runSeconds, a.log);
    if (summary.confirmedTasks > 0)
      fmt::print("{}", decisionSummary(summary.confirmedTasks, summary.keptDefault, summary.keptWithoutRounds, "a searched one"));
  }
  std::vector<tune::autotvm::TuningTaskPtr> tasks;
  std::vector<std::string> prefixes;
  if (a.scheduler == "autotvm")
    for (const ListedTask& t : selection) {
      tasks.push_back(t.tuning);
      prefixes.push_back(taskPrefix(t, list));
    }

  std::vector<std::pair<tune::autotvm::TuningTaskPtr, std::vector<tune::autotvm::Trial>>> history;
  int64_t measured = 0;
  double tuningSeconds = 0;
  tune::autotvm::TuneTaskResult totals;  // the parts' wall times, summed over the tasks
  int keptDefault = 0, confirmedTasks = 0, keptWithoutRounds = 0;
  // Every trial of each task (resumed and new): a later round teaches its fresh tuner with them.
  std::vector<std::vector<tune::autotvm::Trial>> trialsOfTask(tasks.size());
  if (a.resume) {
    tune::autotvm::ResumedTrials total;
    trialsOfTask = tune::autotvm::resumedTrialsOfTasks(tasks, earlier, total);
    if (total.leftOutCount() > 0) fmt::print("{}\n", total.leftOutLine());
  }
  // The run's plan: each task's budget in turn, or the network's under the task scheduler.
  int64_t planned = 0, resumedTotal = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    planned += tune::autotvm::plannedTrials(*tasks[i], a.nTrial, trialsOfTask[i].size());
    resumedTotal += int64_t(trialsOfTask[i].size());
  }
  if (!a.taskScheduler.empty()) planned = std::max<int64_t>(0, a.nTrial - resumedTotal);
  tune::RunEstimate estimate(planned);
  if (a.scheduler == "autotvm") {
    fmt::print("Tuning {} task{}: at most {} trials (--n-trial {}{})...\n", tasks.size(), tasks.size() == 1 ? "" : "s", planned, a.nTrial,
               a.taskScheduler.empty() ? " per task, capped by its configs" : " for the network");
    std::fflush(stdout);
  }
  auto optionsOf = [&](size_t i) {
    tune::autotvm::TuneTaskOptions o;
    o.nTrial = a.nTrial;
    o.earlyStopping = a.earlyStopping;
    o.batchSize = a.batchSize;
    o.confirmTop = a.confirmTop;
    o.confirmRounds = a.confirmRounds;
    o.seed = a.seed + i;
    if (monitor) o.loadMonitor = &*monitor;
    o.progressPrefix = prefixes[i];
    o.liveProgress = isatty(fileno(stdout));
    o.runEstimate = &estimate;
    return o;
  };
  auto logTrial = [&](size_t i) {
    return [&, i](const tune::autotvm::ConfigEntity& config, const tune::MeasureInput& input, const tune::MeasureResult& r) {
      const auto& task = tasks[i];
      tune::RecordConfig rc{int64_t(config.index()), config.toJson()["entity"]};
      log.append(tune::makeRecord(input, r, task->templateName, nlohmann::json{{"task", task->name}}, rc));
      if (!r.confirmed) trialsOfTask[i].push_back({config.index(), r.ok() ? task->flops / r.cost() : 0.0});
    };
  };
  auto noteResult = [&](const tune::autotvm::TuneTaskResult& result) {
    measured += result.trials;
    tuningSeconds += result.seconds;
    totals.accumulate(result);
    if (result.confirmedIndex) {
      ++confirmedTasks;
      keptDefault += result.keptFallback;
      keptWithoutRounds += result.withoutRounds;
    }
  };
  if (a.scheduler == "autotvm" && a.taskScheduler.empty()) {
    // Each task in turn with the whole --n-trial budget (TVM's AutoTVM tutorials).
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto& task = tasks[i];
      auto tuner = tune::autotvm::makeTuner(a.tuner, task, a.seed + i);
      if (a.transferLearning && !history.empty()) tuner->loadHistory(history);
      std::vector<tune::autotvm::Trial> resumed = trialsOfTask[i];
      auto result = tune::autotvm::tuneTask(task, *tuner, builder, *runner, optionsOf(i), resumed, logTrial(i));
      // Stopped early or out of configs: the estimate plans no more for this task.
      estimate.shortened(tune::autotvm::plannedTrials(*task, a.nTrial, resumed.size()) - result.trials);
      noteResult(result);
      history.emplace_back(task, trialsOfTask[i]);
    }
  } else if (a.scheduler == "autotvm" && !tasks.empty()) {
    // --task-scheduler: --n-trial is the network's budget, spent in rounds on the task that
    // lowers the estimated latency most. Each round is a resumed tuneTask: a fresh tuner
    // learns the task's trials so far (the xgb model retrains on all of them in any case); the
    // confirmation waits until the last round.
    std::vector<tune::ScheduledTask> scheduled;
    std::vector<double> best(tasks.size(), std::numeric_limits<double>::infinity());
    std::vector<int64_t> resumedTrials(tasks.size()), newTrials(tasks.size(), 0), rounds(tasks.size(), 0);
    for (size_t i = 0; i < tasks.size(); ++i) {
      scheduled.push_back({tasks[i]->name, double(selection[i].function.weight), tasks[i]->flops, tasks[i]->templateName, selection[i].number});
      resumedTrials[i] = int64_t(trialsOfTask[i].size());
      for (const auto& t : trialsOfTask[i])
        if (t.flopsPerSecond > 0) best[i] = std::min(best[i], tasks[i]->flops / t.flopsPerSecond);
    }
    tune::TaskSchedulerOptions schedulerOptions;
    schedulerOptions.strategy = a.taskScheduler;
    schedulerOptions.seed = a.seed;
    schedulerOptions.runEstimate = &estimate;
    tune::TaskScheduler scheduler(scheduled, schedulerOptions);
    scheduler.run(a.nTrial,
                  [&](size_t i, int64_t count) {
                    auto tuner = tune::autotvm::makeTuner(a.tuner, tasks[i], a.seed + i + 7919 * uint64_t(rounds[i]++));
                    std::vector<tune::autotvm::Trial> resumed = trialsOfTask[i];
                    auto o = optionsOf(i);
                    o.nTrial = int64_t(resumed.size()) + count;
                    o.earlyStopping = 0;  // the scheduler decides where trials go
                    o.confirmTop = 0;
                    auto result = tune::autotvm::tuneTask(tasks[i], *tuner, builder, *runner, o, resumed, logTrial(i));
                    noteResult(result);
                    newTrials[i] += result.trials;
                    if (result.bestFlopsPerSecond > 0) best[i] = std::min(best[i], tasks[i]->flops / result.bestFlopsPerSecond);
                    return tune::RoundResult{result.trials, best[i]};
                  },
                  best, resumedTrials);
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (newTrials[i] == 0 || a.confirmTop == 0) continue;
      tune::autotvm::TuneTaskResult result;
      auto o = optionsOf(i);
      tune::autotvm::confirmTask(*tasks[i], builder, *runner, o, trialsOfTask[i], logTrial(i), result);
      noteResult(result);
      if (!result.confirmationSummary.empty()) fmt::print("{}{}\n", o.progressPrefix, result.confirmationSummary);
    }
  }
  if (tuningSeconds > 0) {
    fmt::print("Tuned {} tasks: {} trials in {:.1f} s ({:.2f} trials per second{}); log: {}\n", tasks.size(), measured, tuningSeconds,
               double(measured) / tuningSeconds,
               totals.duplicates > 0 ? "; " + tune::autotvm::duplicatesLine(totals.duplicates) : "", a.log);
    double other = std::max(0.0, tuningSeconds - totals.tunerSeconds - totals.instantiateSeconds - totals.buildSeconds - totals.runSeconds);
    double n = double(std::max<int64_t>(measured, 1));
    fmt::print("Per trial: {:.3f} s = build {:.3f} s + run {:.3f} s + tuner {:.3f} s + other {:.3f} s (wall; the confirmation "
               "included); inside the builds, CPU time per trial: lowering {:.3f} s, compile {:.3f} s, link {:.3f} s; "
               "inside the runs: load {:.3f} s\n",
               tuningSeconds / n, totals.buildSeconds / n, totals.runSeconds / n, totals.tunerSeconds / n,
               (other + totals.instantiateSeconds) / n, totals.lowerCpuSeconds / n, totals.compileCpuSeconds / n,
               totals.linkCpuSeconds / n, totals.loadSeconds / n);
    if (monitor) fmt::print("{}\n", monitor->summary());
    if (confirmedTasks > 0) fmt::print("{}", decisionSummary(confirmedTasks, keptDefault, keptWithoutRounds, "a tuned one"));
  }

  fmt::print("Compile...\n");
  std::fflush(stdout);
  TempDir scratch;
  std::string tunedDir = a.output.empty() ? scratch.path() + "/tuned" : a.output;
  auto best = tune::HistoryBest::fromLog(a.log, target);
  graph::BuildOptions build;
  build.target = target;
  std::optional<DefaultSchedules> defaults;
  if (gpu) {
    build.gpuLimits = gpuLimits;
    build.schedule = gpuRecordsProvider(best, gpuLimits, target);
  } else {
    build.schedule = best.provider(defaults.emplace(target).provider());
  }
  RecordsChoice chosen = chooseByRecords(prepared, best);
  if (a.output.empty()) graph::buildGraph(chosen.graph, tunedDir, build);
  else driver::writeModule(a.output, [&](const std::string& directory) { graph::buildGraph(chosen.graph, directory, build); });
  fmt::print("{}\n", best.summary());
  if (!chosen.summary.empty()) fmt::print("{}\n", chosen.summary);
  if (defaults) fmt::print("{}\n", defaults->summary());
  if (!a.output.empty()) fmt::print("wrote the tuned module to {}\n", a.output);
  if (a.noEvaluate) return;

  fmt::print("Evaluate inference time cost...\n");
  std::fflush(stdout);
  if (gpu) {
    if (!local) {
      // On a device of the key, as `tessel benchmark --runner rpc` (the seed: number 1).
      fmt::print("Upload...\n");
      benchmarkOnRemoteDevice(a.runnerArgs, tunedDir, 1, a.evaluateRepeat, 0);
      return;
    }
    graph::BuildOptions untunedBuild;
    untunedBuild.target = target;
    untunedBuild.gpuLimits = gpuLimits;
    graph::buildGraph(g, scratch.path() + "/untuned", untunedBuild);
    runtime::Device device = runtime::Device::parse(target.kindName());
    Comparison c = evaluate(tunedDir, scratch.path() + "/untuned", device, a.evaluateRepeat);
    fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", c.tuned.mean, c.tuned.stddev);
    fmt::print("Untuned (default GPU schedules): {:.2f} ms ({:.2f} ms) on {}; {}\n", c.untuned.mean, c.untuned.stddev, device.str(),
               c.speedup());
    return;
  }
  graph::BuildOptions untunedBuild;
  untunedBuild.target = target;
  untunedBuild.schedule = [options = ops::cpuScheduleOptionsFor(target)](const te::ComputeDAG& dag) {
    return ops::defaultCpuSchedule(dag, options);
  };
  graph::buildGraph(g, scratch.path() + "/untuned", untunedBuild);
  // As many threads as the machine has free cores now (not at the start of the tuning).
  runtime::MachineLoad now = runtime::sampleMachineLoad(std::chrono::milliseconds(150));
  runtime::setKernelThreadCount(a.threads > 0 ? a.threads : runtime::kernelThreadsFor(now));
  if (runtime::kernelThreadCount() < now.cores)
    fmt::print("machine busy: {}; timing with {} thread{}\n", now.describe(), runtime::kernelThreadCount(),
               runtime::kernelThreadCount() == 1 ? "" : "s");
  Comparison c = evaluate(tunedDir, scratch.path() + "/untuned", runtime::Device::cpu(), a.evaluateRepeat);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", c.tuned.mean, c.tuned.stddev);
  fmt::print("Untuned (default schedules): {:.2f} ms ({:.2f} ms); {}\n", c.untuned.mean, c.untuned.stddev, c.speedup());
}

}  // namespace

void addTuneCommand(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* c = app.add_subcommand("tune", "tune a zoo network's tasks, log every trial, build and time it with the best");
  addModelOptions(c, *args);
  addSchedulerOption(c, args->scheduler);
  c->add_flag("--list-tasks", args->listTasks,
              "print the tasks of the network, numbered as --tasks takes them (as `tessel tasks` does; with --tasks or "
              "--ops, the ones this run would tune), and stop");
  c->add_option("--task-scheduler", args->taskScheduler,
                "spread --n-trial, then the budget of the whole network, over its tasks: gradient (the default with "
                "--scheduler auto) or round-robin; without it, template tuning gives each task --n-trial in turn")
      ->transform(oneOf({"gradient", "round-robin"}));
  c->add_option("--tuner", args->tuner, "random, gridsearch, ga, xgb (xgb_knob, xgb_itervar, xgb_curve, xgb-rank, xgb-reg)")
      ->transform(lowerCase());
  c->add_option("--n-trial", args->nTrial,
                "trials per task, capped by its config space (a network of 20 tasks: up to 20 times this); with "
                "--task-scheduler or --scheduler auto, the whole network's")
      ->check(integerIn(1, int64_t(1) << 40));
  c->add_option("--early-stopping", args->earlyStopping, "stop a task after this many trials without improvement (0: never)")
      ->check(integerIn(0, int64_t(1) << 40));
  c->add_option("--log", args->log, "the records log (JSON lines; appended to); required unless --list-tasks");
  c->add_flag("--resume", args->resume, "continue a run from its log: logged trials count and are not measured again");
  c->add_flag("--transfer-learning", args->transferLearning, "model-based tuners learn from the tasks tuned before");
  c->add_option("--ops", args->ops, "tune only the tasks of these operators, comma-separated: conv2d, depthwise_conv2d, dense");
  c->add_option("--tasks", args->onlyTasks, "tune only these tasks: numbers as `tessel tasks` and --list-tasks list them, e.g. 1,3")
      ->delimiter(',');
  c->add_option("-o,--output", args->output, "also write the tuned module directory here");
  c->add_option("--n-parallel", args->nParallel, "parallel builds (0: the number of cores; at most 4 per core)")
      ->check(integerIn(0, tune::mostParallelBuilds()));
  c->add_option("--batch-size", args->batchSize, "candidates measured per round")->check(integerIn(1, 4096));
  c->add_option("--number", args->number, "calls per measurement")->check(integerIn(1, 1000000));
  c->add_option("--repeat", args->repeat, "measurements per candidate")->check(integerIn(1, 10000));
  c->add_option("--min-repeat-ms", args->minRepeatMs, "raise --number until a measurement lasts this long")
      ->check(numberIn(0.0, 60000.0));
  c->add_option("--timeout", args->timeout, "seconds a candidate may run")->check(numberIn(0.001, 86400.0));
  c->add_option("--build-timeout", args->buildTimeout, "seconds a candidate may take to build")->check(numberIn(0.001, 86400.0));
  c->add_option("--cooldown-interval", args->cooldown, "seconds between two candidates' measurements")
      ->check(numberIn(0.0, 3600.0));
  c->add_option("--confirm-top", args->confirmTop,
                "after each task, re-measure this many best candidates and the default schedule interleaved; a candidate "
                "replaces the default only if it beats it there (0: no confirmation)")
      ->check(integerIn(0, 64));
  c->add_option("--confirm-rounds", args->confirmRounds, "rounds of that re-measurement")->check(integerIn(1, 100));
  c->add_option("--threads", args->threads,
                "kernel threads for measurements and the final timing (0: the cores other programs leave free)")
      ->check(integerIn(0, 1024));
  c->add_option("--busy-pause", args->busyPause,
                "seconds to wait for a busy machine to calm down before measuring anyway, under load")
      ->check(numberIn(0.0, 3600.0));
  c->add_option("--busy-pause-share", args->busyPauseShare,
                "the most of the run's time those waits may take, beyond one pause; past it, busy batches "
                "are measured at once and flagged as measured under load")
      ->check(numberIn(0.0, 1.0));
  c->add_flag("--enable-cpu-cache-flush", args->cacheFlush, "flush the last-level cache before each measurement");
  c->add_option("--cold-cache", args->coldCache,
                "measure tasks with cold caches (their arguments rotate through copies larger than the last-level cache): "
                "auto (the tasks whose weights come from DRAM in the network), always, never")
      ->transform(oneOf({"auto", "always", "never"}));
  c->add_flag("--check-correctness", args->checkCorrectness, "compare each candidate's output with the naive schedule's");
  c->add_flag("--no-evaluate", args->noEvaluate, "build with the best records but do not time the network");
  c->add_option("--evaluate-repeat", args->evaluateRepeat, "measurements of the tuned network's inference time")
      ->check(integerIn(1, 10000));
  c->add_flag("--force", args->force, "append to --log even when the existing file is not a records log");
  c->add_option("--seed", args->seed, "seed of the tuners")->check(integerIn(0, INT64_MAX));
  addRunnerOptions(c, args->runnerArgs);
  c->callback([args] { tune(*args); });
}

}  // namespace tessel::cli
