#include "cli/TuneCommand.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "cli/OptionChecks.h"
#include "cli/ModelArgs.h"
#include "cli/RpcCommands.h"
#include "cli/TuningTasks.h"
#include "cli/VtaFlow.h"
#include "driver/GpuTargetHost.h"
#include "driver/TuneNetwork.h"
#include "graph/TaskExtraction.h"
#include "support/Error.h"
#include "tune/Confirmation.h"
#include "tune/LocalBuilder.h"
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

/// --task-scheduler's value (gradient or round-robin; empty: none asked for).
std::optional<driver::TaskSchedulerKind> taskSchedulerKind(const std::string& text) {
  if (text.empty()) return std::nullopt;
  TESSEL_CHECK(text == "gradient" || text == "round-robin", "--task-scheduler: '{}' is not gradient or round-robin", text);
  return text == "gradient" ? driver::TaskSchedulerKind::Gradient : driver::TaskSchedulerKind::RoundRobin;
}

/// --runner rpc: the devices of the key, each part printing what it finds (RpcCommands.h).
driver::RemoteMeasurement remoteMeasurement(const TuneArgs& a) {
  driver::RemoteMeasurement r;
  r.makeRunner = [&a](const tune::LocalRunnerOptions& measure) { return makeRunner(a.runnerArgs, measure); };
  r.scheduledTarget = [&a] { return target::Target::parse(targetForDevices(a.runnerArgs, a.target)); };
  r.gpuLimits = [&a] { return gpuLimitsOfDevices(a.runnerArgs, a.parsedTarget.str()); };
  r.benchmark = [&a](const std::string& directory, int repeat) {
    fmt::print("Upload...\n");
    return benchmarkOnRemoteDevice(a.runnerArgs, directory, 1, repeat, 0);
  };
  return r;
}

/// The flags as the driver's options, each parsed here once; the network loaded.
driver::TuneNetworkOptions tuneOptions(const TuneArgs& a) {
  driver::TuneNetworkOptions o;
  // GPU targets: the functions' kernels run on a device; the host target only compiles the
  // correctness reference (driver/GpuTargetHost.h).
  if (a.parsedTarget.isGpu()) o.gpuHost = target::Target::parse(driver::checkGpuTargetHost(a.target, a.targetHost));
  else checkCpuTarget(a.target);
  o.search = searchKind(a.scheduler);
  o.coldCache = coldCacheMode(a.coldCache);
  o.tasks = a.onlyTasks;
  o.ops = parseOps(a.ops);
  o.tuner = a.tuner;
  o.taskScheduler = taskSchedulerKind(a.taskScheduler);
  o.transferLearning = a.transferLearning;
  o.nTrial = a.nTrial;
  o.earlyStopping = a.earlyStopping;
  o.batchSize = a.batchSize;
  o.confirmTop = a.confirmTop;
  o.confirmRounds = a.confirmRounds;
  o.seed = a.seed;
  o.log = a.log;
  o.resume = a.resume;
  o.forceLog = a.force;
  o.build.nParallel = a.nParallel;
  o.build.timeout = std::chrono::milliseconds(int64_t(a.buildTimeout * 1000));
  o.measure.number = a.number;
  o.measure.repeat = a.repeat;
  o.measure.minRepeatMs = a.minRepeatMs;
  o.measure.timeoutSeconds = a.timeout;
  o.measure.cooldownIntervalSeconds = a.cooldown;
  o.measure.enableCpuCacheFlush = a.cacheFlush;
  o.measure.checkCorrectness = a.checkCorrectness;
  o.threads = a.threads;
  o.busyPause = a.busyPause;
  o.busyPauseShare = a.busyPauseShare;
  if (a.runnerArgs.runner != "local") o.remote = remoteMeasurement(a);
  o.output = a.output;
  o.evaluate = !a.noEvaluate;
  o.evaluateRepeat = a.evaluateRepeat;
  o.tuneLinesTo = stdout;
  o.liveProgress = isatty(fileno(stdout));
  o.prepare = prepareOptions(a);
  o.model = loadNetwork(a);
  return o;
}

/// "speedup 1.08x (timed in alternation; round by round 1.07x, the middle half of the rounds
/// 1.02-1.11x)", with ": a tie on this machine" where the middle half holds 1: one ratio of a
/// noisy machine's means would otherwise read as a gain or a loss.
std::string speedup(const driver::NetworkEvaluation& e) {
  return fmt::format("speedup {:.2f}x (timed in alternation; round by round {:.2f}x, the middle half of the rounds {:.2f}-{:.2f}x{})",
                     e.untuned->mean / e.tuned.mean, e.rounds.median, e.rounds.lowerQuartile, e.rounds.upperQuartile,
                     e.rounds.tie() ? ": a tie on this machine" : "");
}

