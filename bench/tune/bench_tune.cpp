// bench_tune: what template tuning buys on this CPU and how fast it gets there (issue 4).
// Three parts, all measured in this one run, printed as `BENCH <name> <value> <unit>` lines
// and readable tables:
//
//   networks  tune each network's tasks with one tuner (xgb) under a fixed trial budget, build
//             it with the best records and time it tuned and untuned; the tuning wall time,
//             trials per second and where a trial's time goes (build / run / tuner). The
//             tuned modules are left in OUT/<model>.tuned for the peer comparison (run.sh).
//   convs     for every conv2d task of resnet-18, the best GFLOPS the tuning found (from its
//             records log) next to oneDNN's on the same convolution in the same layout (NHWC,
//             what tessel builds after its layout conversion), 2 threads both.
//   search    search efficiency: on three resnet-18 convs, the best GFLOPS after N trials for
//             xgb, ga and random, mean of several seeds. The fallback config is NOT measured
//             first here (tessel tune does), so the curves compare the search alone.
//
// Environment (defaults are the issue's numbers):
//   BENCH_TUNE_OUT          output folder for logs and modules (build/bench-tune)
//   BENCH_TUNE_PARTS        networks,convs,search
//   BENCH_TUNE_MODELS       resnet-18,mobilenet
//   BENCH_TUNE_TUNER        xgb (the networks' tuner)
//   BENCH_TUNE_TRIALS       64 trials per task for the networks
//   BENCH_TUNE_EARLY_STOPPING  0 (never)
//   BENCH_TUNE_CHECKPOINTS  64,128,256,512 (the search runs to the largest)
//   BENCH_TUNE_SEEDS        3
//   BENCH_TUNE_SEARCH_TUNERS  xgb,ga,random
//   BENCH_TUNE_SEARCH_CONVS   56:64:64:3:1,28:128:128:3:1,7:512:512:3:1 (input size, in and
//                             out channels, kernel, stride of resnet-18 convs)
//   BENCH_TUNE_SHARE        1: a candidate measured once in this run is not measured again
//                           (search: tuners and seeds see one landscape); 0: always measure
//   BENCH_TUNE_BATCH        8 candidates per measurement round
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "MeasurementCache.h"
#include "OneDnnConv.h"
#include "graph/Build.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Tensor.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "tune/HistoryBest.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/TuneTask.h"

namespace tessel::bench {
namespace {

using tune::autotvm::TuningTaskPtr;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------

std::string envString(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::vector<std::string> splitList(const std::string& text, char separator = ',') {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, separator);)
    if (!item.empty()) items.push_back(item);
  return items;
}

int64_t envInt(const char* name, int64_t fallback) {
  std::string text = envString(name, "");
  if (text.empty()) return fallback;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    fail("{}: expected an integer, got '{}'", name, text);
  }
}

std::vector<int64_t> envInts(const char* name, const std::string& fallback) {
  std::vector<int64_t> values;
  for (const std::string& item : splitList(envString(name, fallback))) {
    try {
      values.push_back(std::stoll(item));
    } catch (const std::exception&) {
      fail("{}: expected integers separated by commas, got '{}'", name, item);
    }
    TESSEL_CHECK(values.back() >= 1, "{}: every value must be at least 1", name);
  }
  return values;
}

struct Settings {
  std::string out = envString("BENCH_TUNE_OUT", "build/bench-tune");
  std::vector<std::string> parts = splitList(envString("BENCH_TUNE_PARTS", "networks,convs,search"));
  std::vector<std::string> models = splitList(envString("BENCH_TUNE_MODELS", "resnet-18,mobilenet"));
  std::string tuner = envString("BENCH_TUNE_TUNER", "xgb");
  int64_t trials = envInt("BENCH_TUNE_TRIALS", 64);
  int64_t earlyStopping = envInt("BENCH_TUNE_EARLY_STOPPING", 0);
  std::vector<int64_t> checkpoints = envInts("BENCH_TUNE_CHECKPOINTS", "64,128,256,512");
  int64_t seeds = envInt("BENCH_TUNE_SEEDS", 3);
  std::vector<std::string> searchTuners = splitList(envString("BENCH_TUNE_SEARCH_TUNERS", "xgb,ga,random"));
  std::vector<std::string> searchConvs = splitList(envString("BENCH_TUNE_SEARCH_CONVS", "56:64:64:3:1,28:128:128:3:1,7:512:512:3:1"));
  bool share = envInt("BENCH_TUNE_SHARE", 1) != 0;
  size_t batch = size_t(std::max<int64_t>(1, envInt("BENCH_TUNE_BATCH", 8)));

