// The schedule fuzzer's driver (see FuzzRun.h).
#include "fuzz/FuzzRun.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "support/TempDir.h"
#include "support/ThreadPool.h"

namespace tessel::fuzz {

using namespace schedule;
using nlohmann::json;

std::vector<FuzzOp> fuzzOps() {
  // Small shapes so the reference is quick, with extents like 7, 11 and 13 that no common
  // split factor divides; conv and pooling with padding and stride 2.
  return {
      {"matmul 7x13x11", ops::matmul(7, 13, 11)},
      {"matmul 16x20x9 int32", ops::matmul(16, 20, 9, DataType::int32())},
      {"conv2d_nchw n1 c3 9x7 k4 3x3 stride 2 pad 1", ops::conv2dNCHW(1, 3, 9, 7, 4, 3, 3, 2, 1)},
      {"conv2d_nhwc n1 c3 9x11 k5 3x3 stride 2 pad 1", ops::conv2dNHWC(1, 3, 9, 11, 5, 3, 3, 2, 1)},
      {"depthwise_conv2d n1 c4 13x7 3x3 stride 2 pad 1", ops::depthwiseConv2dNCHW(1, 4, 13, 7, 3, 2, 1)},
      {"max_pool2d n1 c3 13x7 3x3 stride 2 pad 1", ops::maxPool2dNCHW(1, 3, 13, 7, 3, 2, 1)},
      {"softmax 7x13", ops::softmax(7, 13)},
      {"conv2d_bias_relu n1 c3 11x13 k6 3x3 stride 2 pad 1", ops::conv2dBiasReluNCHW(1, 3, 11, 13, 6, 3, 3, 2, 1)},
      {"conv2d_nchw n1 c4 7x13 k5 3x3 stride 1 pad 1", ops::conv2dNCHW(1, 4, 7, 13, 5, 3, 3, 1, 1)},
      {"matmul 9x13x5 int8", ops::matmul(9, 13, 5, DataType::int8())},
  };
}

uint64_t caseSeed(uint64_t seed, int index) {
  // SplitMix64 of (seed, index): neighbouring cases get unrelated generator streams.
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * uint64_t(index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

struct FuzzCase {
  int index = 0;
  size_t op = 0;
  std::vector<StepPtr> steps;
  passes::LoweredFunction function;
  runtime::Module module;
  bool compiled = false;
  std::string library;  ///< the generated source it was compiled from
  std::string failure;
};

std::string indented(const std::string& lines) {
  std::string out;
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    out += "    " + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string describe(const FuzzCase& c, const std::string& problem, const FuzzConfig& config, const std::vector<FuzzOp>& ops) {
  std::string text = fmt::format("schedule fuzz: case {} of seed {} failed\n  op: {}\n  problem: {}\n  steps:\n{}  steps as JSON: {}\n",
                                 c.index, config.seed, ops[c.op].name, problem, indented(printSteps(c.steps)),
                                 stepsToJson(c.steps).dump());
  if (!c.library.empty()) text += fmt::format("  generated source: {}.cpp\n", c.library);
  text += fmt::format("  replay: TESSEL_FUZZ_SEED={} TESSEL_FUZZ_ONLY={} TESSEL_DUMP_SOURCE=1 ./tests/fuzz/test_schedule_fuzz\n",
                      config.seed, c.index);
  return text;
}

// ---- a crash inside a generated kernel still names the case ----------------------------------

const char* gRunningText = nullptr;  // set before each kernel call, read by the signal handler
size_t gRunningSize = 0;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction gPrevious[NSIG];

void onFatalSignal(int signal) {
  static const char header[] = "\n[ fuzz     ] fatal signal while running a generated kernel:\n";
  ssize_t written = write(STDERR_FILENO, header, sizeof header - 1);
  if (gRunningText) written = write(STDERR_FILENO, gRunningText, gRunningSize);
  (void)written;  // nothing to do about a failed write in a dying process
  // Back to the previous handler (a sanitizer's, or the default): the faulting instruction
  // runs again on return and reaches it.
  sigaction(signal, &gPrevious[signal], nullptr);
}

class CrashReporter {
 public:
  CrashReporter() {
    struct sigaction action {};
    action.sa_handler = onFatalSignal;
    sigemptyset(&action.sa_mask);
    for (int s : kFatalSignals) sigaction(s, &action, &gPrevious[s]);
  }
  ~CrashReporter() {
    for (int s : kFatalSignals) sigaction(s, &gPrevious[s], nullptr);
    gRunningText = nullptr;
  }
  CrashReporter(const CrashReporter&) = delete;
  CrashReporter& operator=(const CrashReporter&) = delete;
};

// ---- the phases -----------------------------------------------------------------------------

/// Replays the generated list from its JSON text and lowers it; throws an Error on any
/// disagreement with what the generator reached.
passes::LoweredFunction prepare(const te::ComputeDAG& dag, const GeneratedSteps& g, const std::string& name, bool dump) {
  json j = stepsToJson(g.steps);
  auto parsed = stepsFromJson(json::parse(j.dump()));
  TESSEL_CHECK(stepsToJson(parsed) == j, "the JSON round trip changed the steps into {}", stepsToJson(parsed).dump());
  TESSEL_CHECK(printSteps(parsed) == printSteps(g.steps), "the JSON round trip changed the steps into\n{}", printSteps(parsed));
  State state = replay(dag, parsed);
  TESSEL_CHECK(state.toString() == g.state.toString(), "replaying the JSON gives the state\n{}but the generator reached\n{}",
               state.toString(), g.state.toString());
  auto f = passes::lower(state, name);
  std::string source = codegen::generateCSource({f});
  TESSEL_CHECK(source == codegen::generateCSource({passes::lower(g.state, name)}),
               "replaying the JSON gives other code than the generator's state");
  if (dump) std::fprintf(stderr, "%s\n%s\n%s\n", printSteps(g.steps).c_str(), state.toString().c_str(), source.c_str());
  return f;
}

/// Compiles the batch into one library; if that fails, each case alone to find the culprit.
void compileBatch(const std::vector<FuzzCase*>& batch, const std::string& dir, int index, const codegen::CompileOptions& options,
                  std::vector<std::string>& batchErrors, std::mutex& mutex) {
  std::vector<passes::LoweredFunction> functions;
  for (auto* c : batch) functions.push_back(c->function);
  std::string library = fmt::format("{}/batch{}.so", dir, index);
  std::string batchError;
  try {
    codegen::compileSharedLibrary(codegen::generateCSource(functions), library, options);
    auto module = runtime::Module::load(library);
    for (auto* c : batch) {
      c->module = module;
      c->library = library;
      c->compiled = true;
    }
    return;
  } catch (const std::exception& e) {
    batchError = e.what();
  }
  bool culpritFound = false;
  for (auto* c : batch) {
    c->library = fmt::format("{}/case{}.so", dir, c->index);
    try {
      codegen::compileSharedLibrary(codegen::generateCSource({c->function}), c->library, options);
      c->module = runtime::Module::load(c->library);
      c->compiled = true;
    } catch (const std::exception& e) {
      c->failure = fmt::format("compiling the kernel: {}", e.what());
      culpritFound = true;
    }
  }
  // Every function compiles alone but not together: the translation unit of several is wrong.
  if (!culpritFound) {
    std::lock_guard lock(mutex);
    batchErrors.push_back(fmt::format("schedule fuzz: batch library {} failed to compile although each of its kernels "
                                      "compiles alone:\n{}",
                                      library, batchError));
  }
}

}  // namespace

FuzzReport runFuzz(const FuzzConfig& config) {
  FuzzReport report;
  auto ops = fuzzOps();
  auto start = std::chrono::steady_clock::now();
  std::vector<kernelcheck::ReferenceData> references;
  for (auto& op : ops) references.push_back(kernelcheck::makeReferenceData(op.dag, config.seed));

  // Generate, check the JSON replay, lower.
  std::vector<FuzzCase> cases;
  for (int i = config.first; i < config.first + config.cases; ++i) {
    if (config.only >= 0 && i != config.only) continue;
    FuzzCase c;
    c.index = i;
    c.op = size_t(i) % ops.size();
    auto generated = generateSteps(ops[c.op].dag, caseSeed(config.seed, i), report.stats);
    c.steps = generated.steps;
    if (!generated.bug.empty()) {
      c.failure = "applying the last step: " + generated.bug;
    } else {
      try {
        c.function = prepare(ops[c.op].dag, generated, fmt::format("fuzz_case_{}", i), config.dumpSource);
      } catch (const std::exception& e) {
        c.failure = fmt::format("replaying or lowering: {}", e.what());
      }
    }
    cases.push_back(std::move(c));
  }
  report.prepareSeconds = secondsSince(start);

  // Compile: many kernels per library, libraries in parallel.
  start = std::chrono::steady_clock::now();
  std::vector<std::vector<FuzzCase*>> batches;
  for (auto& c : cases) {
    if (!c.failure.empty()) continue;
    if (batches.empty() || int(batches.back().size()) >= config.batchSize) batches.emplace_back();
    batches.back().push_back(&c);
  }
  TempDir dir("tessel-fuzz");
  std::mutex mutex;
  std::vector<std::string> batchErrors;
  {
    ThreadPool pool(config.workers);
    const codegen::CompileOptions options = kernelcheck::boundsCheckedOptions(codegen::compileOptionsForTarget(config.target));
    pool.parallelFor(int(batches.size()), [&](int b) { compileBatch(batches[size_t(b)], dir.path(), b, options, batchErrors, mutex); });
  }
  report.libraries = int(batches.size());
  report.compileSeconds = secondsSince(start);

  // Run each kernel on the reference inputs and compare.
  start = std::chrono::steady_clock::now();
  {
    CrashReporter crashReporter;
    for (auto& c : cases) {
      if (!c.failure.empty() || !c.compiled) continue;
      std::string text = describe(c, "a fatal signal while running the kernel (SIGILL: a bounds check on a local array)",
                                  config, ops);
      gRunningText = text.c_str();
      gRunningSize = text.size();
      const auto& reference = references[c.op];
      try {
        double error = kernelcheck::runAndCompare(c.module.kernel(c.function.name), reference);
        if (kernelcheck::withinTolerance(error, reference)) ++report.checked;
        else
          c.failure = fmt::format("the result differs from the reference: max relative error {:.3g} (allowed: {})", error,
                                  reference.integerOutputs ? "0, integer outputs" : "1e-5");
      } catch (const std::exception& e) {
        c.failure = fmt::format("running the kernel: {}", e.what());
      }
      gRunningText = nullptr;
    }
  }
  report.runSeconds = secondsSince(start);

  for (auto& c : cases)
    if (!c.failure.empty()) report.failures.push_back(describe(c, c.failure, config, ops));
  report.failures.insert(report.failures.end(), batchErrors.begin(), batchErrors.end());
  if (!report.failures.empty()) dir.keep();  // the generated sources the messages name
  return report;
}

}  // namespace tessel::fuzz
