/// What graph packing needs from a VTA hardware configuration: the GEMM core's batch and
/// channel blocks, with the packed region's start and stop operators as a user names them
/// (`max_pool2d`, `max_pool2d:1` for the second one).
#pragma once
#include <string>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "vta/HardwareConfig.h"

namespace tessel::vta {

/// Activations in NCHW{BATCH}n{BLOCK_OUT}c, weights in OIHW{BLOCK_OUT}o{BLOCK_IN}i: one channel
/// block, so BLOCK_IN must equal BLOCK_OUT (every configuration the public repository ships;
/// Error otherwise). `start` and `stop` as parseOperatorOccurrence reads them.
graph::GraphPackOptions graphPackOptions(const HardwareConfig& config, const std::string& start = "max_pool2d",
                                         const std::string& stop = "global_avg_pool2d");

/// A network as the VTA flow compiles it (seed 000's compile_network): the standard
/// optimizations in its own layout (batch norms folded), int8 quantization with TVM's defaults,
/// then graph packing between `start` and `stop`, the residual shortcuts marked to fuse into the
/// convolutions that add them (ShortcutFusion.h).
graph::Graph prepareForVta(const graph::Graph& model, const HardwareConfig& config, const std::string& start = "max_pool2d",
                           const std::string& stop = "global_avg_pool2d");

}  // namespace tessel::vta
