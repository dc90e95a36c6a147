// How fast the xgb tuner proposes on the GPU conv template, without a GPU: per resnet-18 conv
// task (conv2d_nchw.cuda on the sm_90 profile, spaces of 0.1-12 M configs), batches of 64
// proposed and answered by a deterministic synthetic throughput of the config (so the model has
// something to learn), timing the tuner's own work: the fits, the annealing plans, the feature
// extraction they need. On the device this time adds to every batch's builds and runs.
//
//   bench_gpu_tuner [--tasks N] [--batches 6] [--batch-size 64] [--seed 1]
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <string>

#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "tune/autotvm/GpuConvTemplates.h"
#include "tune/autotvm/GpuTemplates.h"
#include "tune/autotvm/XGBTuner.h"

using namespace tessel;

namespace {

struct Options {
  int tasks = 3, batches = 6, batchSize = 64;
  uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], value = argv[i + 1];
    if (key == "--tasks") o.tasks = std::stoi(value);
    else if (key == "--batches") o.batches = std::stoi(value);
    else if (key == "--batch-size") o.batchSize = std::stoi(value);
    else if (key == "--seed") o.seed = std::stoull(value);
    else fail("bench_gpu_tuner: unknown option '{}' (--tasks, --batches, --batch-size, --seed)", key);
  }
  return o;
}

/// A throughput with structure a model can learn: best near 256 threads and 16 outputs per
/// thread, worse with deep reduction chunks; in GFLOP/s-like units.
double syntheticThroughput(const tune::autotvm::ConfigEntity& config) {
  ops::GpuConv2dTile tile = tune::autotvm::gpuConv2dTileOf(config);
  double threads = double(tile.f[1] * tile.y[1] * tile.x[1]);
  double perThread = double(tile.f[2] * tile.y[2] * tile.x[2]);
  double score = 1000.0 / (1.0 + std::pow(std::log2(threads / 256.0), 2)) / (1.0 + std::pow(std::log2(perThread / 16.0), 2) / 4);
  return score / (1.0 + double(tile.rc) / 64.0);
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse(argc, argv);
  passes::GpuLimits limits = passes::GpuLimits::cudaSm90();
  graph::OptimizeOptions optimize;
  optimize.desiredLayout = ops::Layout::NCHW;
  auto tasks = graph::extractTasks(graph::optimizeGraph(graph::buildModel("resnet-18"), optimize));
  fmt::print("xgb tuner on conv2d_nchw.cuda ({}), {} batches of {} per task, seed {}\n", limits.profile, o.batches, o.batchSize, o.seed);
  int done = 0;
  double allSeconds = 0;
  int64_t allTrials = 0;
  for (const auto& t : tasks) {
    if (done == o.tasks) break;
    if (!tune::autotvm::gpuConv2dTemplateApplies(t.dag)) continue;
    ++done;
    auto task = tune::autotvm::makeGpuTuningTask(t.name, t.dag, target::Target::parse("cuda"), limits, tune::autotvm::kGpuConv2dTemplate);
    tune::autotvm::XGBTuner tuner(task, {}, o.seed);
    double tunerSeconds = 0, best = 0;
    for (int b = 0; b < o.batches; ++b) {
      auto start = std::chrono::steady_clock::now();
      auto batch = tuner.nextBatch(size_t(o.batchSize));
      double proposeSeconds = secondsSince(start);
      std::vector<tune::autotvm::Trial> trials;
      for (uint64_t index : batch) {
        double value = 0;
        try {
          task->instantiate(task->space->get(index));
          value = syntheticThroughput(task->space->get(index));
        } catch (const Error&) {
        }
        trials.push_back({index, value * 1e9});
        best = std::max(best, value);
      }
      start = std::chrono::steady_clock::now();
      tuner.update(trials);
      double updateSeconds = secondsSince(start);
      tunerSeconds += proposeSeconds + updateSeconds;
      fmt::print("  {:<24} batch {}: propose {:6.2f} s, update {:5.2f} s, fits {}, best {:.0f}\n", t.name, b + 1, proposeSeconds,
                 updateSeconds, tuner.fits(), best);
    }
    int64_t trials = int64_t(o.batches) * o.batchSize;
    fmt::print("BENCH gpu_tuner_{}_seconds_per_batch {:.3f} s ({} configs in the space, {:.1f} tuner trials/s)\n", t.name,
               tunerSeconds / o.batches, task->space->size(), double(trials) / tunerSeconds);
    allSeconds += tunerSeconds;
    allTrials += trials;
  }
  fmt::print("BENCH gpu_tuner_trials_per_second {:.1f} (the tuner's own time only)\n", double(allTrials) / allSeconds);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_gpu_tuner: {}\n", e.what());
  return 1;
}