/// The run's totals: its trials and where their time went, the machine's load, the decisions.
void printTuningSummary(const driver::TuningSummary& s, const std::string& log) {
  if (s.search == driver::SearchKind::AutoScheduler) {
    if (s.seconds > 0)
      fmt::print("Tuned {} tasks: {} trials in {:.1f} s ({:.2f} trials per second; search {:.1f} s for {} states scored, build "
                 "{:.1f} s, run {:.1f} s); log: {}\n",
                 s.tasks, s.trials, s.seconds, double(s.trials) / s.seconds, s.policySeconds, s.statesScored, s.buildSeconds,
                 s.runSeconds, log);
    if (s.confirmedTasks > 0) fmt::print("{}", decisionSummary(s.confirmedTasks, s.keptDefault, s.keptWithoutRounds, "a searched one"));
    return;
  }
  if (s.seconds <= 0) return;
  const tune::autotvm::TuneTaskResult& totals = s.templateTotals;
  fmt::print("Tuned {} tasks: {} trials in {:.1f} s ({:.2f} trials per second{}); log: {}\n", s.tasks, s.trials, s.seconds,
             double(s.trials) / s.seconds, totals.duplicates > 0 ? "; " + tune::autotvm::duplicatesLine(totals.duplicates) : "", log);
  double other = std::max(0.0, s.seconds - totals.tunerSeconds - totals.instantiateSeconds - totals.buildSeconds - totals.runSeconds);
  double n = double(std::max<int64_t>(s.trials, 1));
  fmt::print("Per trial: {:.3f} s = build {:.3f} s + run {:.3f} s + tuner {:.3f} s + other {:.3f} s (wall; the confirmation "
             "included); inside the builds, CPU time per trial: lowering {:.3f} s, compile {:.3f} s, link {:.3f} s; "
             "inside the runs: load {:.3f} s\n",
             s.seconds / n, totals.buildSeconds / n, totals.runSeconds / n, totals.tunerSeconds / n,
             (other + totals.instantiateSeconds) / n, totals.lowerCpuSeconds / n, totals.compileCpuSeconds / n,
             totals.linkCpuSeconds / n, totals.loadSeconds / n);
  if (!s.loadSummary.empty()) fmt::print("{}\n", s.loadSummary);
  if (s.confirmedTasks > 0) fmt::print("{}", decisionSummary(s.confirmedTasks, s.keptDefault, s.keptWithoutRounds, "a tuned one"));
}

/// `tessel tune`'s lines, printed as the run reports its steps.
driver::TuneCallbacks printedProgress(const TuneArgs& a, const driver::TuneNetworkOptions& o) {
  driver::TuneCallbacks c;
  c.onStage = [](driver::TuneStage stage) {
    fmt::print("{}\n", stage == driver::TuneStage::ExtractTasks ? "Extract tasks..."
                       : stage == driver::TuneStage::Compile    ? "Compile..."
                                                                 : "Evaluate inference time cost...");
    std::fflush(stdout);
  };
  c.onNote = [](const std::string& line) { fmt::print("{}\n", line); };
  // The tasks as `tessel tasks` lists them; the auto-scheduler's as seed 001 prints them too.
  c.onTasks = [&a, &o](const driver::TaskList& list, const std::vector<driver::ListedTask>& selected) {
    fmt::print("{}", formatTaskList(list, a.onlyTasks, o.ops));
    if (o.search != driver::SearchKind::AutoScheduler) return;
    std::vector<graph::Task> functions;
    std::vector<size_t> numbers;
    for (const driver::ListedTask& t : selected) {
      functions.push_back(t.function);
      numbers.push_back(t.number);
    }
    fmt::print("{}", graph::formatTasks(functions, numbers));
  };
  c.onPlan = [](const driver::TuningPlan& p) {
    fmt::print("Tuning {} task{}: at most {} trials (--n-trial {}{})...\n", p.tasks, p.tasks == 1 ? "" : "s", p.trials, p.nTrial,
               p.forNetwork ? " for the network" : " per task, capped by its configs");
    std::fflush(stdout);
  };
  // A decision's line, unless the tune layer wrote it under the task's progress line already.
  c.onDecision = [](const driver::TaskDecision& d) {
    if (d.printed) return;
    if (!d.line.empty())
      fmt::print("{}{}\n", d.prefix, d.line);
    else if (d.withoutRounds)
      fmt::print("{}no schedule came within {}x of the default schedule: the default stays ({:.4f} ms)\n", d.prefix,
                 tune::kContenderSlack, d.cost * 1e3);
    else
      fmt::print("{}no schedule beat the default schedule in {} interleaved rounds: the default stays ({:.4f} ms)\n", d.prefix,
                 d.rounds, d.cost * 1e3);
    std::fflush(stdout);
  };
  c.onTuned = [&a](const driver::TuningSummary& s) { printTuningSummary(s, a.log); };
  c.onBuilt = [](const driver::BuildReport& b) {
    for (const std::string& line : {b.records, b.variants, b.defaultSchedules})
      if (!line.empty()) fmt::print("{}\n", line);
    if (!b.module.empty()) fmt::print("wrote the tuned module to {}\n", b.module);
  };
  c.onEvaluated = [gpu = o.prepare.target.isGpu()](const driver::NetworkEvaluation& e) {
    if (!e.untuned) return;  // timed on a remote device, which printed its lines
    fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", e.tuned.mean, e.tuned.stddev);
    if (gpu)
      fmt::print("Untuned (default GPU schedules): {:.2f} ms ({:.2f} ms) on {}; {}\n", e.untuned->mean, e.untuned->stddev, e.device,
                 speedup(e));
    else
      fmt::print("Untuned (default schedules): {:.2f} ms ({:.2f} ms); {}\n", e.untuned->mean, e.untuned->stddev, speedup(e));
  };
  return c;
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
  const driver::TuneNetworkOptions options = tuneOptions(a);
  driver::tuneNetwork(options, printedProgress(a, options));
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
