/// Task extraction: every fused function of a network is a tuning task. Functions with equal
/// computations on equal shapes (the same workload key) are one task whose weight counts them,
/// so a tuner spends its trials where they pay off.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/Fusion.h"

namespace tessel::graph {

struct Task {
  std::string workloadKey;
  te::ComputeDAG dag;
  int weight = 0;             ///< how many fused functions of the network are this task
  double flops = 0;           ///< of one occurrence
  std::vector<int> groups;    ///< indices of the fused groups that are this task
  std::string name;           ///< the output node of its first occurrence, for reading
};

/// The tasks of a graph in order of first occurrence. Groups made only of data movement
/// (reshape, flatten: no arithmetic) are left out unless `includeTrivial`.
std::vector<Task> extractTasks(const Graph& graph, bool includeTrivial = false);

/// The workload key of the fused function each operator node ends up in, by node name: what
/// links a layer to the tuning records of its function in two variants of one network.
std::map<std::string, std::string> workloadKeysByNode(const Graph& graph);

/// As seed 001 prints them: `========== Task i  (workload key: K) ==========` then the DAG,
/// `i` the task's number in `numbers` (empty: its position, from 1, as tessel numbers tasks).
std::string formatTasks(const std::vector<Task>& tasks, const std::vector<size_t>& numbers = {});

}  // namespace tessel::graph
