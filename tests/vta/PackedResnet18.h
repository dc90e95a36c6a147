/// Test helper: resnet-18 (10 classes) at a chosen image size prepared as the VTA flow prepares
/// it (vta::prepareForVta) — the standard passes with the layout kept (NCHW), int8 quantization
/// with TVM's defaults, graph packing between the max pool and the global average pool, the
/// shortcuts marked to fuse into the convolutions that add them.
#pragma once
#include <cstdint>

#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "vta/GraphPacking.h"

namespace tessel::testsupport {

inline graph::Graph packedResnet18(int64_t imageSize) {
  graph::registerStandardOps();
  graph::ModelOptions o;
  o.imageSize = imageSize;
  o.classes = 10;
  return vta::prepareForVta(graph::buildModel("resnet-18", o), vta::HardwareConfig{});
}

}  // namespace tessel::testsupport
