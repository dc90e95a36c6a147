/// Task extraction for VTA: the conv2d_packed tuning tasks of a packed network, one per distinct
/// convolution shape among its conv2d_blocked groups, in order of first occurrence — seed 000's
/// "Extracted 10 conv2d tasks" for resnet-18. Groups of one shape share a task whatever their
/// epilogue (the task measures seed 000's shift, clip and cast: conv2dPackedTaskGraph).
#pragma once
#include <string>
#include <vector>

#include "tune/HistoryBest.h"
#include "vta/Conv2dPackedTemplate.h"
#include "vta/NetworkRunner.h"

namespace tessel::vta {

struct VtaConv2dTask {
  Conv2dPackedProblem problem;            ///< the task's own computation (conv2dPackedTaskProblem)
  tune::autotvm::TuningTaskPtr task;
  std::vector<std::string> groups;        ///< the network's groups of this shape (their output nodes)
};

std::vector<VtaConv2dTask> extractConv2dPackedTasks(const graph::Graph& packed, const HardwareConfig& config);

/// "Extracted N conv2d tasks:" and the seeds' shape line of each.
std::string formatConv2dPackedTasks(const std::vector<VtaConv2dTask>& tasks);

/// The tilings a network runs with: for each packed convolution group, the tiling of the best
/// record of its shape's task in `records` (its steps read back by conv2dTilingOfSteps), else
/// the rule-based default; also the default where the record's tiling does not fit the group
/// itself (an epilogue with more operands than the task's). Each choice is appended to `notes`
/// when given: "SHAPE: record (config 12, 23.1 GFLOPS)" or "SHAPE: default (why)". The function
/// refers to `records`, `tasks` and `notes`: they must outlive it.
TilingChoice tilingsFromRecords(const tune::HistoryBest& records, const std::vector<VtaConv2dTask>& tasks,
                                const HardwareConfig& config, std::vector<std::string>* notes = nullptr);

}  // namespace tessel::vta