  bool runs(const std::string& part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
  std::string logOf(const std::string& model) const { return out + "/" + model + "." + tuner + ".log"; }
};

// ---------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------

void report(const std::string& name, double value, const std::string& unit) {
  fmt::print("BENCH {} {:.4g} {}\n", name, value, unit);
  std::fflush(stdout);
}

/// BENCH lines held back until a table is printed, so that they do not break its rows.
class DeferredReports {
 public:
  void add(const std::string& name, double value, const std::string& unit) { lines_.push_back({name, value, unit}); }
  void flush() {
    for (const auto& l : lines_) report(l.name, l.value, l.unit);
    lines_.clear();
  }

 private:
  struct Line {
    std::string name;
    double value;
    std::string unit;
  };
  std::vector<Line> lines_;
};

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string machineLoad() {
  double load[3] = {0, 0, 0};
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = -1;
    std::fclose(f);
  }
  return fmt::format("{:.2f} {:.2f} {:.2f}", load[0], load[1], load[2]);
}

/// "resnet-18" -> "resnet_18": BENCH names are one token of word characters.
std::string benchName(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return text;
}

// ---------------------------------------------------------------------------------------
// Networks and their tasks, exactly as `tessel tune` sees them (NCHW zoo network, standard
// passes converting to NHWC, tasks with a CPU template).
// ---------------------------------------------------------------------------------------

graph::Graph preparedModel(const std::string& model) {
  return graph::optimizeGraph(graph::buildModel(model, graph::ModelOptions{}), graph::OptimizeOptions{});
}

std::vector<TuningTaskPtr> tuningTasks(const graph::Graph& g) {
  std::vector<TuningTaskPtr> tasks;
  for (const graph::Task& t : graph::extractTasks(g)) {
    auto templateName = tune::autotvm::cpuTemplateFor(t.dag);
    if (templateName) tasks.push_back(tune::autotvm::makeCpuTuningTask(t.name, t.dag, "cpu", *templateName));
  }
  return tasks;
}

/// The shape of a conv2d_nhwc task's convolution, read from its DAG: the data placeholder
/// [N, H, W, CI], the anchor's output [N, OH, OW, CO] and its reductions (KH, KW, CI). The
/// zoo pads "same" ((K-1)/2); the stride is the one that gives OH.
std::optional<Conv2dShape> convShapeOf(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  if (!anchor || dag.inputNames().empty()) return std::nullopt;
  const te::OperationNode& conv = *dag.op(anchor->first);
  const te::OperationNode& data = *dag.op(dag.inputNames()[0]);
  if (conv.shape.size() != 4 || data.shape.size() != 4 || !conv.reduction() || conv.reduction()->axes.size() != 3)
    return std::nullopt;
  const auto& axes = conv.reduction()->axes;
  int64_t kernel = axes[0].extent;
  if (axes[1].extent != kernel || axes[2].extent != data.shape[3]) return std::nullopt;
  Conv2dShape s{data.shape[0], data.shape[3], data.shape[1], data.shape[2], conv.shape[3], kernel, 1, (kernel - 1) / 2};
  for (s.stride = 1; s.stride <= 4; ++s.stride)
    if (s.outHeight() == conv.shape[1] && s.outWidth() == conv.shape[2]) return s;
  return std::nullopt;
}

std::string describe(const Conv2dShape& s) {
  return fmt::format("{}x{} {}->{} {}x{} s{}", s.height, s.width, s.inChannels, s.outChannels, s.kernel, s.kernel, s.stride);
}

