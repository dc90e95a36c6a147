/// Test helper: resnet-18 (10 classes) at a chosen image size prepared as the VTA flow prepares
/// it — the standard passes with the layout kept (NCHW), int8 quantization with TVM's defaults,
/// graph packing between the max pool and the global average pool.
#pragma once
#include <cstdint>
#include <optional>

#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"

namespace tessel::testsupport {

inline graph::Graph packedResnet18(int64_t imageSize) {
  graph::registerStandardOps();
  graph::ModelOptions o;
  o.imageSize = imageSize;
  o.classes = 10;
  graph::OptimizeOptions prepare;
  prepare.desiredLayout = std::nullopt;
  return graph::graphPack(graph::quantize(graph::optimizeGraph(graph::buildModel("resnet-18", o), prepare)));
}

}  // namespace tessel::testsupport
