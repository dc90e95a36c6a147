/// The reference interpreter: runs a graph node by node, each operator through the naive
/// reference evaluator of its tensor expression, in double precision. Slow and obviously
/// correct: compiled networks (fused, scheduled, in either layout) are checked against it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/Graph.h"

namespace tessel::graph {

/// The graph's outputs (float32 / integer tensors as the graph types say) for the given inputs
/// by name. Error on a missing or mistyped input.
std::vector<runtime::Tensor> interpretGraph(const Graph& graph, const std::map<std::string, runtime::Tensor>& inputs);

}  // namespace tessel::graph