/// A short BENCH-friendly name: conv56_64_64_k3s1.
std::string shortName(const Conv2dShape& s) {
  return fmt::format("conv{}_{}_{}_k{}s{}", s.height, s.inChannels, s.outChannels, s.kernel, s.stride);
}

struct Latency {
  double mean = 0, stddev = 0;  ///< milliseconds
};

/// As `tessel tune` evaluates: zero inputs, 10 measurements of at least 100 ms each.
Latency timeModule(const std::string& directory) {
  auto executor = runtime::GraphExecutor::load(directory);
  executor.setZeroInputs();
  runtime::TimeEvaluatorOptions timing;
  timing.number = 1;
  timing.repeat = 10;
  timing.minRepeatMs = 100;
  auto r = executor.benchmark(timing);
  return {r.mean * 1e3, r.stddev * 1e3};
}

// ---------------------------------------------------------------------------------------
// Part 1: networks
// ---------------------------------------------------------------------------------------

struct NetworkResult {
  std::string model;
  size_t tasks = 0;
  int64_t trials = 0, errors = 0;
  double tuneSeconds = 0, buildWall = 0, runWall = 0;
  double trialBuildSeconds = 0, trialRunSeconds = 0;  ///< sums of the records' build/run seconds
  Latency tuned, untuned;
};

NetworkResult tuneNetwork(const std::string& model, const Settings& settings, MeasurementCache& cache, int buildParallelism) {
  NetworkResult result;
  result.model = model;
  fmt::print("\n== {}: tune every task with {} ({} trials per task{}) ==\n", model, settings.tuner, settings.trials,
             settings.earlyStopping > 0 ? fmt::format(", early stopping {}", settings.earlyStopping) : "");
  graph::Graph g = preparedModel(model);
  std::vector<TuningTaskPtr> tasks = tuningTasks(g);
  result.tasks = tasks.size();
  for (size_t i = 0; i < tasks.size(); ++i)
    fmt::print("  {:>2}  {:<28} {:<26} {:>8.1f} MFLOP {:>7} configs\n", i + 1, tasks[i]->name, tasks[i]->templateName,
               tasks[i]->flops / 1e6, tasks[i]->space->size());

  // A fresh log: the figures must come from this run's trials only.
  std::string logPath = settings.logOf(model);
  std::filesystem::remove(logPath);
  tune::RecordLogWriter log(logPath);
  cache.resetCounters();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& task = tasks[i];
    auto tuner = tune::autotvm::makeTuner(settings.tuner, task, i);
    tune::autotvm::TuneTaskOptions o;
    o.nTrial = settings.trials;
    o.earlyStopping = settings.earlyStopping;
    o.batchSize = settings.batch;
    o.progressPrefix = fmt::format("[Task {:>2}/{:>2}] ", i + 1, tasks.size());
    auto r = tune::autotvm::tuneTask(task, *tuner, cache.builder(), cache.runner(), o, {},
                                     [&](const tune::autotvm::ConfigEntity& config, const tune::MeasureInput& input,
                                         const tune::MeasureResult& m) {
                                       result.trialBuildSeconds += m.buildSeconds;
                                       result.trialRunSeconds += m.runSeconds;
                                       tune::RecordConfig rc{int64_t(config.index()), config.toJson()["entity"]};
                                       log.append(tune::makeRecord(input, m, task->templateName,
                                                                   nlohmann::json{{"task", task->name}}, rc));
                                     });
    result.trials += r.trials;
    result.errors += r.errors;
    result.tuneSeconds += r.seconds;
  }
  result.buildWall = cache.counters().buildSeconds;
  result.runWall = cache.counters().runSeconds;

  fmt::print("Compile...\n");
  std::fflush(stdout);
  auto best = tune::HistoryBest::fromLog(logPath, "cpu");
  auto fallback = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  graph::BuildOptions tunedBuild;
  tunedBuild.schedule = best.provider(fallback);
  std::string tunedDir = settings.out + "/" + model + ".tuned", untunedDir = settings.out + "/" + model + ".untuned";
  graph::buildGraph(g, tunedDir, tunedBuild);
  fmt::print("{}\n", best.summary());
  graph::BuildOptions untunedBuild;
  untunedBuild.schedule = fallback;
  graph::buildGraph(g, untunedDir, untunedBuild);

  fmt::print("Evaluate inference time cost...\n");
  std::fflush(stdout);
  result.tuned = timeModule(tunedDir);
  result.untuned = timeModule(untunedDir);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", result.tuned.mean, result.tuned.stddev);
  fmt::print("Untuned (default schedules): {:.2f} ms ({:.2f} ms); speedup {:.2f}x\n", result.untuned.mean,
             result.untuned.stddev, result.untuned.mean / result.tuned.mean);

  // Where a trial's time goes. The builder compiles a round's candidates in parallel, so its
  // wall time is less than the sum of the records' build_seconds; the tuner's share is the
  // loop's wall time outside building and running (model training, search, features).
  double tunerWall = std::max(0.0, result.tuneSeconds - result.buildWall - result.runWall);
  double trials = double(std::max<int64_t>(result.trials, 1));
  double perTrial = result.tuneSeconds / trials;
  fmt::print("Tuned {} tasks: {} trials ({} failed) in {:.1f} s ({:.2f} trials per second)\n", result.tasks, result.trials,
             result.errors, result.tuneSeconds, result.trials / std::max(result.tuneSeconds, 1e-9));
  fmt::print("Per trial {:.3f} s of wall time: build {:.3f} s ({:.0f}%), run {:.3f} s ({:.0f}%), tuner {:.3f} s ({:.0f}%); "
             "records: build_seconds {:.3f} s, run_seconds {:.3f} s per trial (builds run {} at a time)\n",
             perTrial, result.buildWall / trials, 100 * result.buildWall / result.tuneSeconds,
             result.runWall / trials, 100 * result.runWall / result.tuneSeconds, tunerWall / trials,
             100 * tunerWall / result.tuneSeconds, result.trialBuildSeconds / trials,
             result.trialRunSeconds / trials, buildParallelism);

  std::string n = benchName(model);
  report(n + "_tuned_ms", result.tuned.mean, "ms");
  report(n + "_untuned_ms", result.untuned.mean, "ms");
  report(n + "_tuning_speedup", result.untuned.mean / result.tuned.mean, "x");
  report(n + "_tune_tasks", double(result.tasks), "tasks");
  report(n + "_tune_trials", double(result.trials), "trials");
  report(n + "_tune_seconds", result.tuneSeconds, "s");
  report(n + "_trials_per_second", result.trials / std::max(result.tuneSeconds, 1e-9), "trials/s");
  report(n + "_trial_build_wall_s", result.buildWall / trials, "s");
  report(n + "_trial_run_wall_s", result.runWall / trials, "s");
  report(n + "_trial_tuner_wall_s", tunerWall / trials, "s");
  return result;
}

