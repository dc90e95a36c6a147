// resnet-18 on VTA, modelled: for each of seed 000's ten conv2d_packed tasks, the default
// tiling's and the best config's modelled time and GEMM-core utilization (the best found by
// trying every config of the space, as TVM's tune_conv2d.py does with n_trial = len(space)),
// then the whole network's modelled time with the default tilings and with the tuned ones, and
// the per-layer profile of the tuned network. Modelled cycles are deterministic: these figures
// do not depend on the machine's load. `--records FILE` also writes the best config of each
// task as a records log (what `tessel compile --target vta --records FILE` applies).
// `--network-only RECORDS` skips the tasks (minutes) and models the network alone, tuned with
// RECORDS (the shipped records/vta/ log, say).
// Prints `BENCH <name> <value> <unit>` lines beside the tables.
#include <fmt/format.h>

#include <cstring>
#include <random>

#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "tune/RecordLog.h"
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
    std::vector<schedule::StepPtr> bestSteps;
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
        bestSteps = steps;
      }
    }
    std::string shape = conv2dPackedShapeLine(t.problem.workload, config);
    fmt::print("{:<40} {:>6} {:>6} | {:>9.3f} {:>6.1f} | {:>9.3f} {:>6.1f} {:>7.2f}  {}\n", shape, space.size(), valid,
               timing.seconds(fallback.cycles) * 1e3, 100 * fallback.utilization, timing.seconds(best.cycles) * 1e3,
               100 * best.utilization, t.task->flops / timing.seconds(best.cycles) / 1e9, space.get(bestIndex).str());
    fmt::print("BENCH vta_task{}_default_ms {:.4f} ms\nBENCH vta_task{}_tuned_ms {:.4f} ms\nBENCH vta_task{}_tuned_gemm_utilization "
               "{:.4f} ratio\n",
               k + 1, timing.seconds(fallback.cycles) * 1e3, k + 1, timing.seconds(best.cycles) * 1e3, k + 1, best.utilization);
    if (log) {
      tune::MeasureInput input{t.task->measure, bestSteps, space.get(bestIndex).toJson().dump()};
      tune::MeasureResult result;
      result.costs = {timing.seconds(best.cycles)};
      result.callsPerRepeat = 1;
      result.timestamp = tune::unixTimeSeconds();
      tune::RecordConfig rc{int64_t(bestIndex), space.get(bestIndex).toJson()["entity"]};
      log->append(tune::makeRecord(input, result, t.task->templateName, nlohmann::json{{"task", t.task->name}}, rc));
    }
  }
  if (log) log.reset();

  // The network, default and tuned (the best configs from the log just written, else none).
  auto image = runtime::Tensor::empty({1, 3, 224, 224}, DataType::float32());
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  std::vector<tune::TuningRecord> records;
  if (!recordsPath.empty() || !networkRecords.empty())
    records = tune::readRecords(sweepTasks ? recordsPath : networkRecords).records;
  tune::HistoryBest best(records, "vta");
  for (bool tuned : {false, true}) {
    if (tuned && records.empty()) break;
    Simulator simulator(config);
    CommandStream stream(simulator);
    std::vector<VtaGroupRun> runs;
    runWithVta(packed, {{"data", image}}, stream, tuned ? tilingsFromRecords(best, tasks, config) : TilingChoice{}, &runs);
    uint64_t cycles = 0;
    for (const VtaGroupRun& r : runs) cycles += r.cycles;
    fmt::print("\nresnet-18, {} tilings: {:.3f} ms modelled ({} cycles), GEMM-core utilization {:.1f}%\n",
               tuned ? "tuned" : "default", timing.seconds(cycles) * 1e3, cycles,
               100.0 * double(simulator.stats().gemmCounter) / double(cycles));
    fmt::print("BENCH vta_resnet18_{}_ms {:.4f} ms\n", tuned ? "tuned" : "default", timing.seconds(cycles) * 1e3);
    if (tuned) fmt::print("{}Execution statistics:\n{}", formatVtaProfile(runs, timing), simulator.stats().format());
  }
  return 0;
}
