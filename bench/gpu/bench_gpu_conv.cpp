// Per-task figures of the GPU conv templates on the device at hand: for each direct NCHW conv
// task (conv2d_nchw.cuda), depthwise conv task (depthwise_conv2d_nchw.cuda) and, with
// --winograd, Winograd conv task (conv2d_nchw_winograd.cuda) of a zoo network, the default GPU
// schedule, the template's fallback config and the best of N random configs of its space, each
// timed with device events (the same TimeEvaluator as tuning), in GFLOP/s. A random search is a
// floor of what tuning reaches. With --records, the best record of each task in a tuning log is
// timed instead of random configs (the tuned figure). Prints `BENCH
// gpu_conv_<task>_<key>_<default|best|tuned> <GFLOP/s>` lines (`gpu_dw_` for depthwise tasks,
// `gpu_wino_` for Winograd ones, whose GFLOP/s count the direct convolution's multiply-adds so
// that they compare with the direct task's and cuDNN's), the key as time_torch_gpu.py --convs
// names cuDNN's (c<in>_h_w_f<out>_k_s_p) after the task's name, and the network's conv time
// (each task times its weight).
//
//   bench_gpu_conv [--model resnet-18] [--target cuda|opencl] [--configs 64] [--seed 1] [--records LOG]
//                  [--winograd never|2|4|auto]   (auto: F(4x4) or F(2x2) as tuning measures them)
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "codegen/GpuBuild.h"
#include "graph/Build.h"
#include "graph/GpuTargetLimits.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/GpuSchedules.h"
#include "ops/OpTraits.h"
#include "passes/Lower.h"
#include "runtime/CudaDevice.h"
#include "runtime/GpuModule.h"
#include "runtime/OpenclDevice.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "support/ThreadPool.h"
#include "tune/HistoryBest.h"
#include "tune/autotvm/GpuConvTemplates.h"
#include "tune/autotvm/GpuDepthwiseTemplate.h"
#include "tune/autotvm/GpuWinogradTemplate.h"

using namespace tessel;

namespace {

struct Options {
  std::string model = "resnet-18";
  std::string target = "cuda";
  int configs = 64;
  uint64_t seed = 1;
  std::string records;
  std::string winograd = "never";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], value = argv[i + 1];
    if (key == "--model") o.model = value;
    else if (key == "--target") o.target = value;
    else if (key == "--configs") o.configs = std::stoi(value);
    else if (key == "--seed") o.seed = std::stoull(value);
    else if (key == "--records") o.records = value;
    else if (key == "--winograd") o.winograd = value;
    else throw Error(fmt::format("bench_gpu_conv: unknown option '{}' (--model, --target, --configs, --seed, --records, --winograd)", key));
  }
  return o;
}

struct Candidate {
  Candidate(std::string l, std::vector<schedule::StepPtr> s) : label(std::move(l)), steps(std::move(s)) {}
  std::string label;  ///< "default", "fallback" or the config
  std::vector<schedule::StepPtr> steps;
  std::optional<codegen::GpuBinary> binary;
  std::string error;
  double seconds = 0;
};

/// Builds every candidate on all cores (NVRTC and the lowering are per candidate).
void buildAll(const te::ComputeDAG& dag, std::vector<Candidate>& candidates, const target::Target& target,
              const passes::GpuLimits& limits) {
  ThreadPool(0).parallelFor(int(candidates.size()), [&](int i) {
    Candidate& c = candidates[size_t(i)];
    try {
      auto lowered = passes::lowerForGpu(schedule::replay(dag, c.steps), "k", limits);
      c.binary = codegen::buildGpuKernels({lowered}, target);
    } catch (const Error& e) {
      c.error = e.what();
    }
  });
}

double timeCandidate(const Candidate& c, const te::ComputeDAG& dag, runtime::Device device, const runtime::SecondsClock& clock) {
  auto module = runtime::GpuModule::fromMemory(c.binary->manifestText(), c.binary->code);
  std::vector<runtime::Tensor> args;
  for (const auto& name : dag.inputNames()) args.push_back(runtime::Tensor::empty(dag.op(name)->shape, DataType::float32(), device));
  for (const auto& name : dag.outputNames()) args.push_back(runtime::Tensor::empty(dag.op(name)->shape, DataType::float32(), device));
  runtime::TimeEvaluatorOptions options;
  options.repeat = 3;
  options.minRepeatMs = 20;
  auto result = runtime::timeFunction(module.kernel("k").bind(args), options, clock);
  return *std::min_element(result.costs.begin(), result.costs.end());
}

