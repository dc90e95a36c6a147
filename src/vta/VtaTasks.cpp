#include "vta/VtaTasks.h"

#include <fmt/format.h>

#include <map>

#include "support/Error.h"
#include "vta/Simulator.h"
#include "vta/VtaMeasurement.h"

namespace tessel::vta {

namespace {

/// The task of `shape` (the seeds' shape line: what makes two layers one task), made by `make`
/// where the shape first occurs: one task per distinct shape, in order of first occurrence.
template <class Task, class Make>
Task& taskOfShape(std::vector<Task>& tasks, std::map<std::string, size_t>& byShape, const std::string& shape, Make&& make) {
  auto [it, fresh] = byShape.emplace(shape, tasks.size());
  if (fresh) tasks.push_back(make());
  return tasks[it->second];
}

}  // namespace

std::vector<VtaConv2dTask> extractConv2dPackedTasks(const graph::Graph& packed, const HardwareConfig& config) {
  std::vector<VtaConv2dTask> tasks;
  std::map<std::string, size_t> byShape;
  for (const graph::FusedGroup& group : graph::fuseOperators(packed)) {
    int convolution = packedConvolutionOf(packed, group);
    if (convolution < 0) continue;
    Conv2dWorkload workload = Conv2dWorkload::of(packed, convolution);
    VtaConv2dTask& task = taskOfShape(tasks, byShape, conv2dPackedShapeLine(workload, config), [&] {
      VtaConv2dTask t;
      t.problem = conv2dPackedTaskProblem(workload, config);
      t.task = makeConv2dPackedTask(conv2dPackedTaskName(workload, config), t.problem);
      return t;
    });
    task.groups.push_back(packed.node(group.output).name);
  }
  return tasks;
}

std::string formatConv2dPackedTasks(const std::vector<VtaConv2dTask>& tasks) {
  std::string out = fmt::format("Extracted {} conv2d tasks:\n", tasks.size());
  for (const VtaConv2dTask& t : tasks) out += conv2dPackedShapeLine(t.problem.workload, t.problem.config) + "\n";
  return out;
}

std::vector<VtaDenseTask> extractDensePackedTasks(const graph::Graph& graph, const HardwareConfig& config) {
  std::vector<VtaDenseTask> tasks;
  std::map<std::string, size_t> byShape;
  auto blocks = [](int64_t n, int64_t block) { return (n + block - 1) / block; };
  for (const graph::Node& n : graph.nodes()) {
    if (n.kind != graph::NodeKind::Op || n.op != "dense") continue;
    const auto& d = graph.node(n.inputs[0]).type.shape;  // [N, C]
    const auto& w = graph.node(n.inputs[1]).type.shape;  // [M, C]
    DenseWorkload workload{blocks(d[0], config.batch()), blocks(d[1], config.blockIn()), blocks(w[0], config.blockOut())};
    VtaDenseTask& task = taskOfShape(tasks, byShape, densePackedShapeLine(workload, config), [&] {
      VtaDenseTask t;
      t.problem = densePackedTaskProblem(workload, config);
      t.task = makeDensePackedTask(densePackedTaskName(workload, config), t.problem);
      return t;
    });
    task.layers.push_back(n.name);
  }
  return tasks;
}

std::string formatDensePackedTasks(const std::vector<VtaDenseTask>& tasks) {
  std::string out = fmt::format("Extracted {} dense tasks:\n", tasks.size());
  for (const VtaDenseTask& t : tasks) out += densePackedShapeLine(t.problem.workload, t.problem.config) + "\n";
  return out;
}

namespace {

/// The cycles of a group's program with `tiling`, on zero-filled buffers (the cycle model does not
/// depend on values).
uint64_t modelledCycles(const Conv2dWorkload& workload, const Conv2dTiling& tiling, const PackedConvolution& group,
                        const HardwareConfig& config) {
  Conv2dPackedProblem problem;
  problem.workload = workload;
  problem.group = group;
  problem.config = config;
  SimulatorOptions timeOnly;
  timeOnly.computeValues = false;
  Simulator simulator(config, timeOnly);
  conv2dPackedProgram(problem, tiling).runOn(simulator);
  return simulator.lastRunCycles();
}

bool sameTiling(const Conv2dTiling& a, const Conv2dTiling& b) {
  return a.rows == b.rows && a.columns == b.columns && a.inputBlocks == b.inputBlocks && a.outputBlocks == b.outputBlocks &&
         a.loadBufferSets == b.loadBufferSets && a.accumulatorSets == b.accumulatorSets;
}

}  // namespace

TilingChoice tilingsFromRecords(const tune::HistoryBest& records, const std::vector<VtaConv2dTask>& tasks,
                                const HardwareConfig& config, std::vector<std::string>* notes, size_t rankedRecords) {
  return [&records, &tasks, config, notes, rankedRecords](const Conv2dWorkload& workload, const PackedConvolution& group) {
    Conv2dTiling fallback = defaultConv2dTiling(workload, group, config);
    auto note = [&](const std::string& text) {
      if (notes) notes->push_back(text);
    };
    std::string shape = conv2dPackedShapeLine(workload, config);
    const VtaConv2dTask* task = nullptr;
    for (const VtaConv2dTask& t : tasks)
      if (conv2dPackedShapeLine(t.problem.workload, config) == shape) task = &t;
    // (A reference into `records`: both branches lvalues, so nothing is copied.)
    static const std::vector<tune::TuningRecord> kNone;
    const std::vector<tune::TuningRecord>& ranked = task ? records.candidates(task->task->measure->workloadKey) : kNone;
    // The task's best records (distinct tilings that fit this group), in the task's order.
    struct Candidate {
      Conv2dTiling tiling;
      const tune::TuningRecord* record;
      size_t rank;
    };
    std::vector<Candidate> candidates;
    std::string why = "no record";
    for (size_t k = 0; k < ranked.size() && candidates.size() < std::max<size_t>(rankedRecords, 1); ++k) {
      Conv2dTiling tiling;
      try {
        tiling = conv2dTilingOfSteps(task->problem, ranked[k].steps);
      } catch (const Error& e) {
        why = fmt::format("the record's steps: {}", e.what());
        continue;
      }
      if (group.storedBytes != 1) tiling.accumulatorSets = 1;  // byte planes are shifted in place
      if (auto problem = tilingProblem(workload, tiling, group, config)) {
        why = fmt::format("the record's tiling does not fit this group: {}", *problem);
        continue;
      }
      bool seen = false;
      for (const Candidate& c : candidates) seen = seen || sameTiling(c.tiling, tiling);
      if (!seen) candidates.push_back({tiling, &ranked[k], k + 1});
    }
    if (candidates.empty()) {
      note(fmt::format("{}: default ({})", shape, why));
      return fallback;
    }
    if (candidates.size() == 1 && rankedRecords <= 1) {
      const tune::TuningRecord& r = *candidates[0].record;
      note(fmt::format("{}: record (config {}, {:.2f} GFLOPS)", shape, r.config ? r.config->index : -1, r.gflops()));
      return candidates[0].tiling;
    }
    // The task measured its own epilogue (shift, clip, cast); this group's may be heavier (bias
    // and shortcut loads, more ALU passes), which can change which tiling is fastest: the
    // records and the default are ranked again by this group's own modelled cycles.
    size_t best = 0;
    uint64_t bestCycles = UINT64_MAX;
    for (size_t k = 0; k < candidates.size(); ++k) {
      uint64_t cycles = modelledCycles(workload, candidates[k].tiling, group, config);
      if (cycles < bestCycles) {
        best = k;
        bestCycles = cycles;
      }
    }
    bool fallbackIsNew = true;
    for (const Candidate& c : candidates) fallbackIsNew = fallbackIsNew && !sameTiling(c.tiling, fallback);
    if (fallbackIsNew && modelledCycles(workload, fallback, group, config) < bestCycles) {
      note(fmt::format("{}: default (faster under this group's epilogue than the task's {} best records)", shape, candidates.size()));
      return fallback;
    }
    const tune::TuningRecord& r = *candidates[best].record;
    note(fmt::format("{}: record (config {}, {:.2f} GFLOPS; the task's #{}, fastest of {} under this group's epilogue)", shape,
                     r.config ? r.config->index : -1, r.gflops(), candidates[best].rank, candidates.size()));
    return candidates[best].tiling;
  };
}

}  // namespace tessel::vta
