// resnet-18 on VTA, modelled: for each of seed 000's ten conv2d_packed tasks, the default
// tiling's and the best config's modelled time and GEMM-core utilization (the best found by
// trying every config of the space, as TVM's tune_conv2d.py does with n_trial = len(space)),
// then the whole network's modelled time with the default tilings and with the tuned ones, and
// the per-layer profile of the tuned network. Modelled cycles are deterministic: these figures
// do not depend on the machine's load. `--records FILE` also writes the fastest kRankedRecords
// configs of each task as a records log (what `tessel compile --target vta --records FILE`
// ranks again under each group's epilogue). Then resnet-18's classifier as a dense_packed task
// (batch 1 and 16, every config), and the network: default tilings, each task's best record as
// it is, and the task's best records ranked per group epilogue.
// `--network-only RECORDS` skips the tasks (minutes) and models the network alone, tuned with
// RECORDS (the shipped records/vta/ log, say).
// Prints `BENCH <name> <value> <unit>` lines beside the tables.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "tune/RecordLog.h"
#include "vta/DensePackedTemplate.h"
#include "vta/GraphPacking.h"
#include "vta/VtaMeasurement.h"
#include "vta/VtaProfile.h"
#include "vta/VtaTasks.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::vta;

namespace {

struct Measured {
  uint64_t cycles = 0;
  double utilization = 0;
};

Measured measure(const Conv2dPackedProblem& problem, const Conv2dTiling& tiling) {
  Simulator simulator(problem.config);
  conv2dPackedProgram(problem, tiling).runOn(simulator);
  return {simulator.lastRunCycles(), double(simulator.stats().gemmCounter) / double(simulator.lastRunCycles())};
}

Measured measureDense(const DensePackedProblem& problem, const DenseTiling& tiling) {
  Simulator simulator(problem.config);
  densePackedProgram(problem, tiling).runOn(simulator);
  return {simulator.lastRunCycles(), double(simulator.stats().gemmCounter) / double(simulator.lastRunCycles())};
}

/// resnet-18's classifier (512 → 1000, padded to 1008) as a dense_packed task at batch 1 and
/// 16: every config of its space, the default's and the best's modelled time.
void sweepDenseTasks(const HardwareConfig& config, const TimingParameters& timing) {
  fmt::print("\n{:<40} {:>6} {:>6} | {:>9} {:>6} | {:>9} {:>6} {:>7}  best config\n", "dense_packed task", "space", "valid",
             "default ms", "GEMM%", "tuned ms", "GEMM%", "GFLOPS");
  for (int64_t batch : {1, 16}) {
    DenseWorkload w{batch / config.batch(), 512 / config.blockIn(), (1000 + config.blockOut() - 1) / config.blockOut()};
    DensePackedProblem problem = densePackedTaskProblem(w, config);
    auto task = makeDensePackedTask(densePackedTaskName(w, config), problem);
    const auto& space = *task->space;
    Measured fallback = measureDense(problem, densePackedTiling(space.get(task->fallbackIndex), problem.group));
    Measured best{UINT64_MAX, 0};
    uint64_t bestIndex = task->fallbackIndex;
    int valid = 0;
    for (uint64_t i = 0; i < space.size(); ++i) {
      DenseTiling tiling = densePackedTiling(space.get(i), problem.group);
      if (denseTilingProblem(w, tiling, problem.group, config)) continue;
      ++valid;
      Measured m = measureDense(problem, tiling);
      if (m.cycles < best.cycles) {
        best = m;
        bestIndex = i;
      }
    }
    fmt::print("{:<40} {:>6} {:>6} | {:>9.4f} {:>6.1f} | {:>9.4f} {:>6.1f} {:>7.2f}  {}\n", densePackedShapeLine(w, config),
               space.size(), valid, timing.seconds(fallback.cycles) * 1e3, 100 * fallback.utilization,
               timing.seconds(best.cycles) * 1e3, 100 * best.utilization, task->flops / timing.seconds(best.cycles) / 1e9,
               space.get(bestIndex).str());
    fmt::print("BENCH vta_dense_b{}_default_ms {:.5f} ms\nBENCH vta_dense_b{}_tuned_ms {:.5f} ms\n", batch,
               timing.seconds(fallback.cycles) * 1e3, batch, timing.seconds(best.cycles) * 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string recordsPath, networkRecords;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--records") == 0) recordsPath = argv[i + 1];
    if (std::strcmp(argv[i], "--network-only") == 0) networkRecords = argv[i + 1];
  }
  const bool sweepTasks = networkRecords.empty();
  if (!sweepTasks) recordsPath.clear();
  graph::registerStandardOps();
  const HardwareConfig config;
  const TimingParameters timing;
  graph::Graph packed = prepareForVta(graph::buildModel("resnet-18", {}), config);
  std::vector<VtaConv2dTask> tasks = extractConv2dPackedTasks(packed, config);
  std::unique_ptr<tune::RecordLogWriter> log;
  if (!recordsPath.empty()) log = std::make_unique<tune::RecordLogWriter>(recordsPath);

  if (sweepTasks)
    fmt::print("{:<40} {:>6} {:>6} | {:>9} {:>6} | {:>9} {:>6} {:>7}  best config\n", "task", "space", "valid", "default ms",
               "GEMM%", "tuned ms", "GEMM%", "GFLOPS");
  for (size_t k = 0; sweepTasks && k < tasks.size(); ++k) {
    const VtaConv2dTask& t = tasks[k];
    const auto& space = *t.task->space;
    Measured fallback = measure(t.problem, conv2dPackedTiling(space.get(t.task->fallbackIndex), t.problem.group));
    Measured best{UINT64_MAX, 0};
    uint64_t bestIndex = t.task->fallbackIndex;
    // Every valid config with its cycles: the log keeps the fastest kRankedRecords, which a
    // network build ranks again under each group's own epilogue.
    struct Tried {
      uint64_t cycles, index;
      std::vector<schedule::StepPtr> steps;
    };
    std::vector<Tried> tried;
    int valid = 0;
    for (uint64_t i = 0; i < space.size(); ++i) {
      std::vector<schedule::StepPtr> steps;
      try {
        steps = t.task->instantiate(space.get(i));
      } catch (const Error&) {
        continue;  // does not fit the buffers
      }
      ++valid;
      Measured m = measure(t.problem, conv2dTilingOfSteps(t.problem, steps));
      if (m.cycles < best.cycles) {
        best = m;
        bestIndex = i;
      }
      tried.push_back({m.cycles, i, std::move(steps)});
    }
    std::string shape = conv2dPackedShapeLine(t.problem.workload, config);
    fmt::print("{:<40} {:>6} {:>6} | {:>9.3f} {:>6.1f} | {:>9.3f} {:>6.1f} {:>7.2f}  {}\n", shape, space.size(), valid,
               timing.seconds(fallback.cycles) * 1e3, 100 * fallback.utilization, timing.seconds(best.cycles) * 1e3,
               100 * best.utilization, t.task->flops / timing.seconds(best.cycles) / 1e9, space.get(bestIndex).str());
    fmt::print("BENCH vta_task{}_default_ms {:.4f} ms\nBENCH vta_task{}_tuned_ms {:.4f} ms\nBENCH vta_task{}_tuned_gemm_utilization "
               "{:.4f} ratio\n",
               k + 1, timing.seconds(fallback.cycles) * 1e3, k + 1, timing.seconds(best.cycles) * 1e3, k + 1, best.utilization);
    std::stable_sort(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) { return a.cycles < b.cycles; });
    for (size_t r = 0; log && r < std::min(tried.size(), kRankedRecords); ++r) {
      const Tried& one = tried[r];
      tune::MeasureInput input{t.task->measure, one.steps, space.get(one.index).toJson().dump()};
      tune::MeasureResult result;
      result.costs = {timing.seconds(one.cycles)};
      result.callsPerRepeat = 1;
      result.timestamp = tune::unixTimeSeconds();
      tune::RecordConfig rc{int64_t(one.index), space.get(one.index).toJson()["entity"]};
      log->append(tune::makeRecord(input, result, t.task->templateName, nlohmann::json{{"task", t.task->name}}, rc));
    }
  }
  if (log) log.reset();
  if (sweepTasks) sweepDenseTasks(config, timing);

  // The network, default and tuned (the best configs from the log just written, else none).
  auto image = runtime::Tensor::empty({1, 3, 224, 224}, DataType::float32());
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  std::vector<tune::TuningRecord> records;
  if (!recordsPath.empty() || !networkRecords.empty())
    records = tune::readRecords(sweepTasks ? recordsPath : networkRecords).records;
  tune::HistoryBest best(records, target::Target::parse("vta"));
  // Default tilings; each task's best record as it is; the task's best records ranked again
  // under each group's own epilogue (what a build does).
  struct Variant {
    const char* name;
    const char* label;
    size_t ranked;  // 0: the default tilings
  };
  for (const Variant& v : {Variant{"default", "default tilings", 0}, Variant{"task_best", "each task's best record", 1},
                           Variant{"tuned", "tuned tilings, ranked per group epilogue", kRankedRecords}}) {
    if (v.ranked > 0 && records.empty()) break;
    Simulator simulator(config);
    CommandStream stream(simulator);
    std::vector<VtaGroupRun> runs;
    runWithVta(packed, {{"data", image}}, stream, v.ranked ? tilingsFromRecords(best, tasks, config, nullptr, v.ranked) : TilingChoice{},
               &runs);
    uint64_t cycles = 0;
    for (const VtaGroupRun& r : runs) cycles += r.cycles;
    fmt::print("\nresnet-18, {}: {:.3f} ms modelled ({} cycles), GEMM-core utilization {:.1f}%\n", v.label,
               timing.seconds(cycles) * 1e3, cycles, 100.0 * double(simulator.stats().gemmCounter) / double(cycles));
    fmt::print("BENCH vta_resnet18_{}_ms {:.4f} ms\n", v.name, timing.seconds(cycles) * 1e3);
    if (v.ranked == 1) fmt::print("{}", formatVtaProfile(runs, timing));
    if (v.ranked == kRankedRecords)
      fmt::print("{}Execution statistics:\n{}", formatVtaProfile(runs, timing), simulator.stats().format());
  }
  return 0;
}
