/// Operator fusion: partitions a graph's operator nodes into groups, each of which becomes one
/// compiled function (and one tuning task). The rules follow TVM's: a conv2d or dense
/// (out_elemwise_fusable) absorbs the elementwise and broadcast ops that follow it (bias,
/// residual add, activation); chains of elementwise, broadcast and injective ops fuse; a
/// reduction absorbs the elementwise ops after it; opaque ops stay alone. Beyond TVM, a
/// pointwise convolution marked by fuse_separable_blocks joins its depthwise convolution's group
/// (a separable block as one function), and a chain of elementwise or injective nodes marked
/// `fuse_into_reader` leaves its producer's group and joins the group of its only reader
/// instead: the VTA flow's residual shortcuts (cast to int32, left shift; TVM's fusion of the
/// shortcut into the next convolution, where VTA loads the int8 value and shifts it on the
/// ALU) and, on GPU targets, the layout ops before a matrix product (fuse_layouts_into_products,
/// computed in its operand copies). A node joins its
/// producer's group only when that producer has no other consumer, or when all of them are
/// element-wise nodes of a diamond that meets again in one node (TVM's post-dominator rule:
/// GELU's x * 0.5 * (1 + erf(x / sqrt(2))), SiLU's x * sigmoid(x)), which joins as a whole;
/// so no intermediate value that someone outside reads is ever hidden inside a function, and
/// groups form no cycles.
#pragma once
#include <vector>

#include "graph/Graph.h"
#include "te/ComputeDAG.h"

namespace tessel::graph {

struct FusedGroup {
  std::vector<int> nodes;   ///< operator nodes, in topological order
  int output = -1;          ///< the node whose value leaves the group (the last one)
  std::vector<int> inputs;  ///< nodes outside the group read by it, in order of first use
  OpPattern pattern = OpPattern::Opaque;  ///< the group's master pattern
};

/// Groups in topological order. With `fuse` false every operator node is its own group.
std::vector<FusedGroup> fuseOperators(const Graph& graph, bool fuse = true);

/// The group's computation: one placeholder per external input (in `inputs` order), the
/// nodes' compute definitions chained on them, the output last.
te::ComputeDAG buildGroupDAG(const Graph& graph, const FusedGroup& group);

}  // namespace tessel::graph
