// bench_tune: what template tuning buys on this CPU and how fast it gets there (issue 4).
// Three parts, all measured in this one run, printed as `BENCH <name> <value> <unit>` lines
// and readable tables:
//
//   networks  `tessel tune` on each network (as a user runs it: thread policy, load monitor,
//             cold caches, confirmation) with one tuner (xgb) under a fixed trial budget; its
//             printed figures: trials per second (tune_trials_per_s over all networks), where a
//             trial's time goes (build, run, tuner wall; lowering, compile, link CPU; load),
//             tuned and untuned latency. The tuned modules are left in OUT/<model>.tuned for
//             the peer comparison (run.sh).
//   convs     for every conv2d task of resnet-18 (BENCH_TUNE_CONV_MODELS), the kernel of its best record timed warm
//             (the same buffers every call) and cold (buffers rotating through twice the
//             last-level cache) in alternation with oneDNN's on the same convolution in the
//             same layout and cache state (NHWC, what tessel builds after its layout
//             conversion) with the same epilogue (bias, residual add, ReLU: oneDNN's
//             post-ops), BENCH_TUNE_CONV_ROUNDS rounds, the median of each.
//   busy      resnet-18 tuned with a CPU-bound program on core 0 for the whole tuning; the
//             program stopped, the tuned and untuned networks timed in alternation:
//             busy_tuned_vs_untuned (must not exceed 1).
//   search    search efficiency: on three resnet-18 convs, the best GFLOPS after N trials for
//             xgb, ga and random, mean of several seeds. The fallback config is NOT measured
//             first here (tessel tune does), so the curves compare the search alone.
//   auto      the auto-scheduler: resnet-18 and mobilenet tuned with `--scheduler auto` and
//             the template run's total budget (tuned latency next to template-tuned; run.sh
//             times both modules beside the peers; both also timed here in alternation, with
//             the template module loaded a second time as the control: _template_control_paired
//             is the difference the timing shows between two copies of one module);
//             resnet-18's 56x56x64 3x3 conv (AutoScheduleBench.h): after 50 / 100 / 200
//             trials, the schedule the tuner would build then, re-timed in alternation with
//             oneDNN's; states scored per second.
//
// Environment (defaults are the issue's numbers):
//   BENCH_TUNE_OUT          output folder for logs and modules (build/bench-tune)
//   BENCH_TUNE_PARTS        networks,convs,busy,search
//   TESSEL                  the tessel command (build/src/cli/tessel)
//   BENCH_TUNE_MODELS       resnet-18,resnet-50,mobilenet,mobilenet-v2
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
//   BENCH_TUNE_CONV_MODELS  resnet-18 (the networks the convs part compares, each from its log
//                           of the networks part)
//   BENCH_TUNE_CONV_ROUNDS  21 interleaved rounds per conv in the convs part (with 5, one
//                           conv's ratio to oneDNN moved by up to 14% between two runs on
//                           the same records; about 3.5 minutes for the 15 convs)
//   BENCH_TUNE_INTERLEAVED_ROUNDS  200 rounds of modules timed in alternation (auto against
//                           template-tuned and its control, busy-tuned against untuned; about
//                           60 s for resnet-18): the median of the rounds' ratios decides (_paired)
//   BENCH_TUNE_AUTO_CONV, BENCH_TUNE_AUTO_CHECKPOINTS, BENCH_TUNE_AUTO_POPULATION,
//   BENCH_TUNE_AUTO_BATCH   the auto part's conv: 56:64:64:3:1, 50,100,200, 2048, 16
//   BENCH_TUNE_AUTO_MODELS  resnet-18,mobilenet (none: the conv only); BENCH_TUNE_AUTO_TRIALS: their budget (default:
//                           the template run's total trials of the same network)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "AutoScheduleBench.h"
#include "BenchReport.h"
#include "ConvTiming.h"
#include "MeasurementCache.h"
#include "OneDnnConv.h"
#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "driver/PreparedModel.h"
#include "graph/Build.h"
#include "graph/Fusion.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Conv2d.h"
#include "ops/OpTraits.h"
#include "ops/Winograd.h"
#include "ops/Schedules.h"
#include "passes/Lower.h"
#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "runtime/Tensor.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "tune/HistoryBest.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/TuneTask.h"
#include "support/Clock.h"

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
  std::vector<std::string> parts = splitList(envString("BENCH_TUNE_PARTS", "networks,auto,convs,busy,search"));
  std::string tessel = envString("TESSEL", "build/src/cli/tessel");
  std::vector<std::string> models = splitList(envString("BENCH_TUNE_MODELS", "resnet-18,resnet-50,mobilenet,mobilenet-v2"));
  std::string tuner = envString("BENCH_TUNE_TUNER", "xgb");
  int64_t trials = envInt("BENCH_TUNE_TRIALS", 64);
  int64_t earlyStopping = envInt("BENCH_TUNE_EARLY_STOPPING", 0);
  std::vector<int64_t> checkpoints = envInts("BENCH_TUNE_CHECKPOINTS", "64,128,256,512");
  int64_t seeds = envInt("BENCH_TUNE_SEEDS", 3);
  std::vector<std::string> convModels = splitList(envString("BENCH_TUNE_CONV_MODELS", "resnet-18"));
  std::vector<std::string> searchTuners = splitList(envString("BENCH_TUNE_SEARCH_TUNERS", "xgb,ga,random"));
  std::vector<std::string> searchConvs = splitList(envString("BENCH_TUNE_SEARCH_CONVS", "56:64:64:3:1,28:128:128:3:1,7:512:512:3:1"));
  bool share = envInt("BENCH_TUNE_SHARE", 1) != 0;
  size_t batch = size_t(std::max<int64_t>(1, envInt("BENCH_TUNE_BATCH", 8)));
  int convRounds = int(std::max<int64_t>(1, envInt("BENCH_TUNE_CONV_ROUNDS", 21)));
  int interleavedRounds = int(std::max<int64_t>(2, envInt("BENCH_TUNE_INTERLEAVED_ROUNDS", 200)));

  bool runs(const std::string& part) const { return std::find(parts.begin(), parts.end(), part) != parts.end(); }
  std::string logOf(const std::string& model) const { return out + "/" + model + "." + tuner + ".log"; }
};

