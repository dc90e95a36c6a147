/// A packed dense group (dense_blocked and its ALU epilogue) as a VTA program, as TVM's
/// dense_packed schedule computes it (tvm@v0.18.0:vta/python/vta/top/vta_dense.py): output tiles
/// of batch blocks × output-channel blocks (the store point), and inside each the input-channel
/// tiles, whose input and weight blocks are loaded by 2D DMA before the GEMM over the tile.
/// The epilogue runs on the ALU and the tile is stored, with the tokens and buffer-set rotation
/// of the convolution's emitter (TileProtocol.h). The tiling is checked against the on-chip
/// buffers before anything is emitted.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "vta/Conv2dLowering.h"

namespace tessel::vta {

/// A packed dense's shape in VTA elements: data [N/b, C/c, b, c], weight [M/c, C/c, c, c],
/// output [N/b, M/c, b, c].
struct DenseWorkload {
  int64_t batchBlocks = 1, inputBlocks = 1, outputBlocks = 1;

  /// The workload of a dense_blocked node.
  static DenseWorkload of(const graph::Graph& graph, int dense);
  /// GEMM micro-op executions of one call: every (output element, input block).
  int64_t gemmCount() const { return batchBlocks * outputBlocks * inputBlocks; }
};

/// The inner factors of TVM's tile_b, tile_ci and tile_co: batch blocks and output-channel
/// blocks of one tile, input-channel blocks of one load. Each divides its axis.
struct DenseTiling {
  int64_t batchBlocks = 1, inputBlocks = 1, outputBlocks = 1;
  /// As Conv2dTiling's: sets of input and weight buffers the loads rotate through, and of
  /// accumulators the tiles rotate through (oc_nthread virtual threads).
  int64_t loadBufferSets = 1, accumulatorSets = 1;
};

/// Why `tiling` cannot compute the group on `config` (a tile that does not divide its axis, a
/// buffer it overflows, by how much), or nothing when it fits.
std::optional<std::string> denseTilingProblem(const DenseWorkload& workload, const DenseTiling& tiling,
                                              const PackedConvolution& group, const HardwareConfig& config);

/// Records one call's program into `stream` (the caller synchronizes); `buffers` as for a
/// convolution, in the dense layouts. Error with the problem when the tiling does not fit.
void emitDense(CommandStream& stream, const DenseWorkload& workload, const DenseTiling& tiling, const PackedConvolution& group,
               const Conv2dBuffers& buffers);

/// The rule without a record: two load and two accumulator sets (one for an int32 result; one
/// each when two do not fit), then the most batch blocks per tile (each weight load serves
/// them all), the most input blocks per load, the most output blocks per tile that fit (the
/// largest divisors). Error naming the reason when nothing fits.
DenseTiling defaultDenseTiling(const DenseWorkload& workload, const PackedConvolution& group, const HardwareConfig& config);

/// Runs one packed dense group on the device behind `stream` (as runConv2dGroup).
runtime::Tensor runDenseGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                              const PackedConvolution& group, const DenseTiling& tiling,
                              const std::function<runtime::Tensor(int node)>& valueOf);

}  // namespace tessel::vta
