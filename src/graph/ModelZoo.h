/// The model zoo: classic image classification networks built layer for layer as torchvision
/// defines them (and as Gluon's "v1" definition for MobileNet v1, which torchvision lacks), and
/// the transformers BERT-base, GPT-2 small and ViT-B/16 as their reference definitions write
/// them, so that a peer can run the very same network (bench/peers/export_models.py exports the
/// same names from torchvision and from bench/peers/transformers.py). Every image classifier
/// ends in a softmax over the classes; BERT and GPT-2 return their last hidden state, ViT its
/// logits, as the references do. Weights are deterministic pseudo-random (seeded by the
/// parameter's name: He-scaled for the convolutional networks, with batch-norm statistics
/// neutral; the transformers' scale of 0.02), so activations stay of order one through deep
/// networks; real weights load from a params file (GraphParams.h), the transformers' under
/// their PyTorch state-dict names. Dropout is the identity in inference and does not appear.
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
  /// BERT and GPT-2: tokens per input (0: the network's own, 128; at most its position table,
  /// 512 and 1024). An error for the other networks.
  int64_t sequence = 0;
  /// The transformers: encoder layers (0: the network's own, 12). Fewer keep every operator at
  /// full width (for quick runs and tests); an error for the other networks.
  int64_t layers = 0;
};

/// resnet-18/34/50/101/152, mobilenet, mobilenet-v2, vgg-11/13/16/19, squeezenet_v1.0/1.1,
/// inception_v3, bert-base, gpt2, vit-b16. An error listing the known names otherwise; an error
/// for a batch below 1, an image too small for the network, or an option the network lacks.
Graph buildModel(const std::string& name, const ModelOptions& options = {});
std::vector<std::string> modelNames();

}  // namespace tessel::graph
