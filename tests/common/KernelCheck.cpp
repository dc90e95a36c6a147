#include "common/KernelCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <random>
#include <thread>

#include "codegen/CSource.h"
#include "common/LoopIrEvaluator.h"
#include "codegen/Toolchain.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "support/Error.h"
#include "support/TempDir.h"
#include "te/ReferenceEvaluator.h"

namespace tessel::kernelcheck {

double relativeError(const std::vector<double>& got, const std::vector<double>& reference) {
  double scale = 0;
  for (double r : reference) scale = std::max(scale, std::fabs(r));
  double floor = std::max(scale * 1e-3, 1e-30);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = std::fabs(got[i] - reference[i]) / std::max(std::fabs(reference[i]), floor);
    if (std::isnan(got[i]) != std::isnan(reference[i])) e = INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

codegen::CompileOptions boundsCheckedOptions(codegen::CompileOptions base) {
  base.flags.insert(base.flags.end(), {"-fsanitize=bounds", "-fsanitize-undefined-trap-on-error"});
  return base;
}

codegen::CompileOptions sweepOptions() {
  codegen::CompileOptions options;
  options.flags = {"-O0", "-march=native"};
  return boundsCheckedOptions(options);
}

namespace {

template <class T>
void fill(runtime::Tensor& t, const std::vector<double>& values) {
  T* p = static_cast<T*>(t.data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = T(values[i]);
}

template <class T>
std::vector<double> read(const runtime::Tensor& t) {
  const T* p = static_cast<const T*>(const_cast<runtime::Tensor&>(t).data());
  return std::vector<double>(p, p + t.numel());
}

std::vector<double> readAny(const runtime::Tensor& t) {
  DataType d = t.dtype();
  if (d == DataType::float32()) return read<float>(t);
  if (d == DataType::int32()) return read<int32_t>(t);
  if (d == DataType::int8()) return read<int8_t>(t);
  if (d == DataType::uint8()) return read<uint8_t>(t);
  if (d == DataType::int64()) return read<int64_t>(t);
  if (d == DataType::float64()) return read<double>(t);
  fail("test harness: unsupported output dtype {}", d.str());
}

}  // namespace

ReferenceData makeReferenceData(const te::ComputeDAG& dag, uint64_t seed) {
  ReferenceData data;
  data.dag = dag;
  std::mt19937_64 rng(seed);
  for (auto& name : dag.inputNames()) {
    const auto& op = *dag.op(name);
    int64_t count = 1;
    for (auto e : op.shape) count *= e;
    std::vector<double> values(static_cast<size_t>(count));
    for (auto& v : values) {
      if (op.dtype.isFloat()) v = double(float(std::uniform_real_distribution<double>(0.0, 1.0)(rng)));
      else v = double(std::uniform_int_distribution<int>(-8, 8)(rng));
      if (op.dtype.isUInt()) v = std::fabs(v);
    }
    data.inputs[name] = std::move(values);
  }
  auto all = te::evaluateReference(dag, data.inputs);
  for (auto& name : dag.outputNames()) {
    data.reference[name] = all.at(name);
    data.integerOutputs = data.integerOutputs && dag.op(name)->dtype.isIntegral();
  }
  return data;
}

namespace {

/// Tensors holding the reference inputs, then outputs holding garbage (all bits set: NaN for
/// floats), so that an element the kernel never writes shows.
std::vector<runtime::Tensor> argumentsFor(const ReferenceData& data) {
  const auto& dag = data.dag;
  std::vector<runtime::Tensor> args;
  for (auto& name : dag.inputNames()) {
    const auto& op = *dag.op(name);
    auto t = runtime::Tensor::empty(op.shape, op.dtype);
    const auto& values = data.inputs.at(name);
    if (op.dtype == DataType::float32()) fill<float>(t, values);
    else if (op.dtype == DataType::int8()) fill<int8_t>(t, values);
    else if (op.dtype == DataType::uint8()) fill<uint8_t>(t, values);
    else if (op.dtype == DataType::int32()) fill<int32_t>(t, values);
    else if (op.dtype == DataType::int64()) fill<int64_t>(t, values);
    else fail("test harness: unsupported input dtype {}", op.dtype.str());
    args.push_back(t);
  }
  for (auto& name : dag.outputNames()) {
    const auto& op = *dag.op(name);
    auto t = runtime::Tensor::empty(op.shape, op.dtype);
    std::memset(t.data(), 0xff, size_t(t.nbytes()));
    args.push_back(t);
  }
  return args;
}

double compareOutputs(const std::vector<runtime::Tensor>& args, const ReferenceData& data) {
  const auto& dag = data.dag;
  double worst = 0;
  for (size_t o = 0; o < dag.outputNames().size(); ++o) {
    auto got = readAny(args[dag.inputNames().size() + o]);
    worst = std::max(worst, relativeError(got, data.reference.at(dag.outputNames()[o])));
  }
  return worst;
}

}  // namespace

double runAndCompare(const runtime::Kernel& kernel, const ReferenceData& data) {
  auto args = argumentsFor(data);
  kernel.call(args);
  return compareOutputs(args, data);
}

double evaluateAndCompare(const LoopIrEvaluator& evaluator, const ReferenceData& data) {
  auto args = argumentsFor(data);
  evaluator.run(args);
  return compareOutputs(args, data);
}

double evaluateAndCompare(const passes::LoweredFunction& function, const ReferenceData& data) {
  return evaluateAndCompare(LoopIrEvaluator(function), data);
}

KernelCheckResult checkAgainstReference(const schedule::State& state, uint64_t seed, const codegen::CompileOptions& options) {
  auto f = passes::lower(state, "kernel");
  KernelCheckResult result;
  result.source = codegen::generateCSource({f});
  if (std::getenv("TESSEL_DUMP_SOURCE")) std::fprintf(stderr, "%s\n", result.source.c_str());
  TempDir dir("tessel-test");
  std::string lib = dir.path() + "/kernel.so";
  try {
    codegen::compileSharedLibrary(result.source, lib, options);
  } catch (...) {
    dir.keep();
    throw;
  }
  auto module = runtime::Module::load(lib);
  result.maxRelativeError = runAndCompare(module.kernel("kernel"), makeReferenceData(state.dag(), seed));
  return result;
}

void compileInBatches(const std::vector<passes::LoweredFunction>& functions, size_t perLibrary,
                      const std::function<void(size_t, const runtime::Kernel&)>& check) {
  TempDir dir("tessel-kernel-batches");
  // The compiler runs of the batches are independent: as many at a time as there are cores,
  // while the checks run on this thread, batch after batch in order. A few big kernels are
  // spread over the cores too (AnsorSketches' 15 sampled conv kernels took 52 s in one run
  // while the other core waited).
  const size_t parallel = std::max<size_t>(1, std::thread::hardware_concurrency());
  perLibrary = std::clamp<size_t>((functions.size() + parallel - 1) / parallel, 1, std::max<size_t>(1, perLibrary));
  const size_t batches = (functions.size() + perLibrary - 1) / perLibrary;
  auto library = [&](size_t b) { return fmt::format("{}/batch{}.so", dir.path(), b); };
  auto compile = [&](size_t b) {
    size_t begin = b * perLibrary, end = std::min(functions.size(), begin + perLibrary);
    std::vector<passes::LoweredFunction> batch(functions.begin() + long(begin), functions.begin() + long(end));
    // A batch of unrolled kernels took over the toolchain's 120 s on a 2-core machine busy with
    // other builds (the whole test then failed on a timeout, not a wrong kernel): the batch is
    // given ten minutes, inside ctest's own limit.
    codegen::CompileOptions options = sweepOptions();
    options.timeout = std::chrono::minutes(10);
    codegen::compileSharedLibrary(codegen::generateCSource(batch), library(b), options);
  };
  std::deque<std::future<void>> running;
  size_t next = 0;
  for (size_t b = 0; b < batches; ++b) {
    while (next < batches && running.size() < parallel) running.push_back(std::async(std::launch::async, compile, next++));
    running.front().get();  // rethrows the compiler's error
    running.pop_front();
    auto module = runtime::Module::load(library(b));
    size_t begin = b * perLibrary, end = std::min(functions.size(), begin + perLibrary);
    for (size_t i = begin; i < end; ++i) check(i, module.kernel(functions[i].name));
  }
}

uint64_t fuzzSeed() {
  const char* text = std::getenv("TESSEL_FUZZ_SEED");
  uint64_t seed = 0;
  if (text && *text) {
    seed = std::stoull(text);
  } else {
    std::random_device device;
    seed = (uint64_t(device()) << 32) ^ device();
  }
  std::printf("[ fuzz     ] seed %llu (replay: TESSEL_FUZZ_SEED=%llu)\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace tessel::kernelcheck
