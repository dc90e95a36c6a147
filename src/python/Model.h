/// A network as the Python package holds it (TVM's `mod, params`): the graph as loaded, its
/// parameters in place, and what it was loaded from (for messages). tessel.build and
/// tessel.autotvm.extract_from_program prepare it for their target each time, as the CLI does.
#pragma once
#include <string>

#include "graph/Graph.h"

namespace tessel::python {

struct Model {
  graph::Graph graph;
  std::string source;  ///< the zoo name or the ONNX file
};

}  // namespace tessel::python