// ---------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------


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

/// The network as `tessel tune` prepares it for this machine (driver::prepareModel): `direct`
/// with every convolution direct, and its Winograd `variants`, the first where the default
/// rules (--winograd auto) put Winograd, which is what `tessel compile` builds without records.
driver::PreparedModel preparedModel(const std::string& model) {
  return driver::prepareModel(graph::buildModel(model, graph::ModelOptions{}), driver::PrepareOptions{});
}

std::vector<TuningTaskPtr> tuningTasks(const graph::Graph& g) {
  std::vector<TuningTaskPtr> tasks;
  for (const graph::Task& t : graph::extractTasks(g)) {
    auto templateName = tune::autotvm::cpuTemplateFor(t.dag, target::Target::host());
    if (templateName) tasks.push_back(tune::autotvm::makeCpuTuningTask(t.name, t.dag, target::Target::host(), *templateName));
  }
  return tasks;
}

/// The shape of a conv2d_nhwc task's convolution, read from its DAG: the data placeholder
/// [N, H, W, CI], the anchor's output [N, OH, OW, CO] and its reductions (KH, KW, CI). The
/// zoo pads "same" ((K-1)/2); the stride is the one that gives OH. A Winograd task's
/// convolution: 3x3, stride 1, from the data and the output stage.
std::optional<Conv2dShape> convShapeOf(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  if (!anchor || dag.inputNames().empty()) return std::nullopt;
  if (ops::traitsOf(*dag.op(*anchor)).kind == ops::OpKind::WinogradGemm) {
    for (const auto& op : dag.ops())
      if (ops::traitsOf(*op).kind == ops::OpKind::WinogradOutput) {
        const auto& data = dag.op(dag.inputNames()[0])->shape;
        Conv2dShape s{data[0], data[3], data[1], data[2], op->shape[3], 3, 1, 1};
        if (s.outHeight() == op->shape[1] && s.outWidth() == op->shape[2]) return s;
      }
    return std::nullopt;
  }
  const te::OperationNode& conv = *dag.op(*anchor);
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

/// What each task of `g` computes after its convolution (bias, residual add, ReLU), by task
/// name, read from the operators of its fused function: oneDNN's post-ops then do the same.
std::map<std::string, ConvEpilogue> convEpilogues(const graph::Graph& g) {
  std::vector<graph::FusedGroup> groups = graph::fuseOperators(g);
  std::map<std::string, ConvEpilogue> epilogues;
  for (const graph::Task& t : graph::extractTasks(g)) {
    ConvEpilogue e;
    for (int id : groups.at(size_t(t.groups.at(0))).nodes) {
      const graph::Node& n = g.node(id);
      e.relu |= n.op == "relu";
      if (n.op != "add") continue;
      bool constant = false;
      for (int input : n.inputs) constant |= g.node(input).kind == graph::NodeKind::Constant;
      (constant ? e.bias : e.residual) = true;
    }
    epilogues[t.name] = e;
  }
  return epilogues;
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

// ---------------------------------------------------------------------------------------
// Part 1: networks
// ---------------------------------------------------------------------------------------

struct NetworkResult {
  std::string model;
  int64_t tasks = 0, trials = 0;
  double tuneSeconds = 0, trialsPerSecond = 0;
  std::string perTrial;  ///< the CLI's "Per trial: ..." line
  Latency tuned, untuned;
};

/// Runs `tessel ARGS`, its output passed through as it comes, and returns the output.
std::string runTessel(const Settings& settings, std::vector<std::string> args) {
  args.insert(args.begin(), settings.tessel);
  int pipeFds[2];
  TESSEL_CHECK(pipe2(pipeFds, O_CLOEXEC) == 0, "cannot create a pipe for {}", settings.tessel);
  SpawnOptions spawn;
  spawn.standardOutput = spawn.standardError = pipeFds[1];
  spawn.searchPath = false;
  pid_t pid = spawnProcess(args, spawn);
  close(pipeFds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buffer, size_t(n));
    std::fwrite(buffer, 1, size_t(n), stdout);
    std::fflush(stdout);
  }
  close(pipeFds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  TESSEL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "{} failed (status {})", fmt::join(args, " "), status);
  return output;
}

/// The groups of the first match of `pattern` in `text` (whole match first), or an Error
/// naming what is missing.
std::vector<std::string> find(const std::string& text, const std::string& pattern, const std::string& what) {
  std::smatch m;
  TESSEL_CHECK(std::regex_search(text, m, std::regex(pattern)), "the tune output has no {} line", what);
  return std::vector<std::string>(m.begin(), m.end());
}

/// `tessel tune` on a network, as a user runs it (the thread policy, the load monitor, cold
/// caches and the confirmation included), its figures read from what it prints.
NetworkResult tuneNetwork(const std::string& model, const Settings& settings, bool evaluate = true, const std::string& suffix = "") {
  NetworkResult result;
  result.model = model;
  fmt::print("\n== {}{}: tessel tune with {} ({} trials per task{}) ==\n", model, suffix, settings.tuner, settings.trials,
             settings.earlyStopping > 0 ? fmt::format(", early stopping {}", settings.earlyStopping) : "");
  std::string log = settings.logOf(model + suffix), tunedDir = settings.out + "/" + model + suffix + ".tuned";
  std::filesystem::remove(log);  // the figures must come from this run's trials only
  std::vector<std::string> args = {"tune", "--model", model, "--tuner", settings.tuner, "--n-trial", std::to_string(settings.trials),
                                   "--log", log, "-o", tunedDir};
  if (settings.earlyStopping > 0) args.insert(args.end(), {"--early-stopping", std::to_string(settings.earlyStopping)});
  if (!evaluate) args.push_back("--no-evaluate");
  std::string out = runTessel(settings, args);
  // "...trials per second)" or "...trials per second; 2 duplicates of measured schedules ...)".
  auto tuned = find(out, R"(Tuned (\d+) tasks: (\d+) trials in ([0-9.]+) s \(([0-9.]+) trials per second[;)])", "Tuned");
  result.tasks = std::stoll(tuned[1]);
  result.trials = std::stoll(tuned[2]);
  result.tuneSeconds = std::stod(tuned[3]);
  result.trialsPerSecond = std::stod(tuned[4]);
  result.perTrial = find(out, R"(Per trial: [^\n]*)", "Per trial")[0];
  if (evaluate) {
    auto mean = find(out, R"(Mean inference time \(std dev\): ([0-9.]+) ms \(([0-9.]+) ms\))", "Mean inference time");
    auto untuned = find(out, R"(Untuned \(default schedules\): ([0-9.]+) ms \(([0-9.]+) ms\))", "Untuned");
    result.tuned = {std::stod(mean[1]), std::stod(mean[2])};
    result.untuned = {std::stod(untuned[1]), std::stod(untuned[2])};
  }
  std::string n = benchName(model + suffix);
  report(n + "_tune_tasks", double(result.tasks), "tasks");
  report(n + "_tune_trials", double(result.trials), "trials");
  report(n + "_tune_seconds", result.tuneSeconds, "s");
  report(n + "_trials_per_second", result.trialsPerSecond, "trials/s");
  auto split = find(out, R"(Per trial: ([0-9.]+) s = build ([0-9.]+) s \+ run ([0-9.]+) s \+ tuner ([0-9.]+) s \+ other ([0-9.]+) s.*lowering ([0-9.]+) s, compile ([0-9.]+) s, link ([0-9.]+) s.*load ([0-9.]+) s)", "Per trial");
  const char* names[] = {"trial_s", "trial_build_wall_s", "trial_run_wall_s", "trial_tuner_wall_s", "trial_other_wall_s",
                         "trial_lower_cpu_s", "trial_compile_cpu_s", "trial_link_cpu_s", "trial_load_s"};
  for (size_t i = 0; i < std::size(names); ++i) report(n + "_" + names[i], std::stod(split[i + 1]), "s");
  if (evaluate) {
    report(n + "_tuned_ms", result.tuned.mean, "ms");
    report(n + "_untuned_ms", result.untuned.mean, "ms");
    report(n + "_tuning_speedup", result.untuned.mean / result.tuned.mean, "x");
  }
  return result;
}

/// Module directories timed in alternation on the free cores, `rounds` rounds of at least
/// 100 ms each: a change in the machine's speed hits them alike. Many short rounds: a round's
/// spread on this class of shared host reached a sixth of the mean (mobilenet, 10 rounds: std dev
/// 0.88 ms on 5.42), so the median of 10 still moved by several percent between runs. A
/// directory may be named twice: it is loaded twice, as another module would be.
std::vector<runtime::TimingResult> timeModulesInAlternation(const std::vector<std::string>& dirs, int rounds) {
  runtime::useFreeCores();
  std::vector<runtime::GraphExecutor> executors;
  for (const std::string& dir : dirs) {
    executors.push_back(runtime::GraphExecutor::load(dir));
    executors.back().setZeroInputs();
  }
  std::vector<std::function<void()>> calls;
  for (auto& e : executors) calls.push_back([&e] { e.run(); });
  runtime::TimeEvaluatorOptions timing;
  timing.repeat = rounds;
  timing.minRepeatMs = 100;
  return runtime::timeInterleaved(calls, timing);
}

/// The template-tuned and the auto-scheduled modules of `model` timed in alternation
/// (BENCH_TUNE_INTERLEAVED_ROUNDS rounds): each tune run's own "Mean inference time" comes from
/// a different moment of the machine, and on a machine whose speed drifts by tens of percent
/// between minutes only an interleaved timing says which module is faster. The template module
/// is loaded a second time and timed third, as a control: the same kernels in other memory
/// measured 2% apart on this host (mobilenet, 100 rounds), so a difference between the two
/// tuners smaller than the control's is not one.
void compareTunedModules(const std::string& model, const Settings& settings) {
  std::string templateDir = settings.out + "/" + model + ".tuned";
  auto r = timeModulesInAlternation({templateDir, settings.out + "/" + model + ".auto.tuned", templateDir}, settings.interleavedRounds);
  double paired = runtime::medianRoundRatio(r[1], r[0]), control = runtime::medianRoundRatio(r[2], r[0]);
  fmt::print("{}, timed in alternation ({} rounds, {} threads, load average {}): template-tuned {:.3f} ms (median; std dev "
             "{:.3f}), auto-scheduled {:.3f} ms ({:.3f}), the template module loaded again {:.3f} ms ({:.3f}): auto / template "
             "{:.3f} (ratio of the medians), {:.3f} (median of the rounds' ratios); the control, template again / template, "
             "{:.3f} (median of the rounds' ratios)\n",
             model, r[0].costs.size(), runtime::kernelThreadCount(), machineLoad(), r[0].median * 1e3, r[0].stddev * 1e3,
             r[1].median * 1e3, r[1].stddev * 1e3, r[2].median * 1e3, r[2].stddev * 1e3, r[1].median / r[0].median, paired, control);
  std::string n = benchName(model) + "_auto";
  report(n + "_interleaved_ms", r[1].median * 1e3, "ms");
  report(n + "_template_interleaved_ms", r[0].median * 1e3, "ms");
  report(n + "_vs_template_interleaved", r[1].median / r[0].median, "ratio");
  report(n + "_vs_template_paired", paired, "ratio");
  report(n + "_template_control_paired", control, "ratio");
}

/// `tessel tune --scheduler auto` on a network with `trials` for the whole network (the template
/// run's total: the same budget), its module left in OUT/<model>.auto.tuned for the peers'
/// harness; reports the auto-scheduled latency and, when the template run is given, the ratio.
void autoTuneNetwork(const std::string& model, int64_t trials, const Settings& settings, const NetworkResult* templates) {
  fmt::print("\n== {}: tessel tune --scheduler auto, {} trials for the network ==\n", model, trials);
  std::string log = settings.out + "/" + model + ".auto.log", tunedDir = settings.out + "/" + model + ".auto.tuned";
  std::filesystem::remove(log);
  std::string out = runTessel(settings, {"tune", "--model", model, "--scheduler", "auto", "--n-trial", std::to_string(trials),
                                         "--log", log, "-o", tunedDir});
  auto tuned = find(out, R"(Tuned (\d+) tasks: (\d+) trials in ([0-9.]+) s \(([0-9.]+) trials per second; search ([0-9.]+) s for (\d+) states scored)",
                    "Tuned");
  auto mean = find(out, R"(Mean inference time \(std dev\): ([0-9.]+) ms)", "Mean inference time");
  auto untuned = find(out, R"(Untuned \(default schedules\): ([0-9.]+) ms)", "Untuned");
  std::string n = benchName(model) + "_auto";
  report(n + "_tasks", std::stod(tuned[1]), "tasks");
  report(n + "_trials", std::stod(tuned[2]), "trials");
  report(n + "_trials_per_second", std::stod(tuned[4]), "trials/s");
  report(n + "_states_per_search_second", std::stod(tuned[6]) / std::max(std::stod(tuned[5]), 1e-9), "states/s");
  report(n + "_tuned_ms", std::stod(mean[1]), "ms");
  report(n + "_untuned_ms", std::stod(untuned[1]), "ms");
  if (templates && templates->tuned.mean > 0) report(n + "_vs_template_tuned", std::stod(mean[1]) / templates->tuned.mean, "ratio");
  if (templates) compareTunedModules(model, settings);
}

/// A process that keeps CPU 0 busy until killed: the competitor of the busy-machine part.
pid_t startCompetitor() {
  pid_t pid = fork();
  TESSEL_CHECK(pid >= 0, "cannot fork the competitor");
  if (pid == 0) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    sched_setaffinity(0, sizeof cpus, &cpus);
    alarm(4 * 3600);  // never outlives a forgotten bench
    volatile uint64_t spins = 0;
    for (;;) spins = spins + 1;
  }
  return pid;
}