// ---------------------------------------------------------------------------------------
// Part 2: resnet-18's convolutions against oneDNN
// ---------------------------------------------------------------------------------------

void fillRandom(runtime::Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.dataAs<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
}

double oneDnnGflops(const Conv2dShape& s) {
  auto data = runtime::Tensor::empty({s.batch, s.height, s.width, s.inChannels}, DataType::float32());
  auto weight = runtime::Tensor::empty({s.kernel, s.kernel, s.inChannels, s.outChannels}, DataType::float32());
  auto output = runtime::Tensor::empty({s.batch, s.outHeight(), s.outWidth(), s.outChannels}, DataType::float32());
  fillRandom(data, 1);
  fillRandom(weight, 2);
  OneDnnConv2d conv(s, data.dataAs<float>(), weight.dataAs<float>(), output.dataAs<float>());
  runtime::TimeEvaluatorOptions options;
  options.repeat = 7;
  options.minRepeatMs = 100;
  options.warmup = 2;
  return s.flops() / runtime::timeFunction([&] { conv.run(); }, options).median / 1e9;
}

void compareConvs(const Settings& settings) {
  const std::string model = "resnet-18";
  std::string logPath = settings.logOf(model);
  fmt::print("\n== {}'s conv2d tasks: best tuned GFLOPS ({}) vs oneDNN, NHWC, {} threads ==\n", model, logPath,
             runtime::kernelThreadCount());
  if (!std::filesystem::exists(logPath)) {
    fmt::print("no log {}: run the networks part first (BENCH_TUNE_PARTS=networks,convs)\n", logPath);
    return;
  }
  auto file = tune::readRecords(logPath);
  tune::warnSkippedLines(file, logPath);
  std::map<std::string, double> best, fallback;
  for (const auto& r : tune::bestRecords(file.records)) best[r.task.workloadKey] = r.gflops();
  std::vector<TuningTaskPtr> tasks = tuningTasks(preparedModel(model));
  for (const auto& task : tasks)
    for (const auto& r : tune::recordsOfTask(file.records, task->measure->workloadKey, "cpu"))
      if (r.config && r.config->index == int64_t(task->fallbackIndex)) fallback[task->measure->workloadKey] = r.gflops();

  fmt::print("{:>3}  {:<26} {:<22} {:>10} {:>10} {:>10} {:>8}\n", "#", "task", "conv (NHWC)", "default", "tuned", "oneDNN",
             "tuned/1DNN");
  DeferredReports reports;
  double logSum = 0;
  int counted = 0, index = 0;
  for (const auto& task : tasks) {
    if (task->templateName != "conv2d_nhwc.x86") continue;
    auto shape = convShapeOf(task->measure->dag);
    ++index;
    if (!shape) {
      fmt::print("{:>3}  {:<26} (shape not recognized)\n", index, task->name);
      continue;
    }
    double tuned = best.count(task->measure->workloadKey) ? best[task->measure->workloadKey] : 0;
    double byDefault = fallback.count(task->measure->workloadKey) ? fallback[task->measure->workloadKey] : 0;
    double peer = oneDnnGflops(*shape);
    double ratio = tuned / peer;
    fmt::print("{:>3}  {:<26} {:<22} {:>10.1f} {:>10.1f} {:>10.1f} {:>8.2f}\n", index, task->name, describe(*shape), byDefault,
               tuned, peer, ratio);
    std::string n = fmt::format("resnet_18_conv{}_{}", index, shortName(*shape));
    reports.add(n + "_tuned_gflops", tuned, "GFLOPS");
    reports.add(n + "_onednn_gflops", peer, "GFLOPS");
    reports.add(n + "_tuned_vs_onednn", ratio, "ratio");
    if (tuned > 0) {
      logSum += std::log(ratio);
      ++counted;
    }
  }
  reports.flush();
  if (counted) report("resnet_18_convs_tuned_vs_onednn_geomean", std::exp(logSum / counted), "ratio");
}

