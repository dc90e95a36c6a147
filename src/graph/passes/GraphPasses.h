/// The graph-to-graph passes that prepare a network for fusion and code generation. Each takes
/// a graph and returns a new one that computes the same outputs from the same inputs; node
/// names survive, nodes a pass invents get names derived from the ones they replace.
#pragma once
#include <functional>

#include "graph/Graph.h"
#include "ops/Layout.h"
#include "target/HostCpu.h"

namespace tessel::graph {

/// Inference-time batch norm with constant statistics becomes a multiply by
/// gamma / sqrt(var + eps) and an add of beta - mean * scale, both per channel: two broadcast
/// ops that fuse into the producer's epilogue and that fold_scale_axis can push into weights.
Graph simplifyInference(const Graph& graph);

/// Every operator whose inputs are all constants is evaluated now and becomes a constant, unless
/// its value would be much larger than its inputs (a broadcast of two vectors into a matrix) or
/// past budgets::kComputedTensorElements: such an operator stays and runs with the network.
Graph foldConstants(const Graph& graph);

/// A conv2d, depthwise_conv2d or dense with constant weights, read only by a multiply with a
/// constant that varies along the output channel alone, takes that scale into its weights.
Graph foldScaleAxis(const Graph& graph);
/// A float32 conv2d (NCHW or NHWC) with a constant weight whose stride equals its kernel, larger
/// than one pixel, undilated, unpadded, one group, over an image its windows tile exactly (a
/// vision transformer's patch embedding) becomes the matrix product it is: the image reshaped
/// and transposed into one row per patch, a batch_matmul by the weight as [K, O] (folded), a
/// constant channel bias added by its only reader as the product's epilogue, and the result
/// put back in the convolution's layout under the replaced node's name.
Graph patchProducts(const Graph& graph);
/// A chain of two or more transposes and reshapes (each link read by the next alone) that
/// leaves every element in its row-major place (reshapes alone always do) becomes a reshape of
/// its source, or the source.
Graph collapseLayoutChains(const Graph& graph);
/// Products (matmul, batch_matmul) of one value by constant float32 [K, N] weights of the same K
/// (and, for each or for none, a constant [N] bias added as their only reader) become one
/// product with the weights side by side, plus the biases in one add, and a strided slice per
/// product under the name of its last node: a transformer's query, key and value projections
/// as one.
Graph combineParallelProducts(const Graph& graph);

/// True when node `id` is a matrix product (matmul, batch_matmul) of one stack of float32 rows
/// ([1, ..., 1, M, K] or [M, K]) by a constant [K, N] float32 weight: its reduction can be split.
bool reductionSplitCandidate(const Graph& graph, int id);

/// For a candidate, into how many parts (dividing K) its reduction is split; 1 keeps it whole.
using SplitChoice = std::function<int64_t(const Graph& graph, int id)>;

/// A GPU's choice: a product whose largest GEMM tiles (ops::kGpuGemmLargestTileEdge square)
/// would number fewer than half the `multiprocessors` is split into the most parts, a power of
/// two up to 8, that keep the tiles of all parts within two per multiprocessor (two blocks
/// resident on each), each part at least 128 steps of the reduction long (BERT-base's 128 x 768
/// products on an H200: 24 tiles; the contraction in 8 parts, the output projection, K 768, in
/// 4). No split where `multiprocessors` is unknown (0).
SplitChoice gpuReductionSplitChoice(int64_t multiprocessors);

/// Every candidate the choice gives S > 1 parts becomes a batched product of S partial sums
/// (its rows' K columns as S slices of K / S, the weight as S blocks of its rows) and their sum:
/// S times the blocks for a GPU, each with a reduction S times shorter. The sum, a reduction
/// over the parts, takes the product's element-wise readers (bias, residual add) as its epilogue.
Graph splitProductReductions(const Graph& graph, const SplitChoice& partsOf);

/// GPU targets: a chain of layout ops (transpose, reshape, strided_slice, flatten), each read by
/// the next alone, that ends in an operand of a matrix product (batch_matmul, matmul, dense) is
/// marked `fuse_into_reader`, so that fusion computes it in the product's function: the tiled
/// schedules copy operands into shared memory, and the copy reads through the layout ops instead
/// of a kernel writing the moved value first (a transformer's head split and merge).
Graph fuseLayoutsIntoProducts(const Graph& graph);

/// GPU targets: attention's scores product, the element-wise scale and mask after it, and the
/// softmax over the keys, each read by the next alone, that feed a batched product (the context)
/// are marked `fuse_into_reader`: one function per attention block, whose schedule keeps a
/// block's rows of scores in shared memory instead of three kernels passing them through memory.
Graph fuseAttention(const Graph& graph);

/// Rewrites the layout-sensitive operators from the other image layout to `desired` (NCHW to
/// NHWC, the layout the CPU schedules run fastest in, or back): convolutions, pooling and
/// resize take the new layout and transposed weights, per-channel operators (batch norm, bias,
/// concatenate, softmax, pad) follow the channel axis, elementwise and broadcast operators stay
/// in whichever layout their input has, and transposes are inserted only where a value crosses
/// into an operator that must see the original layout (flatten, dense, the graph's outputs).
/// Weight transposes are left for fold_constants.
Graph convertLayout(const Graph& graph, ops::Layout desired);

/// True when node `id` is a conv2d in `layout` that Winograd's F(m x m, 3 x 3) can compute (3x3,
/// stride 1, undilated, one group, float32) with a constant weight. CPU builds transform NHWC
/// convolutions (ops/Winograd.h), GPU builds NCHW ones (ops/WinogradNchw.h).
bool winogradCandidate(const Graph& graph, int id, ops::Layout layout = ops::Layout::NHWC);

/// The tile size m of node `id` when it is a conv2d_winograd (the use_winograd rewrite's
/// output); 0 for any other node and for id -1 (Graph::findNode's "absent").
int winogradTileSize(const Graph& graph, int id);

/// For a candidate node, the Winograd tile size m to compute it with (2, 4 or 6), or 0 to keep
/// the direct convolution.
using WinogradChoice = std::function<int(const Graph& graph, int id)>;

/// The default rules' choice (ops::defaultWinogradTileSize) for a machine with an L2 of
/// `l2Bytes` per core.
WinogradChoice defaultWinogradChoice(size_t l2Bytes);

/// The next larger tile tuning measures beside the rules' on CPU targets
/// (ops::largeWinogradTileSize: F(4x4) for their F(2x2), F(6x6) for their F(4x4) where its
/// transformed weight fits the L2).
WinogradChoice largeWinogradChoice(size_t l2Bytes);

/// Every candidate convolution in `layout` the choice gives a tile size becomes conv2d_winograd
/// (same node name) on a winograd_weight_transform of its weight (HWIO or OIHW), which
/// fold_constants then computes once.
Graph useWinograd(const Graph& graph, const WinogradChoice& tileSizeOf, ops::Layout layout = ops::Layout::NHWC);

/// The choice GPU builds tune against the direct convolution (ops::gpuWinogradTileSize: F(4x4)
/// where 4x4 tiles cover the output exactly, else F(2x2)).
WinogradChoice gpuWinogradChoice();

/// True when node `id` is a conv2d whose weight can be packed by output-channel blocks: NHWC,
/// one group, float32, a constant weight.
bool packingCandidate(const Graph& graph, int id);

/// True when node `id` is a matrix product (matmul, dense, batch_matmul) of float32 rows, two
/// or more of them, with a constant 2-D float32 weight: its weight can be packed by column
/// blocks (ops/MatmulPacked.h).
bool matmulPackingCandidate(const Graph& graph, int id);

/// For a packing candidate (either kind), the block of output channels or columns (a divisor
/// of them) to pack its weight by, or 0 to keep it as it is.
using PackChoice = std::function<int64_t(const Graph& graph, int id)>;

/// The default rules' choice: blocks of ops::defaultPackBlock for convolutions and of
/// ops::defaultMatmulPackBlock for matrix products.
PackChoice defaultPackChoice(const target::CpuMachine& machine = target::hostCpu());

/// Every candidate the choice gives a block becomes conv2d_packed or matmul_packed (same node
/// name) on a pack_conv_weight or pack_matmul_weight of its weight, which fold_constants then
/// computes once: both halves below.
Graph usePackedWeights(const Graph& graph, const PackChoice& blockOf);

/// The matrix products' half: matmul, dense or batch_matmul of a stack of rows ([..., M, K])
/// by a constant matrix becomes matmul_packed on the same stack; dense's [N, K] weight is
/// transposed before it is packed.
Graph usePackedMatmulWeights(const Graph& graph, const PackChoice& blockOf);

/// True when node `id` is a pointwise convolution (1x1, stride 1, no padding, one group, NHWC)
/// reading, through element-wise ops no one else reads, a stride-1 depthwise convolution on an
/// image of at least 14x14: a separable block whose two convolutions run fastest as one
/// function. Measured on mobilenet (2-core Zen 5): the pairs at 56x56, 28x28 and 14x14 gain
/// 3-9%, at 112x112 as fast as apart; at 7x7 the pointwise loops lose their parallel channel
/// blocks (7 rows for 2 threads: +30%), and after a stride-2 depthwise convolution its strided
/// window costs more than the round trip through memory saves (+12% at 56x56).
bool separableBlock(const Graph& graph, int id);

/// Marks every separable block's pointwise convolution (attribute fuse_depthwise), so that
/// fusion puts it in one function with its depthwise convolution; the default schedule then
/// computes the depthwise output a register tile's rows at a time inside the pointwise loops,
/// and it never goes to memory.
Graph fuseSeparableBlocks(const Graph& graph);

/// The settings of int8 quantization; the defaults are TVM's (QConfig in
/// tvm@v0.18.0:python/tvm/relay/quantize/quantize.py), which the VTA tutorials use: 8-bit
/// inputs and weights, int32 activations, calibration by one global scale, weights scaled by
/// powers of two.
struct QuantizeOptions {
  /// Quantized inputs of convolutions cover [-globalScale, globalScale] in steps of
  /// globalScale / 128. A power of two, so that every requantization is a shift.
  double globalScale = 8.0;
  /// conv2d layers, counted from 0 in node order, that stay in float (TVM's skip_conv_layers:
  /// the first convolution of a network reads the image and runs on the CPU).
  std::vector<int> skipConvLayers{0};
  bool skipDense = true;      ///< dense layers stay in float (skip_dense_layer)
  bool roundForShift = true;  ///< right shifts add half of their divisor first (round_for_shift)
  /// Error naming the setting that is out of range.
  void validate() const;
};

/// int8 quantization as TVM's relay.quantize (annotate, calibrate, realize) with `options`:
/// conv2d (and dense unless skipped) read int8 data and int8 weights and accumulate in int32;
/// the real values they read become integers by x * (1 / scale) rounded half away from zero
/// and clipped to +-127; int32 results are requantized to int8 by adding half, shifting right,
/// clipping and casting; adds align both operands to the smaller scale by left shifts (a
/// constant operand, batch norm's bias, is itself quantized to 8 bits first); relu, clip,
/// max_pool2d and data movement stay in integers; global_avg_pool2d averages int32 and ends
/// the quantized region. Every other operator, and everything after that region, runs in
/// float on dequantized inputs (cast to float32 times the scale), as in TVM for operators it
/// has no rule for. Run it after simplify_inference and fold_scale_axis (TVM's
/// prerequisite_optimize), so that batch norms are folded into weights and biases.
Graph quantize(const Graph& graph, const QuantizeOptions& options = {});

/// One end of graph packing's region: the `index`-th operator named `op` in node order (0:
/// the first), as TVM's start_name / start_name_idx (whose index counts all operators).
struct OperatorOccurrence {
  std::string op;
  int index = 0;
};

/// "max_pool2d" or "max_pool2d:1" (the second max_pool2d); Error naming the text when it is
/// malformed or names no registered operator.
OperatorOccurrence parseOperatorOccurrence(const std::string& text);

/// Where and how graph packing blocks a network; the defaults are the VTA tutorials' region
/// and the default VTA configuration's blocks (vta::graphPackOptions derives them from a
/// hardware configuration).
struct GraphPackOptions {
  int64_t batchBlock = 1;     ///< b of NCHW{b}n{c}c: VTA's BATCH
  int64_t channelBlock = 16;  ///< c of NCHW{b}n{c}c and OIHW{c}o{c}i: VTA's BLOCK_IN = BLOCK_OUT
  OperatorOccurrence start{"max_pool2d", 0};
  OperatorOccurrence stop{"global_avg_pool2d", 0};
  void validate() const;
};

/// Graph packing (TVM's graph_pack): the output of the start operator is packed from NCHW to
/// NCHW{b}n{c}c ([N / b, C / c, H, W, b, c], channels zero-padded to the block); every
/// operator after it and before the stop operator that reads packed values computes in the
/// packed layout: NCHW conv2d becomes conv2d_blocked with its constant OIHW weight packed to
/// OIHW{c}o{c}i (zero-padded), bias_add along the channels becomes an add of the packed
/// bias, elementwise operators stay as they are, broadcast operators
/// pack their other operand (per-channel constants such as biases to [C / c, 1, 1, 1, c],
/// scalars unchanged, images packed). Values read outside the region (the stop operator,
/// whose input is brought back as in TVM, and the graph's outputs) are unpacked to NCHW.
/// Errors name a missing start or stop operator, and an operator in the region that has no
/// packed form.
Graph graphPack(const Graph& graph, const GraphPackOptions& options = {});

/// Drops every node no output depends on (inputs stay: they are the module's interface).
Graph eliminateDeadCode(const Graph& graph);

}  // namespace tessel::graph
