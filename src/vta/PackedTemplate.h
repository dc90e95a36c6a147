/// What the packed GEMM templates (conv2d_packed.vta: Conv2dPackedTemplate.h, dense_packed.vta:
/// DensePackedTemplate.h) share: finding their stages in a group's DAG by role, reading a
/// tiling's factors back from a step list, the computation their tasks measure after the GEMM
/// (seed 000's shift, clip and cast) with seeded weights, and the parts of a tuning task that do
/// not depend on the operator.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/Graph.h"
#include "schedule/Steps.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::vta {

/// A packed group's DAG by roles: the GEMM stage (the one tagged `tag`), the output, the GEMM's
/// two inputs, the compute stages between them (the epilogue, in order), the output's axes.
struct PackedStages {
  std::string gemm, output, data, weight;
  std::vector<std::string> epilogue;
  std::vector<std::string> outputAxes;
};

/// Error naming `templateName` when the DAG has no stage tagged `tag`, more than one output, an
/// output of another rank than `outputRank`, or a GEMM that does not read two tensors.
PackedStages packedStages(const te::ComputeDAG& dag, const std::string& tag, size_t outputRank, const std::string& templateName);

/// One factor a tiling reads from its steps: the two-way split of `iterator` of `stage`.
struct TileSplit {
  std::string stage, iterator;
  int64_t* factor;
};

/// Replays `steps` on `dag` (Error naming the step when they do not apply), then reads each
/// split's factor, and the parts of an `nparts` split of `threadStage`'s `threadIterator` into
/// `*threads` (1 without one). Error naming `templateName` when a split is not a two-way split
/// by a factor, or when some of `splits` are missing (`what` lists them for the message).
void readTileSplits(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, const std::vector<TileSplit>& splits,
                    const std::string& threadStage, const std::string& threadIterator, int64_t* threads,
                    const std::string& templateName, const std::string& what);

/// An int8 tensor of `shape` with small seeded values (a linear congruential sequence in
/// [-16, 15]): sums that filled the int32 range would clip every output to the same byte after
/// the task's shift.
runtime::Tensor seededWeight(const std::vector<int64_t>& shape, uint64_t seed);

/// Adds seed 000's epilogue after the GEMM node `gemm` — right shift by 8, clip into [0, 127],
/// cast to int8 — and marks its end the graph's output.
void addTaskEpilogue(graph::Graph& graph, int gemm);

/// A template's tuning task for target "vta": `space`, `instantiate`, the FLOP count, and the
/// fallback config chosen knob by knob by value (`fallback`: knob and value, in the space's
/// order; Error naming the knob when a value is not among its options).
tune::autotvm::TuningTaskPtr makePackedTask(const std::string& name, const std::string& templateName, const te::ComputeDAG& dag,
                                           double flops, tune::autotvm::ConfigSpace space,
                                           std::function<std::vector<schedule::StepPtr>(const tune::autotvm::ConfigEntity&)> instantiate,
                                           const std::vector<std::pair<std::string, nlohmann::json>>& fallback);

}  // namespace tessel::vta
