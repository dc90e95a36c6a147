/// The graph-to-graph passes that prepare a network for fusion and code generation. Each takes
/// a graph and returns a new one that computes the same outputs from the same inputs; node
/// names survive, nodes a pass invents get names derived from the ones they replace.
#pragma once
#include <functional>

#include "graph/Graph.h"
#include "ops/Layout.h"

namespace tessel::graph {

/// Inference-time batch norm with constant statistics becomes a multiply by
/// gamma / sqrt(var + eps) and an add of beta - mean * scale, both per channel: two broadcast
/// ops that fuse into the producer's epilogue and that fold_scale_axis can push into weights.
Graph simplifyInference(const Graph& graph);

/// Every operator whose inputs are all constants is evaluated now and becomes a constant.
Graph foldConstants(const Graph& graph);

/// A conv2d, depthwise_conv2d or dense with constant weights, read only by a multiply with a
/// constant that varies along the output channel alone, takes that scale into its weights.
Graph foldScaleAxis(const Graph& graph);

/// Rewrites the layout-sensitive operators from the other image layout to `desired` (NCHW to
/// NHWC, the layout the CPU schedules run fastest in, or back): convolutions, pooling and
/// resize take the new layout and transposed weights, per-channel operators (batch norm, bias,
/// concatenate, softmax, pad) follow the channel axis, elementwise and broadcast operators stay
/// in whichever layout their input has, and transposes are inserted only where a value crosses
/// into an operator that must see the original layout (flatten, dense, the graph's outputs).
/// Weight transposes are left for fold_constants.
Graph convertLayout(const Graph& graph, ops::Layout desired);

/// True when node `id` is a conv2d that Winograd's F(m x m, 3 x 3) can compute (NHWC, 3x3,
/// stride 1, undilated, one group, float32) with a constant weight.
bool winogradCandidate(const Graph& graph, int id);

/// For a candidate node, the Winograd tile size m to compute it with (2 or 4), or 0 to keep
/// the direct convolution.
using WinogradChoice = std::function<int(const Graph& graph, int id)>;

/// The default rules' choice (ops::defaultWinogradTileSize) for a machine with an L2 of
/// `l2Bytes` per core.
WinogradChoice defaultWinogradChoice(size_t l2Bytes);

/// Every candidate convolution the choice gives a tile size becomes conv2d_winograd (same node
/// name) on a winograd_weight_transform of its weight, which fold_constants then computes once.
Graph useWinograd(const Graph& graph, const WinogradChoice& tileSizeOf);

/// True when node `id` is a conv2d whose weight can be packed by output-channel blocks: NHWC,
/// one group, float32, a constant weight.
bool packingCandidate(const Graph& graph, int id);

/// For a packing candidate, the block of output channels (a divisor of them) to pack its
/// weight by, or 0 to keep HWIO.
using PackChoice = std::function<int64_t(const Graph& graph, int id)>;

/// The default rules' choice: blocks of ops::defaultPackBlock.
PackChoice defaultPackChoice();

/// Every candidate the choice gives a block becomes conv2d_packed (same node name) on a
/// pack_conv_weight of its weight, which fold_constants then computes once.
Graph usePackedWeights(const Graph& graph, const PackChoice& blockOf);

/// True when node `id` is a pointwise convolution (1x1, stride 1, no padding, one group, NHWC)
/// reading, through element-wise ops no one else reads, a stride-1 depthwise convolution on an
/// image of at least 14x14: a separable block whose two convolutions run fastest as one
/// function. Measured on mobilenet (2-core Zen 5): the pairs at 56x56, 28x28 and 14x14 gain
/// 3-9%, at 112x112 as fast as apart; at 7x7 the pointwise loops lose their parallel channel blocks (7 rows for 2 threads:
/// +30%), and after a stride-2 depthwise convolution its strided window costs more than the
/// round trip through memory saves (+12% at 56x56).
bool separableBlock(const Graph& graph, int id);

/// Marks every separable block's pointwise convolution (attribute fuse_depthwise), so that
/// fusion puts it in one function with its depthwise convolution; the default schedule then
/// computes the depthwise output a register tile's rows at a time inside the pointwise loops,
/// and it never goes to memory.
Graph fuseSeparableBlocks(const Graph& graph);

/// Drops every node no output depends on (inputs stay: they are the module's interface).
Graph eliminateDeadCode(const Graph& graph);

}  // namespace tessel::graph
