#include "cli/TuneCommand.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <filesystem>
#include <sstream>

#include "cli/AutoScheduleTasks.h"
#include "cli/GpuTargets.h"
#include "cli/OptionChecks.h"
#include "cli/ModelArgs.h"
#include "cli/ModuleOutput.h"
#include "cli/RpcCommands.h"
#include "cli/VtaFlow.h"
#include "graph/Build.h"
#include "graph/Fusion.h"
#include "graph/GpuTargetLimits.h"
#include "graph/TaskExtraction.h"
#include "ops/OpTraits.h"
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
#include "tune/RecordQueries.h"
#include "tune/TaskScheduler.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/GpuTemplates.h"
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
  std::vector<size_t> onlyTasks;  ///< 1-based task numbers to tune (empty: all)
  int64_t nTrial = 1000, earlyStopping = 0;
  bool resume = false, transferLearning = false, checkCorrectness = false, cacheFlush = false, noEvaluate = false, force = false;
  int nParallel = 0, number = 4, repeat = 3, confirmTop = 5, confirmRounds = 5, threads = 0, evaluateRepeat = 10;
  double busyPause = 10;
  double busyPauseShare = 0.2;
  size_t batchSize = 8;
  double minRepeatMs = 0, timeout = 10, buildTimeout = 10, cooldown = 0;
  uint64_t seed = 0;
  RunnerArgs runnerArgs;  ///< --runner local|rpc and the rpc runner's options
};

/// The operator classes --ops may name that select a function, by its anchor: "conv2d" covers
/// every convolution (depthwise and grouped are conv2d with groups, as in Relay; Winograd's
/// GEMM too), "depthwise_conv2d" only depthwise ones, "dense" also matmul; none for a function
/// without an anchor.
std::vector<std::string> opsClassesOf(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  if (!anchor) return {};
  switch (ops::traitsOf(*dag.op(*anchor)).kind) {
    case ops::OpKind::Dense:
    case ops::OpKind::Matmul: return {"dense"};
    case ops::OpKind::DepthwiseConv2dNCHW:
    case ops::OpKind::DepthwiseConv2dNHWC: return {"conv2d", "depthwise_conv2d"};
    case ops::OpKind::Conv2dNCHW:
    case ops::OpKind::Conv2dNHWC:
    case ops::OpKind::Conv2dNHWCPacked:
    case ops::OpKind::GroupConv2dNCHW:
    case ops::OpKind::GroupConv2dNHWC:
    case ops::OpKind::Conv2dTransposeNCHW:
    case ops::OpKind::WinogradGemm:
    case ops::OpKind::WinogradNchwGemm: return {"conv2d"};
    default: return {};
  }
}

/// Whether --ops (empty: every function) selects a function.
bool selectedByOps(const te::ComputeDAG& dag, const std::vector<std::string>& ops) {
  if (ops.empty()) return true;
  auto classes = opsClassesOf(dag);
  for (const std::string& op : ops)
    if (std::find(classes.begin(), classes.end(), op) != classes.end()) return true;
  return false;
}

std::vector<std::string> parseOps(const std::string& text) {
  std::vector<std::string> ops;
  std::stringstream in(text);
  for (std::string op; std::getline(in, op, ',');) {
    if (op.empty()) continue;
    TESSEL_CHECK(op == "conv2d" || op == "depthwise_conv2d" || op == "dense", "--ops: unknown operator '{}' (conv2d, depthwise_conv2d, dense)",
                 op);
    ops.push_back(op);
  }
  return ops;
}

/// Which tasks are measured with cold caches (--cold-cache auto|always|never). A network's
/// weights stream through the caches once per inference: when they are more than the last-level
/// cache holds, a layer's weights were evicted by the layers in between by the time it runs
/// again, and come from DRAM. `auto` measures cold the tasks whose weights are more than the
/// per-core L2 (smaller ones stay near the core in any case), in such networks only.
class ColdCachePolicy {
 public:
  ColdCachePolicy(const graph::Graph& graph, const std::string& mode, const target::CpuMachine& machine) : mode_(mode) {
    TESSEL_CHECK(mode == "auto" || mode == "always" || mode == "never", "--cold-cache: '{}' is not auto, always or never", mode);
    for (const auto& [name, value] : graph.params()) paramBytes_ += value.nbytes();
    llc_ = size_t(machine.llcBytes);
    l2_ = size_t(machine.l2Bytes);
    if (mode_ == "auto" && paramBytes_ > llc_)
      reason_ = fmt::format("The network's weights ({:.1f} MiB) are more than the last-level cache ({:.1f} MiB): tasks whose "
                            "weights exceed the L2 ({:.1f} MiB) are measured with cold caches, as they run in the network",
                            paramBytes_ / 1048576.0, llc_ / 1048576.0, l2_ / 1048576.0);
  }
  /// `task` is one of `graph`'s (the network's variants have their own groups).
  bool measureCold(const graph::Graph& graph, const graph::Task& task) {
    if (mode_ != "auto") return mode_ == "always";
    if (paramBytes_ <= llc_ || task.groups.empty()) return false;
    auto& groups = groupsOf_[&graph];
    if (groups.empty()) groups = graph::fuseOperators(graph);
    size_t weights = 0;
    for (int input : groups[size_t(task.groups.front())].inputs)
      if (graph.node(input).kind == graph::NodeKind::Constant) weights += graph.constant(input).nbytes();
    return weights > l2_;
  }
  const std::string& reason() const { return reason_; }