/// Tuning on a busy machine: resnet-18 tuned while a CPU-bound program holds a core for the
/// whole tuning; then, the program stopped, the tuned and untuned networks timed in
/// alternation on the quiet machine. The ratio must not exceed 1.
void busyTuning(const Settings& settings) {
  const std::string model = "resnet-18";
  pid_t competitor = startCompetitor();
  NetworkResult tuned;
  try {
    tuned = tuneNetwork(model, settings, false, "-busy");
  } catch (...) {
    kill(competitor, SIGKILL);
    waitpid(competitor, nullptr, 0);
    throw;
  }
  kill(competitor, SIGKILL);
  waitpid(competitor, nullptr, 0);
  std::string untunedDir = settings.out + "/" + model + "-busy.untuned";
  graph::BuildOptions untunedBuild;
  untunedBuild.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  graph::buildGraph(preparedModel(model).winograd[0], untunedDir, untunedBuild);  // what tessel compile builds
  auto r = timeModulesInAlternation({settings.out + "/" + model + "-busy.tuned", untunedDir}, settings.interleavedRounds);
  fmt::print("busy-machine tuning: tuned {:.2f} ms ({:.2f}), untuned {:.2f} ms ({:.2f}), timed in alternation after the "
             "competitor stopped ({} threads, load average {})\n",
             r[0].mean * 1e3, r[0].stddev * 1e3, r[1].mean * 1e3, r[1].stddev * 1e3, runtime::kernelThreadCount(), machineLoad());
  report("busy_tuned_ms", r[0].mean * 1e3, "ms");
  report("busy_untuned_ms", r[1].mean * 1e3, "ms");
  report("busy_tuned_vs_untuned", r[0].mean / r[1].mean, "ratio");
  report("busy_tuned_vs_untuned_paired", runtime::medianRoundRatio(r[0], r[1]), "ratio");
}

