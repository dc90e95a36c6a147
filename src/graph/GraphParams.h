/// A graph's parameters in a params file (the runtime's TESSELPR format, runtime/Params.h):
/// the weights of a zoo network saved, or real weights loaded into a graph built with random
/// ones. Parameters are matched by name. A params file belongs to one layout: NHWC graphs hold
/// convolution weights as HWIO, NCHW graphs as OIHW (the errors say so when shapes differ).
#pragma once
#include <map>
#include <string>

#include "graph/Graph.h"

namespace tessel::graph {

/// The graph's learned parameters by name: its constants but the fixed ones (Graph::addFixedConstant).
std::map<std::string, runtime::Tensor> learnedParams(const Graph& graph);

/// Writes every learned parameter of the graph. Error naming the path when it cannot be written.
void saveGraphParams(const Graph& graph, const std::string& path);

/// Replaces every learned parameter of the graph by the file's tensor of the same name. Nothing is
/// replaced unless all match; otherwise an Error names the file and every problem: a missing,
/// truncated or corrupt file, parameters the file lacks, parameters the graph does not have,
/// and wrong shapes or dtypes (the parameter, expected and got).
void loadGraphParams(Graph& graph, const std::string& path);

}  // namespace tessel::graph
