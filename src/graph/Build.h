/// Whole-network build: fuse the graph, give each fused function a schedule (the dispatch point
/// where tuning records plug in), generate and compile every distinct function into one shared
/// library, plan the activation memory, and write a deployable module directory that the
/// runtime's GraphExecutor loads alone (kernels.so, graph.json, params.bin).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "graph/Fusion.h"
#include "schedule/Steps.h"

namespace tessel::graph {

/// Picks the steps for one fused function (default schedule, a tuning record, ...).
using ScheduleProvider = std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG& dag)>;

struct BuildOptions {
  std::string target = "cpu";
  bool fuse = true;
  ScheduleProvider schedule;  ///< empty: the naive schedule (no steps)
};

struct BuildReport {
  int functions = 0;        ///< fused functions called by the graph
  int distinctKernels = 0;  ///< compiled functions (equal workloads share one)
  size_t plannedBytes = 0;  ///< activation buffers after storage reuse
  size_t naiveBytes = 0;    ///< one buffer per activation
  double compileSeconds = 0;
};

/// Writes the module into `directory` (created if needed) and reports what was built.
BuildReport buildGraph(const Graph& graph, const std::string& directory, const BuildOptions& options = {});

}  // namespace tessel::graph