// ---------------------------------------------------------------------------------------
// Part 3: search efficiency
// ---------------------------------------------------------------------------------------

/// "56:64:64:3:1" -> the first resnet-18 conv task of that input size, channels, kernel, stride.
TuningTaskPtr findConvTask(const std::vector<TuningTaskPtr>& tasks, const std::string& spec) {
  auto fields = splitList(spec, ':');
  TESSEL_CHECK(fields.size() == 5, "BENCH_TUNE_SEARCH_CONVS: '{}' is not SIZE:IN:OUT:KERNEL:STRIDE", spec);
  std::vector<int64_t> v;
  for (const auto& f : fields) v.push_back(std::stoll(f));
  for (const auto& task : tasks) {
    if (task->templateName != "conv2d_nhwc.x86") continue;
    auto s = convShapeOf(task->measure->dag);
    if (s && s->height == v[0] && s->inChannels == v[1] && s->outChannels == v[2] && s->kernel == v[3] && s->stride == v[4])
      return task;
  }
  fail("BENCH_TUNE_SEARCH_CONVS: resnet-18 has no conv {}", spec);
}

void searchEfficiency(const Settings& settings, MeasurementCache& cache) {
  auto checkpoints = settings.checkpoints;
  std::sort(checkpoints.begin(), checkpoints.end());
  int64_t maxTrials = checkpoints.back();
  fmt::print("\n== search efficiency on resnet-18 convs: best GFLOPS after {} trials, mean of {} seeds; {} ==\n",
             fmt::join(checkpoints, "/"), settings.seeds,
             settings.share ? "a candidate measured once is not measured again (BENCH_TUNE_SHARE=1)" : "every trial measured");
  std::vector<TuningTaskPtr> all = tuningTasks(preparedModel("resnet-18"));
  std::vector<TuningTaskPtr> tasks;
  for (const auto& spec : settings.searchConvs) tasks.push_back(findConvTask(all, spec));

  std::filesystem::path logPath = settings.out + "/search.log";
  std::filesystem::remove(logPath);
  tune::RecordLogWriter log(logPath.string());
  cache.resetCounters();
  auto start = Clock::now();
  int64_t trials = 0;
  // mean[task][tuner][checkpoint]
  std::vector<std::map<std::string, std::vector<double>>> mean(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& task = tasks[t];
    std::string conv = describe(*convShapeOf(task->measure->dag));
    for (const std::string& tunerName : settings.searchTuners) {
      std::vector<double>& sums = mean[t][tunerName];
      sums.assign(checkpoints.size(), 0.0);
      for (int64_t seed = 0; seed < settings.seeds; ++seed) {
        auto tuner = tune::autotvm::makeTuner(tunerName, task, uint64_t(seed));
        tune::autotvm::TuneTaskOptions o;
        o.nTrial = maxTrials;
        o.batchSize = settings.batch;
        o.measureFallbackFirst = false;  // the search alone, not the default schedule's floor
        o.progressPrefix = fmt::format("[{} {:<6} seed {}] ", conv, tunerName, seed);
        std::vector<double> bestAfter;  // best GFLOPS after each trial
        tune::autotvm::tuneTask(task, *tuner, cache.builder(), cache.runner(), o, {},
                                [&](const tune::autotvm::ConfigEntity& config, const tune::MeasureInput& input,
                                    const tune::MeasureResult& m) {
                                  double g = m.ok() ? task->flops / m.cost() / 1e9 : 0;
                                  bestAfter.push_back(std::max(g, bestAfter.empty() ? 0.0 : bestAfter.back()));
                                  tune::RecordConfig rc{int64_t(config.index()), config.toJson()["entity"]};
                                  log.append(tune::makeRecord(input, m, task->templateName,
                                                              nlohmann::json{{"task", task->name},
                                                                             {"tuner", tunerName},
                                                                             {"seed", seed},
                                                                             {"shared", cache.wasShared(input)}},
                                                              rc));
                                });
        trials += int64_t(bestAfter.size());
        // A space smaller than a checkpoint ends early: its best is final from then on.
        for (size_t c = 0; c < checkpoints.size(); ++c)
          if (!bestAfter.empty()) sums[c] += bestAfter[std::min<size_t>(size_t(checkpoints[c]), bestAfter.size()) - 1];
      }
      for (double& s : sums) s /= double(settings.seeds);
    }
  }
  double seconds = secondsSince(start);
  const auto& counters = cache.counters();

  fmt::print("\n{:<22} {:<8}", "conv (NHWC)", "tuner");
  for (int64_t c : checkpoints) fmt::print(" {:>9}", fmt::format("@{}", c));
  fmt::print("   (best GFLOPS, mean of {} seeds)\n", settings.seeds);
  DeferredReports reports;
  int met = 0;
  size_t early = checkpoints.size() > 1 ? 1 : 0;  // xgb's checkpoint in the goal: the second (128)
  for (size_t t = 0; t < tasks.size(); ++t) {
    auto shape = *convShapeOf(tasks[t]->measure->dag);
    for (const std::string& tunerName : settings.searchTuners) {
      fmt::print("{:<22} {:<8}", describe(shape), tunerName);
      for (size_t c = 0; c < checkpoints.size(); ++c) {
        fmt::print(" {:>9.1f}", mean[t][tunerName][c]);
        reports.add(fmt::format("search_{}_{}_at{}_gflops", shortName(shape), tunerName, checkpoints[c]),
                    mean[t][tunerName][c], "GFLOPS");
      }
      fmt::print("\n");
    }
    if (mean[t].count("xgb") && mean[t].count("random")) {
      double ratio = mean[t]["xgb"][early] / mean[t]["random"].back();
      met += ratio >= 1.0;
      reports.add(fmt::format("search_{}_xgb_at{}_vs_random_at{}", shortName(shape), checkpoints[early], checkpoints.back()),
                  ratio, "ratio");
    }
  }
  if (std::count(settings.searchTuners.begin(), settings.searchTuners.end(), "xgb") &&
      std::count(settings.searchTuners.begin(), settings.searchTuners.end(), "random"))
    fmt::print("goal (xgb at {} trials beats random at {}): met on {} of {} tasks\n", checkpoints[early], checkpoints.back(),
               met, tasks.size());
  reports.flush();
  fmt::print("search: {} trials in {:.1f} s ({:.2f} trials per second); {} measured (build {:.1f} s, run {:.1f} s), {} "
             "answered from earlier measurements; log: {}\n",
             trials, seconds, trials / std::max(seconds, 1e-9), counters.measured, counters.buildSeconds,
             counters.runSeconds, counters.shared, logPath.string());
  report("search_trials", double(trials), "trials");
  report("search_seconds", seconds, "s");
  report("search_measured", double(counters.measured), "trials");
}

