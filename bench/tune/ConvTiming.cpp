#include "ConvTiming.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "passes/Lower.h"
#include "runtime/MachineLoad.h"
#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "runtime/TimeEvaluator.h"
#include "support/TempDir.h"

namespace tessel::bench {

namespace {

void fillRandom(runtime::Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.dataAs<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
}

/// Copies of a call's buffers that together are twice the last-level cache: rotating through
/// them, every call meets its data cold, as a layer whose weights come from DRAM does.
size_t coldCopies(size_t bytesPerCall) {
  return std::clamp<size_t>((2 * runtime::lastLevelCacheBytes() + bytesPerCall - 1) / std::max<size_t>(bytesPerCall, 1), 2, 64);
}

/// Median seconds of a call, warm (the same buffers every time) or cold (rotating through
/// `calls`, one per set of buffers).
double medianSeconds(const std::vector<std::function<void()>>& calls) {
  runtime::TimeEvaluatorOptions options;
  options.repeat = 7;
  options.minRepeatMs = 100;
  options.warmup = int(calls.size());
  size_t turn = 0;
  return runtime::timeFunction([&] { calls[turn++ % calls.size()](); }, options).median;
}

}  // namespace

ConvFigures oneDnnGflops(const Conv2dShape& s) {
  struct Buffers {
    runtime::Tensor data, weight, output;
    std::unique_ptr<OneDnnConv2d> conv;
  };
  auto make = [&](uint32_t seed) {
    Buffers b;
    b.data = runtime::Tensor::empty({s.batch, s.height, s.width, s.inChannels}, DataType::float32());
    b.weight = runtime::Tensor::empty({s.kernel, s.kernel, s.inChannels, s.outChannels}, DataType::float32());
    b.output = runtime::Tensor::empty({s.batch, s.outHeight(), s.outWidth(), s.outChannels}, DataType::float32());
    fillRandom(b.data, seed);
    fillRandom(b.weight, seed + 1);
    b.conv = std::make_unique<OneDnnConv2d>(s, b.data.dataAs<float>(), b.weight.dataAs<float>(), b.output.dataAs<float>());
    return b;
  };
  std::vector<Buffers> sets;
  sets.push_back(make(1));
  size_t bytes = sets[0].data.nbytes() + sets[0].weight.nbytes() + sets[0].output.nbytes();
  for (size_t c = 1; c < coldCopies(bytes); ++c) sets.push_back(make(uint32_t(2 * c + 1)));
  std::vector<std::function<void()>> calls;
  for (auto& b : sets) calls.push_back([&b] { b.conv->run(); });
  return {s.flops() / medianSeconds({calls[0]}) / 1e9, s.flops() / medianSeconds(calls) / 1e9};
}

ConvFigures kernelGflops(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, double flops) {
  TempDir dir("tessel-bench-conv");
  codegen::compileSharedLibrary(codegen::generateCSource({passes::lower(schedule::replay(dag, steps), "conv")}),
                                dir.path() + "/conv.so");
  auto module = runtime::Module::load(dir.path() + "/conv.so");
  auto kernel = module.kernel("conv");
  auto arguments = [&](uint32_t seed) {
    std::vector<runtime::Tensor> args;
    for (const auto* names : {&dag.inputNames(), &dag.outputNames()})
      for (const auto& name : *names) {
        args.push_back(runtime::Tensor::empty(dag.op(name)->shape, dag.op(name)->dtype));
        fillRandom(args.back(), seed++);
      }
    return args;
  };
  std::vector<std::vector<runtime::Tensor>> sets{arguments(1)};
  size_t bytes = 0;
  for (const auto& t : sets[0]) bytes += t.nbytes();
  for (size_t c = 1; c < coldCopies(bytes); ++c) sets.push_back(arguments(uint32_t(10 * c)));
  std::vector<std::function<void()>> calls;
  for (const auto& args : sets) calls.push_back(kernel.bind(args));
  return {flops / medianSeconds({calls[0]}) / 1e9, flops / medianSeconds(calls) / 1e9};
}

}  // namespace tessel::bench
