/// The model zoo: classic image classification networks built layer for layer as torchvision
/// (and Gluon's "v1" definitions, for MobileNet v1, which torchvision lacks) define them, so
/// that a peer can run the very same network. Weights are deterministic pseudo-random
/// (He-scaled, seeded by the parameter's name), batch-norm statistics neutral (mean 0, var 1),
/// so activations stay of order one through deep networks.
#pragma once
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "ops/Layout.h"

namespace tessel::graph {

struct ModelOptions {
  int64_t batch = 1;
  ops::Layout layout = ops::Layout::NCHW;
  int64_t imageSize = 0;  ///< 0: the network's own (224; 299 for inception_v3); smaller for tests
  int64_t classes = 1000;
  uint64_t seed = 0;
};

/// resnet-18/34/50/101/152, mobilenet. Error listing the known names otherwise.
Graph buildModel(const std::string& name, const ModelOptions& options = {});
std::vector<std::string> modelNames();

}  // namespace tessel::graph