int run() {
  Settings settings;
  TESSEL_CHECK(settings.trials >= 1, "BENCH_TUNE_TRIALS must be at least 1");
  TESSEL_CHECK(settings.seeds >= 1, "BENCH_TUNE_SEEDS must be at least 1");
  TESSEL_CHECK(!settings.checkpoints.empty(), "BENCH_TUNE_CHECKPOINTS: no trial counts");
  for (const auto& part : settings.parts)
    TESSEL_CHECK(part == "networks" || part == "convs" || part == "search", "BENCH_TUNE_PARTS: unknown part '{}'", part);
  tune::autotvm::checkTunerName(settings.tuner);
  for (const auto& t : settings.searchTuners) tune::autotvm::checkTunerName(t);
  std::filesystem::create_directories(settings.out);

  fmt::print("# bench_tune: {} cores, {} kernel threads, OMP_WAIT_POLICY={}, load average {}; parts: {}; output: {}\n",
             std::thread::hardware_concurrency(), runtime::kernelThreadCount(), envString("OMP_WAIT_POLICY", "(unset)"),
             machineLoad(), fmt::join(settings.parts, ","), settings.out);
  auto start = Clock::now();
  // One builder and runner for the whole run, as one `tessel tune` process has.
  tune::LocalBuilder builder;
  tune::LocalRunner runner;
  MeasurementCache cache(builder, runner, settings.share);

  std::vector<NetworkResult> networks;
  if (settings.runs("networks"))
    for (const auto& model : settings.models) networks.push_back(tuneNetwork(model, settings, cache, builder.parallelism()));
  if (settings.runs("convs")) compareConvs(settings);
  if (settings.runs("search")) searchEfficiency(settings, cache);

  if (!networks.empty()) {
    fmt::print("\n== summary ({} trials per task with {}) ==\n", settings.trials, settings.tuner);
    fmt::print("{:<12} {:>6} {:>7} {:>9} {:>9} {:>11} {:>11} {:>8}\n", "model", "tasks", "trials", "tune s", "trials/s",
               "untuned ms", "tuned ms", "speedup");
    for (const auto& n : networks)
      fmt::print("{:<12} {:>6} {:>7} {:>9.1f} {:>9.2f} {:>11.2f} {:>11.2f} {:>7.2f}x\n", n.model, n.tasks, n.trials,
                 n.tuneSeconds, n.trials / std::max(n.tuneSeconds, 1e-9), n.untuned.mean, n.tuned.mean,
                 n.untuned.mean / n.tuned.mean);
  }
  fmt::print("# bench_tune took {:.1f} s; load average now {}\n", secondsSince(start), machineLoad());
  return 0;
}

}  // namespace
}  // namespace tessel::bench

int main() {
  try {
    return tessel::bench::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tune: %s\n", e.what());
    return 1;
  }
}
