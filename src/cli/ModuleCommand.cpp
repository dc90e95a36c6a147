#include "cli/ModuleCommand.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numeric>
#include <optional>
#include <random>

#include "cli/OptionChecks.h"
#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "runtime/Npy.h"
#include "cli/RpcCommands.h"
#include "cli/VtaFlow.h"
#include "support/Error.h"
#include "support/Files.h"

namespace tessel::cli {

namespace {

struct RunOptions {
  std::string directory;
  /// NAME=x.npy, or a bare path for the first input.
  std::vector<std::string> inputs;
  /// One .npy path per output, in order.
  std::vector<std::string> outputs;
  bool random = false, force = false;
  uint32_t seed = 0;
  bool profile = false;  ///< a VTA module: cycles and GEMM-core utilization per packed convolution
  std::string device = "cpu";  ///< where the module runs: cpu, cuda[:N], opencl[:N]
  bool noCudaGraph = false;
};

/// --device and --no-cuda-graph, shared by run and benchmark.
void addDeviceOptions(CLI::App* command, std::string& device, bool& noCudaGraph) {
  command->add_option("--device", device, "where the module runs: cpu, cuda[:N] or opencl[:N]; it must be the kind the "
                                          "module was compiled for (--target)");
  command->add_flag("--no-cuda-graph", noCudaGraph, "on cuda: launch the kernels one by one instead of replaying a CUDA graph");
}

runtime::GraphExecutor loadExecutor(const std::string& directory, const std::string& device, bool noCudaGraph) {
  runtime::GraphExecutorOptions options;
  options.device = runtime::Device::parse(device);
  TESSEL_CHECK(options.device.kind != runtime::DeviceKind::VTA, "--device vta: VTA modules run on the vta device by themselves");
  TESSEL_CHECK(!noCudaGraph || options.device.kind == runtime::DeviceKind::CUDA, "--no-cuda-graph applies to --device cuda");
  options.cudaGraph = !noCudaGraph;
  return runtime::GraphExecutor::load(directory, options);
}

struct BenchmarkOptions {
  std::string directory;
  int repeat = 10, number = 1;
  double minRepeatMs = 100;
  bool profile = false;
  std::vector<std::string> compare;  ///< --compare: modules timed in alternation with it
  RunnerArgs runnerArgs;  ///< --runner rpc: time it on a remote device
  std::string device = "cpu";
  bool noCudaGraph = false;
};

runtime::Tensor randomInput(const runtime::GraphExecutor& executor, int index, uint32_t seed) {
  auto t = runtime::Tensor::empty(executor.inputShape(index), executor.inputDtype(index));
  TESSEL_CHECK(t.dtype() == DataType::float32(), "--random fills float32 inputs only; input '{}' is {}",
               executor.inputName(index), t.dtype().str());
  std::mt19937 rng(seed + uint32_t(index));
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = uniform(rng);
  return t;
}

/// The index of the input an --input argument names: "NAME=path" or a bare path for the first.
std::pair<int, std::string> namedInput(const runtime::GraphExecutor& executor, const std::string& argument) {
  size_t equals = argument.find('=');
  if (equals != std::string::npos) {
    std::string name = argument.substr(0, equals);
    std::vector<std::string> names;
    for (int i = 0; i < executor.numInputs(); ++i) {
      if (executor.inputName(i) == name) return {i, argument.substr(equals + 1)};
      names.push_back(executor.inputName(i));
    }
    // A path may itself contain '='; only a name the module has splits the argument.
    if (std::filesystem::exists(argument)) return {0, argument};
    fail("--input {}: the module has no input '{}' (its inputs: {})", argument, name, fmt::join(names, ", "));
  }
  return {0, argument};
}

/// The top-5 classes of a score vector, as the seeds print them.
void printTopClasses(const runtime::Tensor& out) {
  const float* scores = out.dataAs<float>();
  std::vector<int64_t> order(size_t(out.numel()));
  std::iota(order.begin(), order.end(), 0);
  size_t top = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + long(top), order.end(),
                    [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  fmt::print("output shape {}; top-{}:\n", runtime::formatShape(out.shape()), top);
  for (size_t i = 0; i < top; ++i) fmt::print("  class {:>5}  score {:.6g}\n", order[i], scores[order[i]]);
}

/// `tessel run` of a VTA module (cli/VtaFlow.h): one input, the image.
void runVta(const RunOptions& o) {
  TESSEL_CHECK(o.inputs.size() <= 1, "a VTA module has one input, the image; {} --input given", o.inputs.size());
  TESSEL_CHECK(o.outputs.size() <= 1, "a VTA module has one output; {} --output paths given", o.outputs.size());
  for (const auto& path : o.outputs) checkOutputFile(path, o.force);
  std::optional<runtime::Tensor> image;
  if (!o.inputs.empty()) {
    std::string path = o.inputs[0];
    if (!std::filesystem::exists(path) && path.find('=') != std::string::npos) path = path.substr(path.find('=') + 1);
    image = runtime::loadNpy(path);
  }
  auto outputs = runVtaModule(o.directory, image ? &*image : nullptr, o.seed, o.profile);
  if (!o.outputs.empty()) runtime::saveNpy(outputs[0], o.outputs[0]);
  const runtime::Tensor& first = outputs[0];
  if (first.dtype() == DataType::float32() && first.ndim() <= 2 && (first.ndim() < 2 || first.shape()[0] == 1))
    printTopClasses(first);
}

void run(const RunOptions& o) {
  if (isVtaModule(o.directory)) return runVta(o);
  TESSEL_CHECK(!o.profile, "--profile applies to VTA modules (tessel benchmark --profile times a CPU module's calls)");
  auto executor = loadExecutor(o.directory, o.device, o.noCudaGraph);
  TESSEL_CHECK(int(o.outputs.size()) <= executor.numOutputs(), "{} --output paths given, the module has {} output{}",
               o.outputs.size(), executor.numOutputs(), executor.numOutputs() == 1 ? "" : "s");
  for (const auto& path : o.outputs) checkOutputFile(path, o.force);
  std::vector<bool> given(size_t(executor.numInputs()), false);
  for (const auto& argument : o.inputs) {
    auto [index, path] = namedInput(executor, argument);
    TESSEL_CHECK(!given[size_t(index)], "--input: input '{}' is given twice", executor.inputName(index));
    runtime::Tensor input = runtime::loadNpy(path);
    if (auto bad = runtime::countNonFinite(input); bad.any())
      fmt::print(stderr, "warning: input '{}' from {} has {}\n", executor.inputName(index), path, bad.describe());
    executor.setInput(index, input);
    given[size_t(index)] = true;
  }
  // Without any --input every input is random (the default); with some, the rest must be named
  // or asked for with --random, so that a forgotten input is not silently noise.
  for (int i = 0; i < executor.numInputs(); ++i) {
    if (given[size_t(i)]) continue;
    TESSEL_CHECK(o.random || o.inputs.empty(), "input '{}' is not given: pass --input {}=FILE.npy (or --random for the rest)",
                 executor.inputName(i), executor.inputName(i));
    executor.setInput(i, randomInput(executor, i, o.seed));
  }
  executor.run();
  for (int i = 0; i < executor.numOutputs(); ++i) {
    runtime::Tensor out = executor.getOutput(i);
    if (auto bad = runtime::countNonFinite(out); bad.any()) fmt::print(stderr, "warning: output {} has {}\n", i, bad.describe());
    if (size_t(i) < o.outputs.size()) {
      runtime::saveNpy(out, o.outputs[size_t(i)]);
      fmt::print("output {}: {} {} saved to {}\n", i, out.dtype().str(), runtime::formatShape(out.shape()), o.outputs[size_t(i)]);
    }
  }
  // Scores of a classifier: the first output, one row of classes.
  runtime::Tensor first = executor.getOutput(0);
  if (first.dtype() == DataType::float32() && first.ndim() <= 2 && (first.ndim() < 2 || first.shape()[0] == 1))
    printTopClasses(first);
  else if (o.outputs.empty())
    fmt::print("output shape {} ({}): pass --output FILE.npy to save it\n", runtime::formatShape(first.shape()), first.dtype().str());
}

/// `benchmark DIR --compare OTHER...`: the modules timed round by round (one measurement of
/// each per round), so that a change in the machine's speed, which on a shared host moves a
/// network's time by tens of percent between minutes, hits them alike; each one's median round,
/// its ratio to DIR's, and the median of its per-round ratios to DIR's (the paired figure).
void benchmarkInAlternation(const BenchmarkOptions& o, runtime::GraphExecutor& first, const runtime::TimeEvaluatorOptions& timing) {
  TESSEL_CHECK(!o.profile, "--profile times one module's calls; leave it out with --compare");
  TESSEL_CHECK(first.device().kind == runtime::DeviceKind::CPU, "--compare times CPU modules; {} runs on {}", o.directory,
               first.device().str());
  std::vector<std::string> directories{o.directory};
  directories.insert(directories.end(), o.compare.begin(), o.compare.end());
  std::vector<runtime::GraphExecutor> others;
  others.reserve(o.compare.size());  // the calls below hold on to them
  for (const auto& directory : o.compare) {
    others.push_back(loadExecutor(directory, o.device, o.noCudaGraph));
    TESSEL_CHECK(others.back().device().kind == runtime::DeviceKind::CPU, "--compare times CPU modules; {} runs on {}", directory,
                 others.back().device().str());
    others.back().setZeroInputs();
  }
  std::vector<std::function<void()>> calls{[&] { first.run(); }};
  for (auto& e : others) calls.push_back([&e] { e.run(); });
  auto results = runtime::timeInterleaved(calls, timing);
  fmt::print("{} modules timed in alternation, {} rounds ({} kernel thread{}):\n", directories.size(), timing.repeat,
             runtime::kernelThreadCount(), runtime::kernelThreadCount() == 1 ? "" : "s");
  size_t width = 6;
  for (const auto& d : directories) width = std::max(width, d.size());
  fmt::print("  {:<{}} {:>10} {:>10} {:>10} {:>9} {:>15}\n", "module", width, "median ms", "mean ms", "std dev", "/ first",
             "round / first");
  for (size_t i = 0; i < results.size(); ++i)
    fmt::print("  {:<{}} {:>10.3f} {:>10.3f} {:>10.3f} {:>9.3f} {:>15.3f}\n", directories[i], width, results[i].median * 1e3,
               results[i].mean * 1e3, results[i].stddev * 1e3, results[i].median / results[0].median,
               runtime::medianRoundRatio(results[i], results[0]));
}

void benchmark(const BenchmarkOptions& o) {
  TESSEL_CHECK(o.compare.empty() || o.runnerArgs.runner != "rpc", "--compare times modules on this machine; leave out --runner rpc");
  if (o.runnerArgs.runner == "rpc") {
    benchmarkOnRemoteDevice(o.runnerArgs, o.directory, o.number, o.repeat, o.minRepeatMs);
    return;
  }
  auto executor = loadExecutor(o.directory, o.device, o.noCudaGraph);
  executor.setZeroInputs();
  if (executor.device().kind != runtime::DeviceKind::CPU) {
    // The host only launches; its load still delays launches that are not in a CUDA graph.
    fmt::print("device {} ({}){}; machine load: {}\n", executor.device().str(), runtime::deviceAPI(executor.device()).name(),
               executor.device().kind == runtime::DeviceKind::CUDA ? (executor.usesCudaGraph() ? ", CUDA graph" : ", kernel by kernel") : "",
               runtime::sampleMachineLoad().describe());
  } else if (auto load = runtime::useFreeCores(); runtime::kernelThreadCount() < load.cores) {
    fmt::print("machine busy: {}; timing with {} thread{}\n", load.describe(), runtime::kernelThreadCount(),
               runtime::kernelThreadCount() == 1 ? "" : "s");
  }
  runtime::TimeEvaluatorOptions timing;
  timing.repeat = o.repeat;
  timing.number = o.number;
  timing.minRepeatMs = o.minRepeatMs;
  if (!o.compare.empty()) return benchmarkInAlternation(o, executor, timing);
  auto r = executor.benchmark(timing);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", r.mean * 1e3, r.stddev * 1e3);
  if (o.profile) {
    auto calls = executor.profile(o.repeat);
    double total = 0;
    for (auto& c : calls) total += c.seconds;
    if (executor.device().kind != runtime::DeviceKind::CPU)
      fmt::print("each call timed over {} launches in a row, one synchronization\n", runtime::GraphExecutor::kGpuProfileBurst);
    fmt::print("{:>4}  {:<40} {:>10} {:>7}\n", "call", "kernel", "ms", "share");
    for (size_t i = 0; i < calls.size(); ++i)
      fmt::print("{:>4}  {:<40} {:>10.3f} {:>6.1f}%\n", i, calls[i].kernel, calls[i].seconds * 1e3, 100 * calls[i].seconds / total);
  }
  fmt::print("median {:.3f} ms, min {:.3f} ms over {} measurements of {} runs; {} calls per run, {:.1f} MiB of planned buffers ({:.1f} MiB unplanned)\n",
             r.median * 1e3, r.min * 1e3, r.costs.size(), r.number, executor.numCalls(), executor.plannedBytes() / 1048576.0,
             executor.unplannedBytes() / 1048576.0);
}

}  // namespace

void addModuleCommands(CLI::App& app) {
  auto runOptions = std::make_shared<RunOptions>();
  CLI::App* runCommand = app.add_subcommand("run", "run a compiled module directory once: print the top-5 classes, save outputs as .npy");
  runCommand->add_option("dir", runOptions->directory, "the module directory (tessel compile -o DIR)")->required();
  runCommand->add_option("--input", runOptions->inputs,
                         "an input as .npy: NAME=FILE.npy (repeatable), or FILE.npy for the first input");
  runCommand->add_option("--output", runOptions->outputs, "save an output as .npy (repeatable: one path per output, in order)");
  runCommand->add_flag("--force", runOptions->force, "replace an --output file that exists");
  runCommand->add_flag("--random", runOptions->random, "uniform random inputs in [0, 1) for the inputs not given (the default without --input)");
  runCommand->add_option("--seed", runOptions->seed, "seed of the random input")->check(integerIn(0, UINT32_MAX));
  runCommand->add_flag("--profile", runOptions->profile,
                       "a VTA module: print cycles, GEMM-core utilization and where the rest went, per packed convolution");
  addDeviceOptions(runCommand, runOptions->device, runOptions->noCudaGraph);
  runCommand->callback([runOptions] { run(*runOptions); });

  auto benchOptions = std::make_shared<BenchmarkOptions>();
  CLI::App* benchCommand = app.add_subcommand("benchmark", "time a compiled module directory");
  benchCommand->add_option("dir", benchOptions->directory, "the module directory")->required();
  benchCommand->add_option("--repeat", benchOptions->repeat, "measurements")->check(integerIn(1, 100000));
  benchCommand->add_option("--number", benchOptions->number, "runs per measurement (raised to reach --min-repeat-ms)")
      ->check(integerIn(1, 1000000));
  benchCommand->add_option("--min-repeat-ms", benchOptions->minRepeatMs, "minimum length of one measurement")->check(numberIn(0.0, 60000.0));
  benchCommand->add_flag("--profile", benchOptions->profile,
                         fmt::format("also time every call on its own (on a GPU, each call launched {} times in a row per sample)",
                                     runtime::GraphExecutor::kGpuProfileBurst));
  benchCommand->add_option("--compare", benchOptions->compare,
                           "other module directories to time in alternation with this one, round by round (repeatable); "
                           "prints each one's median and its ratio to this one's");
  addRunnerOptions(benchCommand, benchOptions->runnerArgs);
  addDeviceOptions(benchCommand, benchOptions->device, benchOptions->noCudaGraph);
  benchCommand->callback([benchOptions] { benchmark(*benchOptions); });
}

}  // namespace tessel::cli
