#include "cli/ModuleCommand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "cli/OptionChecks.h"
#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "runtime/Npy.h"
#include "cli/RpcCommands.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

struct RunOptions {
  std::string directory, input;
  bool random = false;
  uint32_t seed = 0;
};

struct BenchmarkOptions {
  std::string directory;
  int repeat = 10, number = 1;
  double minRepeatMs = 100;
  bool profile = false;
  RunnerArgs runnerArgs;  ///< --runner rpc: time it on a remote device
};

runtime::Tensor randomInput(const runtime::GraphExecutor& executor, uint32_t seed) {
  auto t = runtime::Tensor::empty(executor.inputShape(0), executor.inputDtype(0));
  TESSEL_CHECK(t.dtype() == DataType::float32(), "--random fills float32 inputs only; input '{}' is {}",
               executor.inputName(0), t.dtype().str());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = uniform(rng);
  return t;
}

void run(const RunOptions& o) {
  auto executor = runtime::GraphExecutor::load(o.directory);
  TESSEL_CHECK(o.input.empty() || !o.random, "give either --input or --random, not both");
  runtime::Tensor input = o.input.empty() ? randomInput(executor, o.seed) : runtime::loadNpy(o.input);
  if (auto bad = runtime::countNonFinite(input); bad.any())
    fmt::print(stderr, "warning: input '{}' from {} has {}\n", executor.inputName(0), o.input, bad.describe());
  executor.setInput(0, input);
  executor.run();
  runtime::Tensor out = executor.getOutput(0);
  if (auto bad = runtime::countNonFinite(out); bad.any()) fmt::print(stderr, "warning: the output has {}\n", bad.describe());
  TESSEL_CHECK(out.dtype() == DataType::float32(), "the first output is {}, not float32 scores", out.dtype().str());
  const float* scores = out.dataAs<float>();
  std::vector<int64_t> order(size_t(out.numel()));
  std::iota(order.begin(), order.end(), 0);
  size_t top = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + long(top), order.end(),
                    [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  fmt::print("output shape {}; top-{}:\n", runtime::formatShape(out.shape()), top);
  for (size_t i = 0; i < top; ++i) fmt::print("  class {:>5}  score {:.6g}\n", order[i], scores[order[i]]);
}

void benchmark(const BenchmarkOptions& o) {
  if (o.runnerArgs.runner == "rpc") return benchmarkOnRemoteDevice(o.runnerArgs, o.directory, o.number, o.repeat, o.minRepeatMs);
  auto executor = runtime::GraphExecutor::load(o.directory);
  executor.setZeroInputs();
  if (auto load = runtime::useFreeCores(); runtime::kernelThreadCount() < load.cores)
    fmt::print("machine busy: {}; timing with {} thread{}\n", load.describe(), runtime::kernelThreadCount(),
               runtime::kernelThreadCount() == 1 ? "" : "s");
  runtime::TimeEvaluatorOptions timing;
  timing.repeat = o.repeat;
  timing.number = o.number;
  timing.minRepeatMs = o.minRepeatMs;
  auto r = executor.benchmark(timing);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", r.mean * 1e3, r.stddev * 1e3);
  if (o.profile) {
    auto calls = executor.profile(o.repeat);
    double total = 0;
    for (auto& c : calls) total += c.seconds;
    fmt::print("{:>4}  {:<40} {:>10} {:>7}\n", "call", "kernel", "ms", "share");
    for (size_t i = 0; i < calls.size(); ++i)
      fmt::print("{:>4}  {:<40} {:>10.3f} {:>6.1f}%\n", i, calls[i].kernel, calls[i].seconds * 1e3, 100 * calls[i].seconds / total);
  }
  fmt::print("median {:.2f} ms, min {:.2f} ms over {} measurements of {} runs; {} calls per run, {:.1f} MiB of planned buffers ({:.1f} MiB unplanned)\n",
             r.median * 1e3, r.min * 1e3, r.costs.size(), r.number, executor.numCalls(), executor.plannedBytes() / 1048576.0,
             executor.unplannedBytes() / 1048576.0);
}

}  // namespace

void addModuleCommands(CLI::App& app) {
  auto runOptions = std::make_shared<RunOptions>();
  CLI::App* runCommand = app.add_subcommand("run", "run a compiled module directory once and print the top-5 classes");
  runCommand->add_option("dir", runOptions->directory, "the module directory (tessel compile -o DIR)")->required();
  runCommand->add_option("--input", runOptions->input, "an input tensor as .npy");
  runCommand->add_flag("--random", runOptions->random, "a uniform random input in [0, 1) (the default)");
  runCommand->add_option("--seed", runOptions->seed, "seed of the random input")->check(integerIn(0, UINT32_MAX));
  runCommand->callback([runOptions] { run(*runOptions); });

  auto benchOptions = std::make_shared<BenchmarkOptions>();
  CLI::App* benchCommand = app.add_subcommand("benchmark", "time a compiled module directory");
  benchCommand->add_option("dir", benchOptions->directory, "the module directory")->required();
  benchCommand->add_option("--repeat", benchOptions->repeat, "measurements")->check(integerIn(1, 100000));
  benchCommand->add_option("--number", benchOptions->number, "runs per measurement (raised to reach --min-repeat-ms)")
      ->check(integerIn(1, 1000000));
  benchCommand->add_option("--min-repeat-ms", benchOptions->minRepeatMs, "minimum length of one measurement")->check(numberIn(0.0, 60000.0));
  benchCommand->add_flag("--profile", benchOptions->profile, "also time every call on its own");
  addRunnerOptions(benchCommand, benchOptions->runnerArgs);
  benchCommand->callback([benchOptions] { benchmark(*benchOptions); });
}

}  // namespace tessel::cli
