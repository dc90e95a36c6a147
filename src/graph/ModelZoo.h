/// The model zoo: classic image classification networks built layer for layer as torchvision
/// defines them (and as Gluon's "v1" definition for MobileNet v1, which torchvision lacks), so
/// that a peer can run the very same network (bench/peers/export_models.py exports the same
/// names from torchvision). Every network ends in a softmax over the classes. Weights are
/// deterministic pseudo-random (He-scaled, seeded by the parameter's name), batch-norm
/// statistics neutral (mean 0, var 1), so activations stay of order one through deep networks;
/// real weights load from a params file (GraphParams.h). Dropout is the identity in inference
/// and does not appear.
#pragma once
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "ops/Layout.h"

namespace tessel::graph {

struct ModelOptions {
  int64_t batch = 1;
  ops::Layout layout = ops::Layout::NCHW;
  /// 0: the network's own (224; 299 for inception_v3). Smaller sizes (for tests) down to the
  /// network's minimum (32 for VGG, 75 for inception_v3, ...); an error below it.
  int64_t imageSize = 0;
  int64_t classes = 1000;
  uint64_t seed = 0;
  /// Tests only: the width of VGG's two hidden dense layers (0: torchvision's 4096). A
  /// narrower one is NOT torchvision's network; it spares tests VGG's 25088 x 4096 weight
  /// (400 MB). Networks without hidden dense layers ignore it.
  int64_t classifierWidth = 0;
  /// Tests only: ResNet's and VGG's convolution widths divided by this (1: the network's own;
  /// it must divide 64). A narrower network is NOT torchvision's: it keeps every layer, shape
  /// rule and operator with a sixteenth of the weights at 4, for tests whose cost is the
  /// weights (resnet-152 has 60 million). An error for the other networks.
  int64_t widthDivisor = 1;
};

/// resnet-18/34/50/101/152, mobilenet, mobilenet-v2, vgg-11/13/16/19, squeezenet_v1.0/1.1,
/// inception_v3. An error listing the known names otherwise; an error for a batch below 1 or
/// an image too small for the network.
Graph buildModel(const std::string& name, const ModelOptions& options = {});
std::vector<std::string> modelNames();

}  // namespace tessel::graph
