#include "vta/VtaTasks.h"

#include <fmt/format.h>

#include <map>

#include "support/Error.h"

namespace tessel::vta {

std::vector<VtaConv2dTask> extractConv2dPackedTasks(const graph::Graph& packed, const HardwareConfig& config) {
  std::vector<VtaConv2dTask> tasks;
  std::map<std::string, size_t> byShape;  // the seeds' shape line: what makes two groups one task
  for (const graph::FusedGroup& group : graph::fuseOperators(packed)) {
    int convolution = packedConvolutionOf(packed, group);
    if (convolution < 0) continue;
    Conv2dWorkload workload = Conv2dWorkload::of(packed, convolution);
    std::string shape = conv2dPackedShapeLine(workload, config);
    auto [it, fresh] = byShape.emplace(shape, tasks.size());
    if (fresh) {
      VtaConv2dTask t;
      t.problem = conv2dPackedTaskProblem(workload, config);
      t.task = makeConv2dPackedTask(conv2dPackedTaskName(workload, config), t.problem);
      tasks.push_back(std::move(t));
    }
    tasks[it->second].groups.push_back(packed.node(group.output).name);
  }
  return tasks;
}

std::string formatConv2dPackedTasks(const std::vector<VtaConv2dTask>& tasks) {
  std::string out = fmt::format("Extracted {} conv2d tasks:\n", tasks.size());
  for (const VtaConv2dTask& t : tasks) out += conv2dPackedShapeLine(t.problem.workload, t.problem.config) + "\n";
  return out;
}

TilingChoice tilingsFromRecords(const tune::HistoryBest& records, const std::vector<VtaConv2dTask>& tasks,
                                const HardwareConfig& config, std::vector<std::string>* notes) {
  return [&records, &tasks, config, notes](const Conv2dWorkload& workload, const PackedConvolution& group) {
    Conv2dTiling fallback = defaultConv2dTiling(workload, group, config);
    auto note = [&](const std::string& text) {
      if (notes) notes->push_back(text);
    };
    std::string shape = conv2dPackedShapeLine(workload, config);
    const VtaConv2dTask* task = nullptr;
    for (const VtaConv2dTask& t : tasks)
      if (conv2dPackedShapeLine(t.problem.workload, config) == shape) task = &t;
    const tune::TuningRecord* record = task ? records.find(task->task->measure->workloadKey) : nullptr;
    if (!record) {
      note(fmt::format("{}: default (no record)", shape));
      return fallback;
    }
    Conv2dTiling tiling;
    try {
      tiling = conv2dTilingOfSteps(task->problem, record->steps);
    } catch (const Error& e) {
      note(fmt::format("{}: default (the record's steps: {})", shape, e.what()));
      return fallback;
    }
    if (group.storedBytes != 1) tiling.accumulatorSets = 1;  // byte planes are shifted in place
    if (auto problem = tilingProblem(workload, tiling, group, config)) {
      note(fmt::format("{}: default (the record's tiling does not fit this group: {})", shape, *problem));
      return fallback;
    }
    note(fmt::format("{}: record (config {}, {:.2f} GFLOPS)", shape, record->config ? record->config->index : -1,
                     record->gflops()));
    return tiling;
  };
}

}  // namespace tessel::vta
