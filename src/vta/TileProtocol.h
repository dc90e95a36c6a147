/// What the packed GEMM emitters (conv2d: Conv2dLowering.h, dense: DenseLowering.h) share: the
/// dependency tokens of a sequence of output tiles — loads rotating through input and weight
/// buffer sets, tiles rotating through accumulator sets, an int32 result stored as four byte
/// planes — and the ALU epilogue of a tile. The emitters decide what a tile and a load are; this
/// file decides when each module may go on, so both follow one protocol (every push has its
/// pop, the k-th pop takes the k-th push).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vta/AluEpilogue.h"
#include "vta/CommandStream.h"
#include "vta/HardwareConfig.h"

namespace tessel::vta {

/// Micro-op kernel loops count in 14-bit fields.
constexpr int64_t kMaxLoopExtent = (int64_t(1) << 14) - 1;

/// The tokens of `tiles` tiles of `loadsPerTile` loads each.
class TileTokens {
 public:
  TileTokens(CommandStream& stream, int64_t tiles, int64_t loadsPerTile, int64_t loadBufferSets, int64_t accumulatorSets,
             int64_t accumulatorsPerSet);
  /// Starts the next tile: its accumulator set is free once the tile `accumulatorSets` back is
  /// stored. Returns the set's first accumulator element.
  uint32_t beginTile();
  /// Starts the next load: its buffer set is free once the GEMM `loadBufferSets` loads back has
  /// finished. Returns the set (0 to loadBufferSets - 1).
  int64_t beginLoad();
  /// The load's DMA is issued: compute may read it.
  void loadIssued();
  /// The load's GEMM is issued: a later load may overwrite its buffers.
  void gemmIssued();
  /// Stores the tile: `storePlane(plane)` issues the STOREs of one byte plane (`planes` of them:
  /// 1 for int8, 4 for int32, between which the tile's `accumulators` elements from `first` are
  /// shifted right by 8 in place), then the token for the tile that reuses the set.
  void storeTile(int planes, uint32_t first, uint32_t accumulators, const std::function<void(int plane)>& storePlane);

 private:
  CommandStream& s_;
  int64_t tiles_, loads_, loadSets_, accumulatorSets_, accumulatorsPerSet_;
  int64_t tile_ = 0, load_ = 0;
};

/// Where a tile's epilogue operands go and how its accumulators are laid out.
struct EpilogueTile {
  uint32_t first = 0;         ///< the tile's first accumulator element
  uint32_t accumulators = 0;  ///< the tile's accumulator elements
  int64_t outputBlocks = 1;   ///< channel blocks of the tile
  int64_t firstBlock = 0;     ///< the tile's first channel block in the output
  /// A per-channel operand's ALU kernel: a loop of `perChannelExtent` iterations adding
  /// `perChannelStride` to the destination, and one micro-op per channel block, `blockStride`
  /// accumulator elements apart.
  uint32_t perChannelExtent = 1, perChannelStride = 0, blockStride = 0;
  std::vector<int64_t> operandBase;  ///< per epilogue step: its operand's first element after `first`, or -1
};

/// The group's epilogue on one tile: each operand loaded into the accumulator beside the tile
/// (a per-channel one as the tile's channel blocks, an image by `loadImage(buffer, type, base)`),
/// a fused shortcut shifted to the accumulator's scale, each ALU step over the tile.
void emitEpilogue(CommandStream& stream, const PackedConvolution& group, const std::vector<DeviceBuffer>& operands,
                  const EpilogueTile& tile,
                  const std::function<void(const DeviceBuffer& buffer, MemoryType type, uint32_t base)>& loadImage);

/// The accumulator elements a tile's operands take beside its `accumulators`, per epilogue
/// step (-1: an immediate), and their total with the tile's: a per-channel operand takes
/// `outputBlocks`, an image operand `accumulators`.
std::vector<int64_t> operandBases(const PackedConvolution& group, int64_t accumulators, int64_t outputBlocks, int64_t* used);

/// The checks every packed tiling shares, with the reason of the first that fails: 1 to 4 load
/// and accumulator sets; 1 or 4 stored bytes, an int32 result in one accumulator set (its byte
/// planes are shifted in place); per-channel operands only with BATCH 1; and the buffers: input
/// and weight elements of one load times the load sets, accumulators (tile and operands) times
/// the accumulator sets, the GEMM kernel's micro-ops, each within the configuration's depth.
std::optional<std::string> tileBufferProblem(int64_t loadBufferSets, int64_t accumulatorSets, const PackedConvolution& group,
                                             const HardwareConfig& config, int64_t inputElements, int64_t weightElements,
                                             int64_t accumulatorsUsed, int64_t microOps);

}  // namespace tessel::vta