// ---------------------------------------------------------------------------------------
// Part 2: a network's convolutions against oneDNN
// ---------------------------------------------------------------------------------------

void compareConvs(const Settings& settings, const std::string& model) {
  std::string logPath = settings.logOf(model);
  runtime::useFreeCores();
  fmt::print("\n== {}'s conv2d tasks: the best record of {} and oneDNN, NHWC, {} threads, warm (the same buffers every call) "
             "and cold (buffers rotating through twice the last-level cache) ==\n",
             model, logPath, runtime::kernelThreadCount());
  if (!std::filesystem::exists(logPath)) {
    fmt::print("no log {}: run the networks part first (BENCH_TUNE_PARTS=networks,convs)\n", logPath);
    return;
  }
  auto file = tune::readRecords(logPath);
  tune::warnSkippedLines(file, logPath);
  std::map<std::string, tune::TuningRecord> best;
  for (auto& r : tune::bestRecords(file.records)) best.emplace(r.task.workloadKey, r);
  driver::PreparedModel variants = preparedModel(model);
  std::vector<TuningTaskPtr> tasks = tuningTasks(variants.direct);
  std::map<std::string, ConvEpilogue> epilogues = convEpilogues(variants.direct);
  // By task name: the same layer as Winograd, in the variant whose best record is the fastest.
  struct WinogradRecord {
    TuningTaskPtr task;
    const tune::TuningRecord* record = nullptr;
    int tileSize = 0;
  };
  std::map<std::string, WinogradRecord> winogradOf;
  for (const graph::Graph& w : variants.winograd)
    for (const auto& t : tuningTasks(w)) {
      auto record = best.find(t->measure->workloadKey);
      int tileSize = graph::winogradTileSize(w, w.findNode(t->name));
      if (t->templateName != "conv2d_nhwc_winograd.x86" || record == best.end() || tileSize == 0) continue;
      WinogradRecord found{t, &record->second, tileSize};
      auto [known, added] = winogradOf.try_emplace(t->name, found);
      if (!added && record->second.cost() < known->second.record->cost()) known->second = found;
    }

  fmt::print("Every kernel computes its function's epilogue (bias, residual add where marked +residual, ReLU) and oneDNN the "
             "same as post-ops\n");
  fmt::print("Winograd columns: the layer's fastest Winograd record (F(4x4) or F(2x2) by the default rules, or F(6x6) where "
             "it fits the L2), in GFLOPS of the direct convolution; 'best/oneDNN' takes the faster variant of this cache state\n");
  fmt::print("{:>3}  {:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "#", "conv (NHWC)", "direct", "winograd",
             "oneDNN", "best/1DNN", "direct", "winograd", "oneDNN", "best/1DNN");
  fmt::print("{:>3}  {:<22} {:>35} {:>35}\n", "", "", "-------------- warm --------------", "-------------- cold --------------");
  DeferredReports reports;
  double logWarm = 0, logCold = 0, logWinogradWarm = 0, logWinogradCold = 0;
  int counted = 0, winogradCounted = 0, index = 0;
  for (const auto& task : tasks) {
    if (task->templateName != "conv2d_nhwc_packed.x86" && task->templateName != "conv2d_nhwc.x86") continue;
    auto shape = convShapeOf(task->measure->dag);
    ++index;
    auto record = best.find(task->measure->workloadKey);
    if (!shape || record == best.end()) {
      fmt::print("{:>3}  {:<22} ({})\n", index, task->name, shape ? "no record" : "shape not recognized");
      continue;
    }
    std::vector<ScheduledKernel> kernels{{&task->measure->dag, record->second.steps}};
    bool winogradConfirmed = true;
    std::string tile;
    if (auto w = winogradOf.find(task->name); w != winogradOf.end()) {
      kernels.push_back({&w->second.task->measure->dag, w->second.record->steps});
      winogradConfirmed = w->second.record->result.confirmed;
      tile = fmt::format("  F({0}x{0})", w->second.tileSize);
    }
    const ConvEpilogue& epilogue = epilogues.at(task->name);
    std::vector<ConvFigures> figures = interleavedGflops(*shape, kernels, settings.convRounds, true, epilogue);
    const ConvFigures peer = figures[0], direct = figures[1];
    std::optional<ConvFigures> winograd;
    if (figures.size() > 2) winograd = figures[2];
    double bestWarm = std::max(direct.warm, winograd ? winograd->warm : 0.0);
    double bestCold = std::max(direct.cold, winograd ? winograd->cold : 0.0);
    auto cell = [&](double v) { return winograd ? fmt::format("{:.1f}", v) : std::string("-"); };
    fmt::print("{:>3}  {:<22} {:>8.1f} {:>8} {:>8.1f} {:>8.2f} {:>8.1f} {:>8} {:>8.1f} {:>8.2f}{}{}{}\n", index, describe(*shape),
               direct.warm, cell(winograd ? winograd->warm : 0), peer.warm, bestWarm / peer.warm, direct.cold,
               cell(winograd ? winograd->cold : 0), peer.cold, bestCold / peer.cold, epilogue.residual ? "  +residual" : "", tile,
               record->second.result.confirmed && winogradConfirmed ? "" : "  (unconfirmed record)");
    std::string n = fmt::format("{}_conv{}_{}", benchName(model), index, shortName(*shape));
    reports.add(n + "_tuned_warm_gflops", direct.warm, "GFLOPS");
    reports.add(n + "_onednn_warm_gflops", peer.warm, "GFLOPS");
    reports.add(n + "_tuned_cold_gflops", direct.cold, "GFLOPS");
    reports.add(n + "_onednn_cold_gflops", peer.cold, "GFLOPS");
    reports.add(n + "_tuned_vs_onednn_warm", direct.warm / peer.warm, "ratio");
    reports.add(n + "_tuned_vs_onednn_cold", direct.cold / peer.cold, "ratio");
    logWarm += std::log(direct.warm / peer.warm);
    logCold += std::log(direct.cold / peer.cold);
    ++counted;
    if (winograd) {
      reports.add(n + "_winograd_warm_gflops", winograd->warm, "GFLOPS");
      reports.add(n + "_winograd_cold_gflops", winograd->cold, "GFLOPS");
      reports.add(n + "_winograd_vs_onednn_warm", winograd->warm / peer.warm, "ratio");
      reports.add(n + "_winograd_vs_onednn_cold", winograd->cold / peer.cold, "ratio");
      logWinogradWarm += std::log(winograd->warm / peer.warm);
      logWinogradCold += std::log(winograd->cold / peer.cold);
      ++winogradCounted;
    }
  }
  reports.flush();
  std::string prefix = benchName(model) + "_convs_";
  if (counted) {
    report(prefix + "tuned_vs_onednn_warm_geomean", std::exp(logWarm / counted), "ratio");
    report(prefix + "tuned_vs_onednn_cold_geomean", std::exp(logCold / counted), "ratio");
  }
  if (winogradCounted) {
    report(prefix + "winograd_vs_onednn_warm_geomean", std::exp(logWinogradWarm / winogradCounted), "ratio");
    report(prefix + "winograd_vs_onednn_cold_geomean", std::exp(logWinogradCold / winogradCounted), "ratio");
  }
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
    if (task->templateName != "conv2d_nhwc_packed.x86" && task->templateName != "conv2d_nhwc.x86") continue;
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
  std::vector<TuningTaskPtr> all = tuningTasks(preparedModel("resnet-18").direct);
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
        o.confirmTop = 0;                // nor the confirmation
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
    TESSEL_CHECK(part == "networks" || part == "convs" || part == "busy" || part == "search" || part == "auto",
                 "BENCH_TUNE_PARTS: unknown part '{}'", part);
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

  // Each part says how long it took: the figure that decides what a default run can hold.
  auto timedPart = [](const char* part, const std::function<void()>& body) {
    auto partStart = Clock::now();
    body();
    fmt::print("# part {} took {:.0f} s\n", part, secondsSince(partStart));
  };
  std::vector<NetworkResult> networks;
  if (settings.runs("networks"))
    timedPart("networks", [&] {
      for (const auto& model : settings.models) networks.push_back(tuneNetwork(model, settings));
    });
  if (settings.runs("networks") && !networks.empty()) {
    // The trial rate of the whole run's networks, the figure of the trial-rate goal.
    int64_t trials = 0;
    double seconds = 0;
    for (const auto& n : networks) {
      trials += n.trials;
      seconds += n.tuneSeconds;
    }
    report("tune_trials_per_s", double(trials) / std::max(seconds, 1e-9), "trials/s");
  }
  if (settings.runs("auto"))
    timedPart("auto networks", [&] {
      // The networks auto-scheduled with the template run's budget (or BENCH_TUNE_AUTO_TRIALS).
      for (const auto& model : splitList(envString("BENCH_TUNE_AUTO_MODELS", "resnet-18,mobilenet"))) {
        if (model == "none") continue;
        const NetworkResult* templates = nullptr;
        for (const auto& n : networks)
          if (n.model == model) templates = &n;
        int64_t budget = envInt("BENCH_TUNE_AUTO_TRIALS", templates ? templates->trials : 0);
        TESSEL_CHECK(budget >= 1, "BENCH_TUNE_AUTO_TRIALS: no template run of {} to take the budget from; set it", model);
        autoTuneNetwork(model, budget, settings, templates);
      }
    });
  if (settings.runs("convs"))
    timedPart("convs", [&] {
      for (const auto& model : settings.convModels) compareConvs(settings, model);
    });
  if (settings.runs("busy")) timedPart("busy", [&] { busyTuning(settings); });
  if (settings.runs("search")) timedPart("search", [&] { searchEfficiency(settings, cache); });
  if (settings.runs("auto"))
    timedPart("auto conv", [&] {
      AutoConvSettings a;
      a.conv = envString("BENCH_TUNE_AUTO_CONV", a.conv);
      a.checkpoints = envInts("BENCH_TUNE_AUTO_CHECKPOINTS", "50,100,200");
      a.population = size_t(envInt("BENCH_TUNE_AUTO_POPULATION", int64_t(a.population)));
      a.batch = size_t(envInt("BENCH_TUNE_AUTO_BATCH", int64_t(a.batch)));
      autoScheduledConv(a, builder, runner);
    });

  if (!networks.empty()) {
    fmt::print("\n== summary ({} trials per task with {}) ==\n", settings.trials, settings.tuner);
    fmt::print("{:<12} {:>6} {:>7} {:>9} {:>9} {:>11} {:>11} {:>8}\n", "model", "tasks", "trials", "tune s", "trials/s",
               "untuned ms", "tuned ms", "speedup");
    for (const auto& n : networks)
      fmt::print("{:<12} {:>6} {:>7} {:>9.1f} {:>9.2f} {:>11.2f} {:>11.2f} {:>7.2f}x\n{}\n", n.model, n.tasks, n.trials,
                 n.tuneSeconds, n.trialsPerSecond, n.untuned.mean, n.tuned.mean, n.untuned.mean / n.tuned.mean, n.perTrial);
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
