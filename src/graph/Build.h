/// Whole-network build: fuse the graph, give each fused function a schedule (the dispatch point
/// where tuning records plug in), generate and compile every distinct function into one shared
/// library, plan the activation memory, and write a deployable module directory that the
/// runtime's GraphExecutor loads alone (kernels.so, graph.json, params.bin). For a GPU target
/// ("cuda ...", "opencl ...") the kernels are GPU kernels (the default GPU schedule unless a
/// provider is given; lowered for the GPU and verified against the target's limits), saved as
/// one GPU module (manifest.json with kernels.cubin or kernels.cl) beside graph.json, which
/// then names its device kind ("device": "cuda" | "opencl").
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/Fusion.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "schedule/Steps.h"

namespace tessel::graph {

/// Picks the steps for one fused function (default schedule, a tuning record, ...).
using ScheduleProvider = std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG& dag)>;

struct BuildOptions {
  target::Target target = target::Target::host();
  bool fuse = true;
  ScheduleProvider schedule;  ///< empty: the naive schedule (no steps) on a CPU, the default GPU schedule on a GPU
  /// The limits GPU kernels are verified against; empty: the target's named profile
  /// (passes::GpuLimits::forTarget). graph::gpuLimitsForBuild gives the present device's.
  std::optional<passes::GpuLimits> gpuLimits;
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
