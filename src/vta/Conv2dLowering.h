/// A packed convolution group (conv2d_blocked and its ALU epilogue) as a VTA program: tiles of
/// output rows, columns and channel blocks, each computed as TVM's conv2d_packed schedule
/// computes it (tvm@v0.18.0:vta/python/vta/top/vta_conv2d.py) — input and weight tiles loaded
/// by 2D DMA with the convolution's zero padding, the GEMM micro-op kernel over the tile's rows
/// and columns, the epilogue on the ALU, the tile stored — with dependency tokens between the
/// load, compute and store modules. Loads may rotate through several input and weight buffer
/// sets so that they overlap the GEMMs; the tiling is checked against the on-chip buffers
/// before anything is emitted.
#pragma once
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vta/AluEpilogue.h"
#include "vta/BytePlanes.h"
#include "vta/CommandStream.h"
#include "vta/HardwareConfig.h"

namespace tessel::vta {

/// A packed convolution's shape in VTA elements: data [N/b, C/c, H, W, b, c], weight
/// [K/c, C/c, KH, KW, c, c], output [N/b, K/c, OH, OW, b, c].
struct Conv2dWorkload {
  int64_t batchBlocks = 1, inputBlocks = 1, height = 1, width = 1;
  int64_t outputBlocks = 1, kernelHeight = 1, kernelWidth = 1;
  int64_t strideHeight = 1, strideWidth = 1;
  std::array<int64_t, 4> padding{0, 0, 0, 0};  ///< top, left, bottom, right
  int64_t outHeight = 1, outWidth = 1;

  /// The workload of a conv2d_blocked node.
  static Conv2dWorkload of(const graph::Graph& graph, int convolution);
  /// GEMM micro-op executions of one call: every (output element, input block, tap).
  int64_t gemmCount() const;
};

/// The inner factors of TVM's tile_h, tile_w, tile_ci and tile_co: output rows, output columns,
/// input-channel blocks and output-channel blocks of one tile. Each divides its axis.
struct Conv2dTiling {
  int64_t rows = 1, columns = 1, inputBlocks = 1, outputBlocks = 1;
  /// Sets of input and weight buffers the loads rotate through: with n sets, a load waits
  /// only for the GEMM n loads back, so loads overlap GEMMs. Each set takes its share of the
  /// buffers.
  int64_t loadBufferSets = 1;
  /// Sets of accumulators (tile and epilogue operands) the tiles rotate through: with n sets a
  /// tile waits only for the store of the tile n back, so stores overlap the next tiles'
  /// compute. Together the two are what TVM's virtual threads buy. One set for an int32
  /// result (its byte planes are shifted in place between stores).
  int64_t accumulatorSets = 1;
};

/// Why `tiling` cannot compute the group on `config`: a tile that does not divide its axis, a
/// buffer it overflows (which one, how many elements of how many), a padding wider than the
/// DMA's 15; nothing when it fits.
std::optional<std::string> tilingProblem(const Conv2dWorkload& workload, const Conv2dTiling& tiling,
                                         const PackedConvolution& group, const HardwareConfig& config);

/// The DRAM buffers of one call, in the packed graph's layouts: `operands[k]` for the k-th
/// epilogue step that reads an operand; `output` holds `storedBytes` planes of int8, the
/// output's elements each (an int32 result: its bytes from the lowest, plane after plane).
struct Conv2dBuffers {
  DeviceBuffer data, weight, output;
  std::vector<DeviceBuffer> operands;
};

/// Records one call's program into `stream` (the caller synchronizes). Error with the
/// problem when the tiling does not fit.
void emitConv2d(CommandStream& stream, const Conv2dWorkload& workload, const Conv2dTiling& tiling,
                const PackedConvolution& group, const Conv2dBuffers& buffers);

/// The rule-based tiling (what runs without a tuning record): whole output rows, one input and
/// one output block per tile, two load buffer sets and two accumulator sets (one for an int32
/// result), and as many rows as fit the buffers (the largest divisor of the output height that
/// does); one set each when two do not fit even one row. Error when not even one row fits,
/// naming the reason.
Conv2dTiling defaultConv2dTiling(const Conv2dWorkload& workload, const PackedConvolution& group, const HardwareConfig& config);

/// Runs one packed convolution group on the device behind `stream` with `tiling`: uploads its
/// data, weight and operands (`valueOf(node)` gives each one's value), runs it, and returns
/// its result (`group`'s output node type: int8, or int32 joined from its byte planes). The
/// device's statistics accumulate.
runtime::Tensor runConv2dGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                               const PackedConvolution& group, const Conv2dTiling& tiling,
                               const std::function<runtime::Tensor(int node)>& valueOf);

/// What runConv2dGroup and runDenseGroup share: uploads the group's data, weight and operands,
/// records `emit(buffers)`, runs it and returns the result as runConv2dGroup does.
runtime::Tensor runPackedGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                               const PackedConvolution& group, const std::function<void(const Conv2dBuffers&)>& emit,
                               const std::function<runtime::Tensor(int node)>& valueOf);

}  // namespace tessel::vta