 private:
  std::string mode_, reason_;
  size_t paramBytes_ = 0, llc_ = 0, l2_ = 0;
  std::map<const graph::Graph*, std::vector<graph::FusedGroup>> groupsOf_;
};

struct Evaluation {
  double mean = 0, stddev = 0;
};

/// The tuned and the untuned module, timed in alternation (10 rounds of at least 100 ms each):
/// the speedup printed is a same-run ratio.
std::pair<Evaluation, Evaluation> evaluate(const std::string& tunedDirectory, const std::string& untunedDirectory,
                                           const runtime::Device& device, int repeat) {
  auto tuned = runtime::GraphExecutor::load(tunedDirectory, {device});
  auto untuned = runtime::GraphExecutor::load(untunedDirectory, {device});
  tuned.setZeroInputs();
  untuned.setZeroInputs();
  runtime::TimeEvaluatorOptions timing;
  timing.number = 1;
  timing.repeat = repeat;
  timing.minRepeatMs = 100;
  auto r = runtime::timeInterleaved({[&] { tuned.run(); }, [&] { untuned.run(); }}, timing);
  return {{r[0].mean * 1e3, r[0].stddev * 1e3}, {r[1].mean * 1e3, r[1].stddev * 1e3}};
}

void tune(const TuneArgs& a) {
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
  TESSEL_CHECK(!a.log.empty(), "--log is required: every trial is written there");
  TESSEL_CHECK(a.nTrial >= 1, "--n-trial must be at least 1, got {}", a.nTrial);
  TESSEL_CHECK(a.earlyStopping >= 0, "--early-stopping must not be negative, got {}", a.earlyStopping);
  auto ops = parseOps(a.ops);
  tune::autotvm::checkTunerName(a.tuner);  // before any work
  // Where the results go is checked before any work: a run must not tune for hours and then
  // fail to write its module or its log.
  if (!a.output.empty()) checkModuleOutput(a.output);
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
  PreparedModel prepared = prepareModel(gpu ? gpuModelArgs(a) : static_cast<const ModelArgs&>(a));
  const graph::Graph& g = prepared.chosen;
  std::vector<tune::autotvm::TuningTaskPtr> tasks;
  ColdCachePolicy cold(g, gpu ? "never" : a.coldCache, a.cpuMachine());
  // Under --winograd auto, a Winograd candidate layer is tuned in every variant: the direct
  // convolution's task and each Winograd form's (CPU: the rules' tile and F(6x6) where it
  // fits); the build takes the fastest (chooseByRecords). The other variants (CPU: direct,
  // then the larger tile; GPU, whose untuned build is direct: the Winograd one) are listed
  // right after the chosen one's task (same name).
  std::vector<std::pair<const graph::Graph*, graph::Task>> candidates;
  std::vector<const graph::Graph*> others;
  if (prepared.variants) {
    if (!prepared.chosenIsDirect) others.push_back(&prepared.direct);
    for (size_t v = prepared.chosenIsDirect ? 0 : 1; v < prepared.winograd.size(); ++v) others.push_back(&prepared.winograd[v]);
  }
  std::vector<graph::Task> chosenTasks = graph::extractTasks(g);
  std::vector<std::vector<graph::Task>> otherTasks;
  for (const graph::Graph* other : others) otherTasks.push_back(graph::extractTasks(*other));
  std::set<std::string> keys;
  for (const auto& t : chosenTasks) keys.insert(t.workloadKey);
  for (auto& t : chosenTasks) {
    std::string name = t.name;
    candidates.emplace_back(&g, std::move(t));
    for (size_t o = 0; o < others.size(); ++o)
      for (auto& d : otherTasks[o])
        if (d.name == name && keys.insert(d.workloadKey).second) candidates.emplace_back(others[o], d);
  }
  for (size_t o = 0; o < others.size(); ++o)
    for (auto& d : otherTasks[o])
      if (keys.insert(d.workloadKey).second) candidates.emplace_back(others[o], d);
  tune::RecordLogWriter log(a.log);
  if (a.scheduler == "auto") {
    // Every task, template or not; then nothing is left for template tuning below.
    std::vector<graph::Task> autoTasks;
    std::vector<bool> coldCache;
    for (const auto& [taskGraph, t] : candidates) {
      autoTasks.push_back(t);
      coldCache.push_back(cold.measureCold(*taskGraph, t));
    }
    if (!a.onlyTasks.empty()) {
      std::vector<graph::Task> chosen;
      std::vector<bool> chosenCold;
      for (size_t n : a.onlyTasks) {
        TESSEL_CHECK(n >= 1 && n <= autoTasks.size(), "--tasks: there is no task {} (the network has {})", n, autoTasks.size());
        chosen.push_back(autoTasks[n - 1]);
        chosenCold.push_back(coldCache[n - 1]);
      }
      autoTasks = chosen;
      coldCache = chosenCold;
    }
    AutoScheduleOptions o;
    o.coldCache = coldCache;
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
    candidates.clear();
  }
  for (const auto& [taskGraph, t] : candidates) {
    if (gpu) {
      // Every function has a GPU template (gpu_default at least); --ops selects by its anchor.
      if (!selectedByOps(t.dag, ops)) continue;
      for (const std::string& templateName : tune::autotvm::gpuTemplatesTuned(t.dag)) {
        auto task = tune::autotvm::makeGpuTuningTask(t.name, t.dag, target, gpuLimits, templateName);
        auto measure = std::make_shared<tune::MeasureTask>(*task->measure);
        measure->hostTarget = gpuHostTarget;
        auto copy = std::make_shared<tune::autotvm::TuningTask>(*task);
        copy->measure = measure;
        tasks.push_back(copy);
      }
      continue;
    }
    auto templateName = tune::autotvm::cpuTemplateFor(t.dag);
    if (!templateName || !selectedByOps(t.dag, ops)) continue;
    auto task = tune::autotvm::makeCpuTuningTask(t.name, t.dag, target, *templateName);
    if (cold.measureCold(*taskGraph, t)) {
      auto measure = std::make_shared<tune::MeasureTask>(*task->measure);
      measure->coldCache = true;
      auto copy = std::make_shared<tune::autotvm::TuningTask>(*task);
      copy->measure = measure;
      task = copy;
    }
    tasks.push_back(task);
  }
  if (!a.onlyTasks.empty() && a.scheduler == "autotvm") {
    std::vector<tune::autotvm::TuningTaskPtr> chosen;
    for (size_t n : a.onlyTasks) {
      TESSEL_CHECK(n >= 1 && n <= tasks.size(), "--tasks: there is no task {} (the network has {})", n, tasks.size());
      chosen.push_back(tasks[n - 1]);
    }
    tasks = chosen;
  }
  if (a.scheduler == "autotvm") fmt::print("Extracted {} tasks:\n", tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i)
    fmt::print("  {:>2}  {:<28} {:<26} {:>10.1f} MFLOP  {:>6} configs{}{}\n", i + 1, tasks[i]->name, tasks[i]->templateName,
               tasks[i]->flops / 1e6, tasks[i]->space->size(),
               tasks[i]->unprunedSize > tasks[i]->space->size() ? fmt::format(" (of {})", tasks[i]->unprunedSize) : "",
               tasks[i]->measure->coldCache ? "  measured cold" : "");
  if (!cold.reason().empty()) fmt::print("{}\n", cold.reason());

  auto trialsOf = [&](const tune::autotvm::TuningTask& task) {
    std::vector<tune::autotvm::Trial> trials;
    for (const auto& r : tune::recordsOfTask(earlier, task.measure->workloadKey, task.measure->target.str()))
      if (r.config && !r.result.confirmed && r.task.templateName == task.templateName && r.config->index >= 0 &&
          uint64_t(r.config->index) < task.space->size())
        trials.push_back({uint64_t(r.config->index), r.ok() ? r.gflops() * 1e9 : 0.0});
    return trials;
  };

  if (a.scheduler == "autotvm") fmt::print("Tuning...\n");
  std::fflush(stdout);
  std::vector<std::pair<tune::autotvm::TuningTaskPtr, std::vector<tune::autotvm::Trial>>> history;
  int64_t measured = 0;
  double tuningSeconds = 0;
  tune::autotvm::TuneTaskResult totals;  // the parts' wall times, summed over the tasks
  int keptDefault = 0, confirmedTasks = 0, keptWithoutRounds = 0;
  auto optionsOf = [&](size_t i) {
    tune::autotvm::TuneTaskOptions o;
    o.nTrial = a.nTrial;
    o.earlyStopping = a.earlyStopping;
    o.batchSize = a.batchSize;
    o.confirmTop = a.confirmTop;
    o.confirmRounds = a.confirmRounds;
    o.seed = a.seed + i;
    if (monitor) o.loadMonitor = &*monitor;
    o.progressPrefix = fmt::format("[Task {:>2}/{:>2}] ", i + 1, tasks.size());
    o.liveProgress = isatty(fileno(stdout));
    return o;
  };
  // Every trial of each task (resumed and new): a later round teaches its fresh tuner with them.
  std::vector<std::vector<tune::autotvm::Trial>> trialsOfTask(tasks.size());
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
  for (size_t i = 0; i < tasks.size(); ++i)
    if (a.resume) trialsOfTask[i] = trialsOf(*tasks[i]);
  if (a.scheduler == "autotvm" && a.taskScheduler.empty()) {
    // Each task in turn with the whole --n-trial budget (TVM's AutoTVM tutorials).
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto& task = tasks[i];
      auto tuner = tune::autotvm::makeTuner(a.tuner, task, a.seed + i);
      if (a.transferLearning && !history.empty()) tuner->loadHistory(history);
      std::vector<tune::autotvm::Trial> resumed = trialsOfTask[i];
      noteResult(tune::autotvm::tuneTask(task, *tuner, builder, *runner, optionsOf(i), resumed, logTrial(i)));
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
    std::map<std::string, double> weightOf;
    for (const auto& [taskGraph, t] : candidates) weightOf.emplace(t.name + "|" + t.workloadKey, double(t.weight));
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto w = weightOf.find(tasks[i]->name + "|" + tasks[i]->measure->workloadKey);
      scheduled.push_back({tasks[i]->name, w == weightOf.end() ? 1.0 : w->second, tasks[i]->flops, tasks[i]->templateName});
      resumedTrials[i] = int64_t(trialsOfTask[i].size());
      for (const auto& t : trialsOfTask[i])
        if (t.flopsPerSecond > 0) best[i] = std::min(best[i], tasks[i]->flops / t.flopsPerSecond);
    }
    tune::TaskSchedulerOptions schedulerOptions;
    schedulerOptions.strategy = a.taskScheduler;
    schedulerOptions.seed = a.seed;
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
    fmt::print("Tuned {} tasks: {} trials in {:.1f} s ({:.2f} trials per second); log: {}\n", tasks.size(), measured, tuningSeconds,
               double(measured) / tuningSeconds, a.log);
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
  auto best = tune::HistoryBest::fromLog(a.log, target.str());
  graph::BuildOptions build;
  build.target = target;
  std::optional<DefaultSchedules> defaults;
  if (gpu) {
    build.gpuLimits = gpuLimits;
    build.schedule = gpuRecordsProvider(best, gpuLimits);
  } else {
    build.schedule = best.provider(defaults.emplace(target).provider());
  }
  RecordsChoice chosen = chooseByRecords(prepared, best);
  if (a.output.empty()) graph::buildGraph(chosen.graph, tunedDir, build);
  else writeModule(a.output, [&](const std::string& directory) { graph::buildGraph(chosen.graph, directory, build); });
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
    auto [tuned, untuned] = evaluate(tunedDir, scratch.path() + "/untuned", device, a.evaluateRepeat);
    fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", tuned.mean, tuned.stddev);
    fmt::print("Untuned (default GPU schedules): {:.2f} ms ({:.2f} ms); speedup {:.2f}x (timed in alternation on {})\n", untuned.mean,
               untuned.stddev, untuned.mean / tuned.mean, device.str());
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
  auto [tuned, untuned] = evaluate(tunedDir, scratch.path() + "/untuned", runtime::Device::cpu(), a.evaluateRepeat);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", tuned.mean, tuned.stddev);
  fmt::print("Untuned (default schedules): {:.2f} ms ({:.2f} ms); speedup {:.2f}x (timed in alternation)\n", untuned.mean,
             untuned.stddev, untuned.mean / tuned.mean);
}

}  // namespace

