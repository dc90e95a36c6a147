// The matrix products of a network on the GPU at hand, on the fp32 units and on tensor cores:
// for each task the default schedule's rule 7 takes (ops/GpuDenseTiles.h), the default fp32
// tile, the same tile built a second time (the A/A control), the default tensor-core tile with
// the fp32-accurate 3xTF32 instruction and with one TF32 product, both with interleaved lanes,
// TF32's own default tile, and a sweep of interleaved warp tiles (where the GPU copies asynchronously, the
// default tiles also double-buffered through registers as a control), and, with --configs N, the
// best of N random tensor-core configs of the task's template (batch_matmul.cuda or
// dense_large_batch.cuda), timed in alternation for --rounds rounds with device events. Prints
// each candidate's median time, its median ratio to the fp32 tile over the rounds and the A/A
// spread, and `BENCH gpu_gemm_<task>_<fp32|3xtf32|tf32|best> <GFLOP/s>` lines; then the
// products' time in the network (each task times its weight) per candidate.
//
//   bench_gpu_gemm --model FILE.onnx|ZOO [--configs 0] [--rounds 5] [--seed 1] [--input-shape NAME:D,D,...]
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "codegen/GpuBuild.h"
#include "graph/GpuTargetLimits.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/frontends/Onnx.h"
#include "graph/passes/PassManager.h"
#include "ops/GpuDenseTiles.h"
#include "ops/GpuSchedules.h"
#include "passes/Lower.h"
#include "runtime/CudaDevice.h"
#include "runtime/GpuModule.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "support/ThreadPool.h"
#include "tune/autotvm/GpuDenseLargeBatchTemplate.h"

using namespace tessel;

namespace {

struct Options {
  std::string model;
  int configs = 0, rounds = 5;
  uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], value = argv[i + 1];
    if (key == "--model") o.model = value;
    else if (key == "--configs") o.configs = std::stoi(value);
    else if (key == "--rounds") o.rounds = std::stoi(value);
    else if (key == "--seed") o.seed = std::stoull(value);
    else throw Error(fmt::format("bench_gpu_gemm: unknown option '{}' (--model, --configs, --rounds, --seed)", key));
  }
  TESSEL_CHECK(!o.model.empty(), "bench_gpu_gemm: --model FILE.onnx or a zoo name is required");
  TESSEL_CHECK(o.rounds >= 1 && o.configs >= 0, "bench_gpu_gemm: --rounds must be positive and --configs not negative");
  return o;
}

