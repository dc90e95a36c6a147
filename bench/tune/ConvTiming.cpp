#include "ConvTiming.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "passes/Lower.h"
#include "target/HostCpu.h"
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
  return std::clamp<size_t>((2 * size_t(target::hostCpu().llcBytes) + bytesPerCall - 1) / std::max<size_t>(bytesPerCall, 1), 2, 64);
}

/// oneDNN's convolution bound to one set of buffers, or when `cold` to coldCopies sets (the
/// first one for warm calls).
struct OneDnnCalls {
  struct Buffers {
    runtime::Tensor data, weight, output, bias;
    std::unique_ptr<OneDnnConv2d> conv;
  };
  std::vector<Buffers> sets;
  std::vector<std::function<void()>> calls;

  OneDnnCalls(const Conv2dShape& s, bool cold, const ConvEpilogue& epilogue) {
    auto make = [&](uint32_t seed) {
      Buffers b;
      b.data = runtime::Tensor::empty({s.batch, s.height, s.width, s.inChannels}, DataType::float32());
      b.weight = runtime::Tensor::empty({s.kernel, s.kernel, s.inChannels, s.outChannels}, DataType::float32());
      b.output = runtime::Tensor::empty({s.batch, s.outHeight(), s.outWidth(), s.outChannels}, DataType::float32());
      b.bias = runtime::Tensor::empty({s.outChannels}, DataType::float32());
      fillRandom(b.data, seed);
      fillRandom(b.weight, seed + 1);
      fillRandom(b.output, seed + 2);  // the residual, under a sum post-op
      fillRandom(b.bias, seed + 3);
      b.conv = std::make_unique<OneDnnConv2d>(s, b.data.dataAs<float>(), b.weight.dataAs<float>(), b.output.dataAs<float>(),
                                              epilogue, b.bias.dataAs<float>());
      return b;
    };
    sets.push_back(make(1));
    size_t bytes = sets[0].data.nbytes() + sets[0].weight.nbytes() + sets[0].output.nbytes() + sets[0].bias.nbytes();
    for (size_t c = 1; cold && c < coldCopies(bytes); ++c) sets.push_back(make(uint32_t(2 * c + 1)));
    for (auto& b : sets) calls.push_back([&b] { b.conv->run(); });
  }
};

/// The kernel that `steps` schedule on `dag`, compiled, loaded and bound to one set of
/// arguments, or when `cold` to coldCopies sets (the first one for warm calls).
struct KernelCalls {
  runtime::Module module;
  std::vector<std::vector<runtime::Tensor>> sets;
  std::vector<std::function<void()>> calls;

  KernelCalls(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, bool cold) : module(load(dag, steps)) {
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
    sets.push_back(arguments(1));
    size_t bytes = 0;
    for (const auto& t : sets[0]) bytes += t.nbytes();
    for (size_t c = 1; cold && c < coldCopies(bytes); ++c) sets.push_back(arguments(uint32_t(10 * c)));
    for (const auto& args : sets) calls.push_back(kernel.bind(args));
  }

 private:
  static runtime::Module load(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps) {
    TempDir dir("tessel-bench-conv");
    codegen::compileSharedLibrary(codegen::generateCSource({passes::lower(schedule::replay(dag, steps), "conv")}),
                                  dir.path() + "/conv.so");
    return runtime::Module::load(dir.path() + "/conv.so");
  }
};

}  // namespace

std::vector<ConvFigures> interleavedGflops(const Conv2dShape& s, const std::vector<ScheduledKernel>& kernels, int rounds,
                                           bool cold, const ConvEpilogue& epilogue) {
  OneDnnCalls peer(s, cold, epilogue);
  std::vector<std::unique_ptr<KernelCalls>> compiled;
  for (const auto& k : kernels) compiled.push_back(std::make_unique<KernelCalls>(*k.dag, k.steps, cold));
  std::vector<const std::vector<std::function<void()>>*> sets{&peer.calls};
  for (const auto& c : compiled) sets.push_back(&c->calls);
  runtime::TimeEvaluatorOptions options;
  options.repeat = rounds;
  options.minRepeatMs = 100;
  options.warmup = 3;
  auto gflops = [&](bool rotate) {
    // Each contestant rotates through its own buffer sets when cold, warm calls the first set.
    std::vector<size_t> turns(sets.size(), 0);
    std::vector<std::function<void()>> calls;
    for (size_t i = 0; i < sets.size(); ++i)
      calls.push_back(rotate ? std::function<void()>([&, i] { (*sets[i])[turns[i]++ % sets[i]->size()](); })
                             : (*sets[i])[0]);
    auto timings = runtime::timeInterleaved(calls, options);
    std::vector<double> g;
    for (const auto& t : timings) g.push_back(s.flops() / t.median / 1e9);
    return g;
  };
  std::vector<double> warm = gflops(false), coldFigures = cold ? gflops(true) : std::vector<double>(sets.size(), 0.0);
  std::vector<ConvFigures> figures;
  for (size_t i = 0; i < sets.size(); ++i) figures.push_back({warm[i], coldFigures[i]});
  return figures;
}

}  // namespace tessel::bench
