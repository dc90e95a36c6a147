#include "vta/TileProtocol.h"

#include <fmt/format.h>

namespace tessel::vta {

TileTokens::TileTokens(CommandStream& stream, int64_t tiles, int64_t loadsPerTile, int64_t loadBufferSets, int64_t accumulatorSets,
                       int64_t accumulatorsPerSet)
    : s_(stream),
      tiles_(tiles),
      loads_(tiles * loadsPerTile),
      loadSets_(loadBufferSets),
      accumulatorSets_(accumulatorSets),
      accumulatorsPerSet_(accumulatorsPerSet) {}

uint32_t TileTokens::beginTile() {
  if (tile_ >= accumulatorSets_) s_.dependencyPop(Stage::Store, Stage::Compute);
  return uint32_t((tile_ % accumulatorSets_) * accumulatorsPerSet_);
}

int64_t TileTokens::beginLoad() {
  // Tokens are counted, not named: the k-th pop takes the k-th push, which is the GEMM of the
  // load `sets` back.
  if (load_ >= loadSets_) s_.dependencyPop(Stage::Compute, Stage::Load);
  return load_ % loadSets_;
}

void TileTokens::loadIssued() {
  s_.dependencyPush(Stage::Load, Stage::Compute);
  s_.dependencyPop(Stage::Load, Stage::Compute);
}

void TileTokens::gemmIssued() {
  // A token for the load that will reuse this set; the last `sets` GEMMs have none.
  if (++load_ + loadSets_ <= loads_) s_.dependencyPush(Stage::Compute, Stage::Load);
}

void TileTokens::storeTile(int planes, uint32_t first, uint32_t accumulators, const std::function<void(int plane)>& storePlane) {
  for (int plane = 0; plane < planes; ++plane) {
    if (plane > 0) {
      // The next byte down, once the store has read this one.
      s_.dependencyPop(Stage::Store, Stage::Compute);
      MicroKernel inPlace;
      inPlace.loop(accumulators, 1, 0).push(first, first);
      s_.alu(inPlace, AluOpcode::ShiftRight, 8);
    }
    s_.dependencyPush(Stage::Compute, Stage::Store);
    s_.dependencyPop(Stage::Compute, Stage::Store);
    storePlane(plane);
    if (plane + 1 < planes) s_.dependencyPush(Stage::Store, Stage::Compute);
  }
  // A token for the tile that will reuse this set; the last `sets` tiles have none.
  if (++tile_ + accumulatorSets_ <= tiles_) s_.dependencyPush(Stage::Store, Stage::Compute);
}

void emitEpilogue(CommandStream& s, const PackedConvolution& group, const std::vector<DeviceBuffer>& operands,
                  const EpilogueTile& t,
                  const std::function<void(const DeviceBuffer& buffer, MemoryType type, uint32_t base)>& loadImage) {
  size_t operand = 0;
  for (size_t k = 0; k < group.epilogue.size(); ++k) {
    const AluStep& step = group.epilogue[k];
    MicroKernel kernel;
    if (step.immediate) {
      kernel.loop(t.accumulators, 1, 0).push(t.first, t.first);
      s.alu(kernel, step.opcode, *step.immediate);
      continue;
    }
    const DeviceBuffer& buffer = operands.at(operand++);
    auto type = step.operandInt8 ? MemoryType::Accumulator8Bit : MemoryType::Accumulator;
    uint32_t base = t.first + uint32_t(t.operandBase.at(k));
    if (step.perChannel) {
      s.loadBuffer2D(buffer, uint64_t(t.firstBlock), uint32_t(t.outputBlocks), 1, uint32_t(t.outputBlocks), Padding{}, type, base);
      kernel.loop(t.perChannelExtent, t.perChannelStride, 0);
      for (int64_t kb = 0; kb < t.outputBlocks; ++kb) kernel.push(t.first + uint32_t(kb) * t.blockStride, uint32_t(base + kb));
    } else {
      loadImage(buffer, type, base);
      kernel.loop(t.accumulators, 1, 1).push(t.first, base);
    }
    if (step.operandShiftLeft != 0) {
      // A fused shortcut: the int8 value loaded (ACC_8BIT), brought to the accumulator's scale.
      MicroKernel shift;
      shift.loop(step.perChannel ? uint32_t(t.outputBlocks) : t.accumulators, 1, 0).push(base, base);
      s.alu(shift, AluOpcode::ShiftRight, -step.operandShiftLeft);
    }
    s.alu(kernel, step.opcode);
  }
}

std::vector<int64_t> operandBases(const PackedConvolution& group, int64_t accumulators, int64_t outputBlocks, int64_t* used) {
  std::vector<int64_t> bases;
  int64_t next = accumulators;
  for (const AluStep& s : group.epilogue) {
    if (s.immediate) {
      bases.push_back(-1);
      continue;
    }
    bases.push_back(next);
    next += s.perChannel ? outputBlocks : accumulators;
  }
  *used = next;
  return bases;
}

std::optional<std::string> tileBufferProblem(int64_t loadBufferSets, int64_t accumulatorSets, const PackedConvolution& group,
                                             const HardwareConfig& config, int64_t inputElements, int64_t weightElements,
                                             int64_t accumulatorsUsed, int64_t microOps) {
  if (loadBufferSets < 1 || loadBufferSets > 4) return fmt::format("{} load buffer sets (1 to 4)", loadBufferSets);
  if (accumulatorSets < 1 || accumulatorSets > 4) return fmt::format("{} accumulator sets (1 to 4)", accumulatorSets);
  if (group.storedBytes != 1 && group.storedBytes != 4)
    return fmt::format("{} bytes per stored value (1 or 4)", group.storedBytes);
  if (group.storedBytes == 4 && accumulatorSets != 1)
    return std::string("an int32 result (stored as byte planes) needs one accumulator set");
  for (const AluStep& s : group.epilogue)
    if (s.perChannel && config.batch() != 1)
      return fmt::format("a per-channel operand needs BATCH 1 (one accumulator element per channel block), BATCH is {}",
                         config.batch());
  struct Use {
    const char* buffer;
    int64_t elements;
    uint32_t depth;
  };
  for (const Use& u : {Use{"input", loadBufferSets * inputElements, config.inputDepth()},
                       Use{"weight", loadBufferSets * weightElements, config.weightDepth()},
                       Use{"accumulator", accumulatorSets * accumulatorsUsed, config.accumulatorDepth()},
                       Use{"micro-op", microOps, config.microOpDepth()}})
    if (u.elements > int64_t(u.depth))
      return fmt::format("the tile needs {} {} buffer elements, the buffer holds {}", u.elements, u.buffer, u.depth);
  return std::nullopt;
}

}  // namespace tessel::vta