struct Candidate {
  std::string label;
  ops::GpuGemmTile tile;
  std::optional<runtime::GpuModule> module;
  std::string error;
  std::vector<double> seconds;  ///< one per round
  bool control = false;         ///< a reference point, not a choice (never the best)
  bool registerStaged = false;  ///< double-buffered through registers although the GPU copies asynchronously
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse(argc, argv);
  const target::Target target = target::Target::parse("cuda");
  runtime::Device device{runtime::DeviceKind::CUDA, 0};
  runtime::SecondsClock clock = runtime::cudaEventClock(0);
  passes::GpuLimits limits = graph::gpuLimitsForBuild(target);
  graph::OptimizeOptions optimize;
  optimize.desiredLayout = ops::Layout::NCHW;
  bool onnx = o.model.size() > 5 && o.model.substr(o.model.size() - 5) == ".onnx";
  graph::Graph network = graph::optimizeGraph(onnx ? graph::importOnnx(o.model) : graph::buildModel(o.model), optimize);
  auto tasks = graph::extractTasks(network);
  fmt::print("{} on cuda ({}, {} multiprocessors), {} rounds, {} random tensor-core configs per task\n", o.model, limits.profile,
             limits.multiProcessorCount, o.rounds, o.configs);
  std::mt19937_64 rng(o.seed);
  std::map<std::string, double> network_ms;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& task = tasks[t];
    auto shape = ops::gpuGemmTilesApply(task.dag);
    if (!shape) continue;
    std::vector<Candidate> candidates;
    ops::GpuGemmTile fp32 = ops::defaultGpuGemmTile(*shape, limits.multiProcessorCount, limits.maxThreadsPerBlock, limits.warpSize);
    candidates.push_back({"fp32", fp32, {}, {}, {}});
    candidates.push_back({"fp32 again", fp32, {}, {}, {}});
    // The tensor-core tile even where the rule keeps the fp32 one (its label says so).
    auto tc = ops::defaultGpuTensorCoreTile(*shape, ir::WarpMmaKind::Tf32x3, limits.multiProcessorCount, limits.maxThreadsPerBlock,
                                            limits.maxSharedMemoryPerBlock, /*onlyWhereFaster=*/false);
    bool ruleTakesTc = ops::defaultGpuTensorCoreTile(*shape, ir::WarpMmaKind::Tf32x3, limits.multiProcessorCount,
                                                     limits.maxThreadsPerBlock, limits.maxSharedMemoryPerBlock).has_value();
    if (tc) {
      candidates.push_back({ruleTakesTc ? "3xtf32" : "3xtf32 (rule: fp32)", *tc, {}, {}, {}});
      tc->tensorCores = ir::WarpMmaKind::Tf32;
      candidates.push_back({"tf32", *tc, {}, {}, {}});
    }
    // Controls: the default tiles without double buffering, and also with one element per copy
    // access (the copies before float4 loads and double buffering).
    std::vector<Candidate> controls;
    for (size_t i = 0; i < candidates.size(); i += 2) {
      Candidate single = candidates[i];
      single.label += ", 1 buffer";
      single.tile.doubleBuffer = false;
      single.control = true;
      controls.push_back(single);
      single.label += ", scalar";
      single.tile.copyLanes = 1;
      controls.push_back(single);
    }
    // Interleaved lanes (the fragments' own layout, ldmatrix where the steps are contiguous) for
    // the TF32 instruction: the default tile as it is, then warp grids and lanes' sub-tiles around
    // it, with chunks of 32 and 64 (shared memory beyond 48 KiB is dynamic); the tile's A/B is the
    // default TF32 tile, same run.
    if (candidates.size() > 3) {
      // The 3xTF32 default tile (contiguous sub-tiles) and its TF32 twin with interleaved lanes,
      // and TF32's own default (interleaved lanes sized by the launch).
      for (size_t i : {size_t(2), size_t(3)}) {
        Candidate same = candidates[i];
        same.tile.interleaveLanes = true;
        same.label += ", interleaved";
        candidates.push_back(same);
      }
      if (auto tf32 = ops::defaultGpuTensorCoreTile(*shape, ir::WarpMmaKind::Tf32, limits.multiProcessorCount, limits.maxThreadsPerBlock,
                                                    limits.maxSharedMemoryPerBlock, /*onlyWhereFaster=*/false))
        candidates.push_back({"tf32 default", *tf32, {}, {}, {}});
      for (int64_t rowWarps : {1, 2, 4})
        for (int64_t columnWarps : {1, 2, 4})
          for (int64_t rows : {2, 4, 8})
            for (int64_t columns : {4, 8})
              for (int64_t chunk : {32, 64}) {
                if (rowWarps * columnWarps < 2 || rowWarps * columnWarps > 8 || rows * columns > 64 || shape->reduction % chunk != 0) continue;
                int64_t blockRows = rowWarps * 8 * rows, blockColumns = columnWarps * 4 * columns;
                if (shape->columns % blockColumns != 0 || blockRows > 2 * shape->rows) continue;
                Candidate c = candidates[3];
                c.tile.x = {(shape->rows + blockRows - 1) / blockRows, rowWarps * 8, rows};
                c.tile.y = {shape->columns / blockColumns, columnWarps * 4, columns};
                c.tile.k = chunk;
                c.tile.interleaveLanes = true;
                c.label = fmt::format("tf32 il warp {}x{}, {}x{} warps, k {}", 8 * rows, 4 * columns, rowWarps, columnWarps, chunk);
                candidates.push_back(c);
              }
    }
    if (o.configs > 0) {
      auto space = tune::autotvm::gpuGemmTemplate(task.dag, limits, target::MatmulPrecision::Fp32, "bench_gpu_gemm");
      for (int tries = 0, found = 0; found < o.configs && tries < 1000 * o.configs; ++tries) {
        ops::GpuGemmTile tile = tune::autotvm::gpuGemmTileOf(space.space->get(rng() % space.space->size()));
        if (!tile.tensorCores) continue;
        try {
          ops::gpuGemmTiles(task.dag, tile);
        } catch (const Error&) {
          continue;
        }
        candidates.push_back({fmt::format("x [{}] y [{}] k {}", fmt::join(tile.x, ", "), fmt::join(tile.y, ", "), tile.k), tile, {}, {}, {}});
        ++found;
      }
    }
    candidates.insert(candidates.end(), controls.begin(), controls.end());
    ThreadPool(0).parallelFor(int(candidates.size()), [&](int i) {
      Candidate& c = candidates[size_t(i)];
      try {
        passes::GpuLimits lowering = limits;
        lowering.asyncCopies = limits.asyncCopies && !c.registerStaged;
        auto lowered = passes::lowerForGpu(ops::gpuGemmTiles(task.dag, c.tile).state, "k", lowering);
        auto binary = codegen::buildGpuKernels({lowered}, target);
        c.module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
      } catch (const std::exception& e) {
        c.error = e.what();
      }
    });
    // Each argument in its own type: GPT-2's masked attention product reads a bool mask.
    std::vector<runtime::Tensor> args;
    for (const auto& name : task.dag.inputNames()) args.push_back(runtime::Tensor::empty(task.dag.op(name)->shape, task.dag.op(name)->dtype, device));
    for (const auto& name : task.dag.outputNames()) args.push_back(runtime::Tensor::empty(task.dag.op(name)->shape, task.dag.op(name)->dtype, device));
    runtime::TimeEvaluatorOptions timing;
    timing.repeat = 3;
    timing.minRepeatMs = 10;
    for (int round = 0; round < o.rounds; ++round)
      for (auto& c : candidates) {
        if (!c.module) continue;
        try {
          auto result = runtime::timeFunction(c.module->kernel("k").bind(args), timing, clock);
          c.seconds.push_back(*std::min_element(result.costs.begin(), result.costs.end()));
        } catch (const Error& e) {
          c.error = e.what();
          c.module.reset();
        }
      }
    double flops = task.dag.flopCount();
    fmt::print("task {:2} {} x{}: {} x {} x {} ({} products), {:.1f} MFLOP\n", t, task.name, task.weight, shape->rows, shape->columns,
               shape->reduction, shape->stack, flops / 1e6);
    if (!candidates[0].module) {
      // Every ratio is to the fp32 tile: without it there is nothing to compare.
      fmt::print("  the fp32 tile was not built: {}\n", candidates[0].error.substr(0, 300));
      continue;
    }
    const Candidate* best = nullptr;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      if (!c.module) {
        fmt::print("  {:<40} not built: {}\n", c.label, c.error.substr(0, 200));
        continue;
      }
      std::vector<double> ratios;
      for (size_t r = 0; r < c.seconds.size(); ++r) ratios.push_back(c.seconds[r] / candidates[0].seconds[r]);
      double s = median(c.seconds);
      fmt::print("  {:<40} {:8.1f} us {:7.0f} GFLOP/s  {:.3f}x fp32 (rounds {:.3f}-{:.3f})\n", c.label, s * 1e6, flops / s / 1e9,
                 median(ratios), *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()));
      if (i == 0 || i == 2 || i == 3) fmt::print("BENCH gpu_gemm_{}_{} {:.1f} GFLOP/s\n", task.name, c.label, flops / s / 1e9);
      if (i >= 2 && !c.control && (!best || s < median(best->seconds))) best = &c;
    }
    if (best) fmt::print("BENCH gpu_gemm_{}_best {:.1f} GFLOP/s\n", task.name, flops / median(best->seconds) / 1e9);
    // The network's products per choice; a product with no tensor-core tile counts its fp32 time
    // in every column, the last one taking the faster of the two per product.
    double fp32Ms = task.weight * median(candidates[0].seconds) * 1e3;
    auto timeOf = [&](size_t i) { return candidates.size() > i && candidates[i].module ? task.weight * median(candidates[i].seconds) * 1e3 : fp32Ms; };
    network_ms["fp32 tile"] += fp32Ms;
    network_ms["3xtf32 where it has a tile"] += timeOf(2);
    network_ms["tf32 where it has a tile"] += timeOf(3);
    network_ms["the faster of fp32 and 3xtf32"] += std::min(fp32Ms, timeOf(2));
    for (const Candidate& c : candidates)
      if (c.control && c.module && c.label.rfind("fp32", 0) == 0) network_ms["fp32 tile, " + c.label.substr(6)] += task.weight * median(c.seconds) * 1e3;
    // The TF32 tile's variants, over the products that have one (comparable among themselves).
    for (const Candidate& c : candidates)
      if (c.module && c.label.rfind("tf32", 0) == 0 && c.label.rfind("tf32 il", 0) != 0)
        network_ms["products with a tf32 tile: " + c.label] += task.weight * median(c.seconds) * 1e3;
    // The fastest interleaved tile of each product (what tuning over them would find).
    double bestInterleaved = 0;
    for (const Candidate& c : candidates)
      if (c.module && c.tile.interleaveLanes && c.tile.tensorCores == ir::WarpMmaKind::Tf32 &&
          (bestInterleaved == 0 || median(c.seconds) < bestInterleaved))
        bestInterleaved = median(c.seconds);
    if (bestInterleaved > 0) network_ms["products with a tf32 tile: the fastest interleaved"] += task.weight * bestInterleaved * 1e3;
  }
  for (const auto& [label, ms] : network_ms) fmt::print("products of the network, {}: {:.3f} ms\n", label, ms);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_gpu_gemm: {}\n", e.what());
  return 1;
}