void addTuneCommand(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* c = app.add_subcommand("tune", "tune a zoo network's tasks, log every trial, build and time it with the best");
  addModelOptions(c, *args);
  c->add_option("--scheduler", args->scheduler, "autotvm (templates, the default) or auto (the template-free auto-scheduler)")
      ->check(CLI::IsMember({"autotvm", "auto"}));
  c->add_option("--task-scheduler", args->taskScheduler,
                "spread --n-trial, then the budget of the whole network, over its tasks: gradient (the default with "
                "--scheduler auto) or round-robin; without it, template tuning gives each task --n-trial in turn")
      ->check(CLI::IsMember({"gradient", "round-robin"}));
  c->add_option("--tuner", args->tuner, "random, gridsearch, ga, xgb (xgb_knob, xgb_itervar, xgb_curve, xgb-rank, xgb-reg)");
  c->add_option("--n-trial", args->nTrial, "trials per task (capped by its config space)")->check(integerIn(1, int64_t(1) << 40));
  c->add_option("--early-stopping", args->earlyStopping, "stop a task after this many trials without improvement (0: never)")
      ->check(integerIn(0, int64_t(1) << 40));
  c->add_option("--log", args->log, "the records log (JSON lines; appended to)")->required();
  c->add_flag("--resume", args->resume, "continue a run from its log: logged trials count and are not measured again");
  c->add_flag("--transfer-learning", args->transferLearning, "model-based tuners learn from the tasks tuned before");
  c->add_option("--ops", args->ops, "tune only these operators, comma-separated: conv2d, depthwise_conv2d, dense");
  c->add_option("--tasks", args->onlyTasks, "tune only these tasks (1-based numbers as listed)")->delimiter(',');
  c->add_option("-o,--output", args->output, "also write the tuned module directory here");
  c->add_option("--n-parallel", args->nParallel, "parallel builds (0: the number of cores)")->check(integerIn(0, 1024));
  c->add_option("--batch-size", args->batchSize, "candidates measured per round")->check(integerIn(1, 4096));
  c->add_option("--number", args->number, "calls per measurement")->check(integerIn(1, 1000000));
  c->add_option("--repeat", args->repeat, "measurements per candidate")->check(integerIn(1, 10000));
  c->add_option("--min-repeat-ms", args->minRepeatMs, "raise --number until a measurement lasts this long")
      ->check(numberIn(0.0, 60000.0));
  c->add_option("--timeout", args->timeout, "seconds a candidate may run")->check(numberIn(0.001, 86400.0));
  c->add_option("--build-timeout", args->buildTimeout, "seconds a candidate may take to build")->check(numberIn(0.001, 86400.0));
  c->add_option("--cooldown-interval", args->cooldown, "seconds between two candidates' measurements (default 0)")
      ->check(numberIn(0.0, 3600.0));
  c->add_option("--confirm-top", args->confirmTop,
                "after each task, re-measure this many best candidates and the default schedule interleaved; a candidate "
                "replaces the default only if it beats it there (0: no confirmation; default 5)")
      ->check(integerIn(0, 64));
  c->add_option("--confirm-rounds", args->confirmRounds, "rounds of that re-measurement (default 5)")->check(integerIn(1, 100));
  c->add_option("--threads", args->threads,
                "kernel threads for measurements and the final timing (default 0: the cores other programs leave free)")
      ->check(integerIn(0, 1024));
  c->add_option("--busy-pause", args->busyPause,
                "seconds to wait for a busy machine to calm down before measuring anyway, under load (default 10)")
      ->check(numberIn(0.0, 3600.0));
  c->add_option("--busy-pause-share", args->busyPauseShare,
                "the most of the run's time those waits may take, beyond one pause (default 0.2); past it, busy batches "
                "are measured at once and flagged as measured under load")
      ->check(numberIn(0.0, 1.0));
  c->add_flag("--enable-cpu-cache-flush", args->cacheFlush, "flush the last-level cache before each measurement");
  c->add_option("--cold-cache", args->coldCache,
                "measure tasks with cold caches (their arguments rotate through copies larger than the last-level cache): "
                "auto (the tasks whose weights come from DRAM in the network), always, never (default auto)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  c->add_flag("--check-correctness", args->checkCorrectness, "compare each candidate's output with the naive schedule's");
  c->add_flag("--no-evaluate", args->noEvaluate, "build with the best records but do not time the network");
  c->add_option("--evaluate-repeat", args->evaluateRepeat, "measurements of the tuned network's inference time (default 10)")
      ->check(integerIn(1, 10000));
  c->add_flag("--force", args->force, "append to --log even when the existing file is not a records log");
  c->add_option("--seed", args->seed, "seed of the tuners")->check(integerIn(0, INT64_MAX));
  addRunnerOptions(c, args->runnerArgs);
  c->callback([args] { tune(*args); });
}

}  // namespace tessel::cli