/// c<in>_h<height>_w<width>_f<out>_k<kernel>_s<stride>_p<pad> of a conv task whose output has
/// `channels` x `outHeight` and whose weights `kernel` x `kernel` taps over `inChannels`: the
/// input is the 4-d placeholder that is not the weights, the padding the padded stage's growth.
std::string shapeKey(const te::ComputeDAG& dag, int64_t inChannels, int64_t channels, int64_t outHeight, int64_t kernel) {
  int64_t height = 0, width = 0, padded = 0;
  for (const auto& op : dag.ops()) {
    if (op->shape.size() != 4) continue;
    bool weights = op->shape[0] == channels && op->shape[2] == kernel && op->shape[3] == kernel;
    if (op->isPlaceholder() && !weights && op->shape[1] == inChannels) height = op->shape[2], width = op->shape[3];
    if (ops::traitsOf(*op).kind == ops::OpKind::Padding) padded = op->shape[2];
  }
  int64_t pad = padded > 0 ? (padded - height) / 2 : 0;
  int64_t stride = outHeight > 1 ? (height + 2 * pad - kernel) / (outHeight - 1) : 1;
  return fmt::format("c{}_h{}_w{}_f{}_k{}_s{}_p{}", inChannels, height, width, channels, kernel, stride, pad);
}

/// The template a task is timed with: its space, the BENCH lines' prefix, the shape key and the
/// FLOPs its GFLOP/s count (a Winograd task's: the direct convolution's).
struct BenchTemplate {
  tune::autotvm::GpuTemplateSpace space;
  std::string prefix, key;
  double flops = 0;
};

