/// A packed network run with its packed convolutions on VTA and everything else in the
/// reference interpreter: each fused group that starts with conv2d_blocked (or dense_blocked:
/// a packed dense, with its rule-based tiling) runs as a VTA program on the device behind a
/// command stream, every other operator node by node in
/// `interpretGraph`. The CPU int8 reference is the interpreter alone, so the two must agree bit
/// for bit; the device's statistics are the network's. A step towards a compiled VTA module
/// (which will call compiled CPU functions instead of the interpreter).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vta/Conv2dLowering.h"

namespace tessel::vta {

/// The tiling of one packed convolution group; empty: defaultConv2dTiling.
using TilingChoice = std::function<Conv2dTiling(const Conv2dWorkload&, const PackedConvolution&)>;

/// What one packed convolution group cost on the device: the first figures of a per-layer
/// profile (GEMM-core utilization = gemms / cycles).
struct VtaGroupRun {
  std::string name;  ///< the group's output node
  Conv2dWorkload workload;
  Conv2dTiling tiling;
  uint64_t cycles = 0, gemms = 0;
  RunProfile profile;  ///< where the cycles went
};

/// The graph's outputs for `inputs` (by input name); each group's run appended to `runs` when
/// given. Error on a missing or mistyped input, and from a group the accelerator cannot run
/// (naming its node).
std::vector<runtime::Tensor> runWithVta(const graph::Graph& graph, const std::map<std::string, runtime::Tensor>& inputs,
                                        CommandStream& stream, const TilingChoice& tilingOf = {},
                                        std::vector<VtaGroupRun>* runs = nullptr);

}  // namespace tessel::vta
