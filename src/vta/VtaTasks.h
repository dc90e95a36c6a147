/// Task extraction for VTA: the conv2d_packed tuning tasks of a packed network, one per distinct
/// convolution shape among its conv2d_blocked groups, in order of first occurrence — seed 000's
/// "Extracted 10 conv2d tasks" for resnet-18. Groups of one shape share a task whatever their
/// epilogue (the task measures seed 000's shift, clip and cast: conv2dPackedTaskGraph).
#pragma once
#include <string>
#include <vector>

#include "tune/HistoryBest.h"
#include "vta/Conv2dPackedTemplate.h"
#include "vta/DensePackedTemplate.h"
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

/// A dense_packed task: a dense layer of a network as graph packing would make it (batch and
/// channels in blocks, zero-padded), tuned on its own computation (densePackedTaskGraph). Seeds
/// keep resnet-18's dense layer on the CPU (`skip_dense_layer`, and it lies past the packing
/// region); these tasks are what `tessel tune --target vta --ops conv2d,dense` adds.
struct VtaDenseTask {
  DensePackedProblem problem;
  tune::autotvm::TuningTaskPtr task;
  std::vector<std::string> layers;  ///< the network's dense nodes of this shape
};

/// One task per distinct shape among the graph's `dense` nodes (data [N, C], weight [M, C]), in
/// order of first occurrence.
std::vector<VtaDenseTask> extractDensePackedTasks(const graph::Graph& graph, const HardwareConfig& config);

/// "Extracted N dense tasks:" and each one's (batch, in_dim, out_dim), padded to the blocks.
std::string formatDensePackedTasks(const std::vector<VtaDenseTask>& tasks);

/// How many of a task's best records a group's tiling is chosen from (below).
inline constexpr size_t kRankedRecords = 16;

/// The tilings a network runs with: for each packed convolution group, among the first
/// `rankedRecords` distinct tilings of its shape's task's records in `records`, best first
/// (their steps read back by conv2dTilingOfSteps; those that do not fit the group itself left
/// out), and the rule-based default, the one with the fewest modelled cycles under the group's
/// own epilogue — the task measured seed 000's shift, clip and cast, a group may add bias and
/// shortcut loads and more ALU passes, and the task's best tiling need not be the group's.
/// `rankedRecords` 1: the best record that fits, as it is (the default where none does). Each choice is
/// appended to `notes` when given: "SHAPE: record (config 12, 23.1 GFLOPS; ...)" or "SHAPE:
/// default (why)". The function refers to `records`, `tasks` and `notes`: they must outlive it.
TilingChoice tilingsFromRecords(const tune::HistoryBest& records, const std::vector<VtaConv2dTask>& tasks,
                                const HardwareConfig& config, std::vector<std::string>* notes = nullptr,
                                size_t rankedRecords = kRankedRecords);

}  // namespace tessel::vta