std::optional<BenchTemplate> benchTemplateOf(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  if (tune::autotvm::gpuWinogradTemplateApplies(dag)) {
    ops::GpuWinogradShape s = ops::gpuWinogradShapeOf(dag);
    const auto& data = dag.op(dag.inputNames()[0])->shape;  // [N, C, H, W]
    const auto& out = dag.op(dag.outputNames()[0])->shape;  // [N, K, OH, OW]
    std::string key = fmt::format("c{}_h{}_w{}_f{}_k3_s1_p{}_f{}", s.inChannels, data[2], data[3], s.outChannels, (out[2] - data[2] + 2) / 2, s.m);
    double direct = 2.0 * double(out[0] * out[1] * out[2] * out[3]) * double(s.inChannels) * 9;
    return BenchTemplate{tune::autotvm::gpuWinogradTemplate(dag, limits), "gpu_wino", key, direct};
  }
  if (tune::autotvm::gpuConv2dTemplateApplies(dag)) {
    ops::GpuConv2dShape s = ops::gpuConv2dShapeOf(dag);
    return BenchTemplate{tune::autotvm::gpuConv2dTemplate(dag, limits), "gpu_conv",
                         shapeKey(dag, s.inChannels, s.channels, s.height, s.kernelHeight), dag.flopCount()};
  }
  if (tune::autotvm::gpuDepthwiseTemplateApplies(dag)) {
    ops::GpuDepthwiseShape s = ops::gpuDepthwiseShapeOf(dag);
    return BenchTemplate{tune::autotvm::gpuDepthwiseTemplate(dag, limits), "gpu_dw",
                         shapeKey(dag, s.channels, s.channels, s.height, s.kernelHeight), dag.flopCount()};
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse(argc, argv);
  const target::Target target = target::Target::parse(o.target);
  bool cuda = target.kind == target::TargetKind::Cuda;
  runtime::Device device{cuda ? runtime::DeviceKind::CUDA : runtime::DeviceKind::OpenCL, 0};
  runtime::SecondsClock clock = cuda ? runtime::cudaEventClock(0) : runtime::openclQueueClock(0);
  passes::GpuLimits limits = graph::gpuLimitsForBuild(target);
  graph::OptimizeOptions optimize;
  optimize.desiredLayout = ops::Layout::NCHW;
  optimize.fuseSeparable = false;  // as a GPU build: one function per convolution, depthwise ones included
  graph::Graph network = graph::optimizeGraph(graph::buildModel(o.model), optimize);
  if (o.winograd != "never") {
    TESSEL_CHECK(o.winograd == "2" || o.winograd == "4" || o.winograd == "auto", "--winograd: '{}' is not never, 2, 4 or auto", o.winograd);
    graph::WinogradChoice choice = graph::gpuWinogradChoice();
    if (o.winograd != "auto") choice = [m = std::stoi(o.winograd)](const graph::Graph&, int) { return m; };
    network = graph::applyWinograd(network, choice, {}, ops::Layout::NCHW);
  }
  auto tasks = graph::extractTasks(network);
  ops::GpuScheduleOptions rules = ops::gpuScheduleOptionsFor(limits, target.matmulPrecision);
  fmt::print("{} on {} ({}), {} random configs per conv and depthwise task, seed {}\n", o.model, o.target, limits.profile, o.configs, o.seed);
  double totalDefault = 0, totalBest = 0;
  std::mt19937_64 rng(o.seed);
  std::optional<tune::HistoryBest> history;
  if (!o.records.empty()) history = tune::HistoryBest::fromLog(o.records, target);
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& task = tasks[t];
    auto bench = benchTemplateOf(task.dag, limits);
    if (!bench) continue;
    const auto& space = bench->space;
    std::vector<Candidate> candidates;
    candidates.emplace_back("default", ops::defaultGpuSchedule(task.dag, rules));
    candidates.emplace_back("fallback", space.instantiate(space.space->get(space.fallback)));
    if (history) {
      // The tuned figure: the schedule the build takes from the log (its best record that
      // replays), nothing random.
      candidates.emplace_back("tuned", history->provider([&](const te::ComputeDAG& d) { return ops::defaultGpuSchedule(d, rules); })(task.dag));
    }
    for (int tries = 0; !history && int(candidates.size()) < o.configs + 2 && tries < 100 * o.configs; ++tries) {
      auto config = space.space->get(rng() % space.space->size());
      try {
        candidates.emplace_back(config.str(), space.instantiate(config));
      } catch (const Error&) {
      }
    }
    buildAll(task.dag, candidates, target, limits);
    int failed = 0;
    for (auto& c : candidates) {
      if (!c.binary) {
        ++failed;
        continue;
      }
      try {
        c.seconds = timeCandidate(c, task.dag, device, clock);
      } catch (const Error& e) {
        c.error = e.what();
        ++failed;
      }
    }
    const Candidate* best = nullptr;
    for (const auto& c : candidates)
      if (c.seconds > 0 && (!best || c.seconds < best->seconds)) best = &c;
    auto gflops = [&](double s) { return s > 0 ? bench->flops / s / 1e9 : 0.0; };
    const std::string& key = bench->key;
    fmt::print("task {:2} {} {} x{}: default {:.1f} us ({:.0f} GFLOP/s), fallback {:.1f} us ({:.0f}), best of {} {:.1f} us ({:.0f}), {} not built or run\n",
               t, task.name, key, task.weight, candidates[0].seconds * 1e6, gflops(candidates[0].seconds), candidates[1].seconds * 1e6,
               gflops(candidates[1].seconds), candidates.size(), best ? best->seconds * 1e6 : 0.0, best ? gflops(best->seconds) : 0.0,
               failed);
    if (best) fmt::print("         best: {}\n", best->label);
    for (const auto& c : candidates)
      if (!c.error.empty()) {
        fmt::print("         first failure: {}\n", c.error.substr(0, 300));
        break;
      }
    fmt::print("BENCH {5}_{0}_{1}_default {2:.1f} GFLOP/s\nBENCH {5}_{0}_{1}_{3} {4:.1f} GFLOP/s\n", task.name, key,
               gflops(candidates[0].seconds), history ? "tuned" : "best", history ? gflops(candidates[2].seconds) : best ? gflops(best->seconds) : 0.0,
               bench->prefix);
    totalDefault += task.weight * candidates[0].seconds;
    totalBest += task.weight * std::min(candidates[0].seconds, best ? best->seconds : candidates[0].seconds);
  }
  fmt::print("conv time of the network: default {:.3f} ms, best per task {:.3f} ms ({:.2f}x)\n", totalDefault * 1e3,
             totalBest * 1e3, totalDefault / std::max(totalBest, 1e-12));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_gpu_conv: {}\n", e.what());
  return 1;
}
