#include "vta/CommandStream.h"

#include <cstdlib>

#include "support/Error.h"

namespace tessel::vta {

namespace {
/// DRAM is given to micro-op kernels in arenas of this size (or one kernel's size if larger).
constexpr uint64_t kKernelArenaBytes = 64 * 1024;
constexpr uint32_t kMaxPadding = 15;  // the 4-bit pad fields

void checkAdjacent(Stage from, Stage to, const char* what) {
  TESSEL_CHECK(std::abs(int(from) - int(to)) == 1,
               "VTA {}: tokens travel only between adjacent modules, not {} -> {}", what,
               stageName(from), stageName(to));
}
}  // namespace

CommandStream::CommandStream(Simulator& device) : device_(device) {}

CommandStream::~CommandStream() {
  for (const DeviceBuffer& buffer : ownedBuffers_) {
    try {
      device_.memory().release(buffer.address);
    } catch (const Error&) {
      // Already released by the user: nothing to do.
    }
  }
}

DeviceBuffer CommandStream::allocate(uint64_t bytes) {
  DeviceBuffer buffer{device_.memory().allocate(bytes), bytes};
  ownedBuffers_.push_back(buffer);
  return buffer;
}

void CommandStream::release(const DeviceBuffer& buffer) {
  device_.memory().release(buffer.address);
  std::erase_if(ownedBuffers_, [&](const DeviceBuffer& owned) { return owned.address == buffer.address; });
}

void CommandStream::copyToDevice(const DeviceBuffer& buffer, const void* source, uint64_t bytes,
                                 uint64_t offset) {
  TESSEL_CHECK(offset + bytes <= buffer.bytes, "VTA copy: {} bytes at offset {} overrun a {}-byte buffer",
               bytes, offset, buffer.bytes);
  device_.memory().write(buffer.address + offset, source, bytes);
}

void CommandStream::copyFromDevice(const DeviceBuffer& buffer, void* destination, uint64_t bytes,
                                   uint64_t offset) {
  TESSEL_CHECK(offset + bytes <= buffer.bytes, "VTA copy: {} bytes at offset {} overrun a {}-byte buffer",
               bytes, offset, buffer.bytes);
  device_.memory().read(buffer.address + offset, destination, bytes);
}

uint32_t CommandStream::dramElementIndex(const DeviceBuffer& buffer, uint64_t elementOffset,
                                         uint64_t elementBytes, const char* what) const {
  TESSEL_CHECK(buffer.address % elementBytes == 0,
               "VTA {}: buffer address {:#x} is not aligned to the {}-byte element", what,
               buffer.address, elementBytes);
  const uint64_t index = buffer.address / elementBytes + elementOffset;
  TESSEL_CHECK(index <= UINT32_MAX, "VTA {}: DRAM element index {} exceeds 32 bits", what, index);
  return uint32_t(index);
}

void CommandStream::append(Instruction instruction) {
  PendingPops& pending = pendingPops_[int(instruction.stage())];
  instruction.dependencies.popPrevious |= pending.previous;
  instruction.dependencies.popNext |= pending.next;
  pending = PendingPops{};
  // Encoding now reports a value that does not fit its field where the compiler made it.
  device_.codec().encode(instruction);
  instructions_.push_back(instruction);
}

void CommandStream::appendNoOp(Stage stage) {
  Instruction noOp;
  noOp.opcode = stage == Stage::Store ? Opcode::Store : Opcode::Load;
  noOp.memoryType = stage == Stage::Load    ? MemoryType::Input
                    : stage == Stage::Store ? MemoryType::Output
                                            : MemoryType::MicroOp;
  append(noOp);
}

void CommandStream::loadBuffer2D(const DeviceBuffer& source, uint64_t sourceElementOffset,
                                 uint32_t xSize, uint32_t ySize, uint32_t xStride,
                                 const Padding& padding, MemoryType destination,
                                 uint32_t destinationIndex) {
  const HardwareConfig& config = device_.config();
  TESSEL_CHECK(destination != MemoryType::Output, "VTA load: the OUT buffer cannot be loaded");
  const uint64_t elementBytes = dramElementBytes(destination, config);
  TESSEL_CHECK(padding.xBefore <= kMaxPadding && padding.xAfter <= kMaxPadding &&
                   padding.yBefore <= kMaxPadding && padding.yAfter <= kMaxPadding,
               "VTA load: padding is at most {} elements a side (got x {}/{} y {}/{})", kMaxPadding,
               padding.xBefore, padding.xAfter, padding.yBefore, padding.yAfter);
  Instruction load;
  load.opcode = Opcode::Load;
  load.memoryType = destination;
  load.sramBase = destinationIndex;
  load.dramBase = dramElementIndex(source, sourceElementOffset, elementBytes, "load");
  load.xSize = xSize;
  load.ySize = ySize;
  load.xStride = xStride;
  load.xPadBefore = padding.xBefore;
  load.xPadAfter = padding.xAfter;
  load.yPadBefore = padding.yBefore;
  load.yPadAfter = padding.yAfter;
  append(load);
}

void CommandStream::storeBuffer2D(uint32_t sourceIndex, const DeviceBuffer& destination,
                                  uint64_t destinationElementOffset, uint32_t xSize,
                                  uint32_t ySize, uint32_t xStride) {
  Instruction store;
  store.opcode = Opcode::Store;
  store.memoryType = MemoryType::Output;
  store.sramBase = sourceIndex;
  store.dramBase = dramElementIndex(destination, destinationElementOffset,
                                    device_.config().outputElementBytes(), "store");
  store.xSize = xSize;
  store.ySize = ySize;
  store.xStride = xStride;
  append(store);
}

uint32_t CommandStream::placeKernel(const MicroKernel& kernel) {
  const InstructionCodec& codec = device_.codec();
  const uint32_t depth = device_.config().microOpDepth();
  TESSEL_CHECK(!kernel.microOps.empty(), "VTA micro-kernel: no micro-ops");
  TESSEL_CHECK(kernel.microOps.size() <= depth,
               "VTA micro-kernel: {} micro-ops do not fit the micro-op buffer ({} entries)",
               kernel.microOps.size(), depth);
  std::vector<uint32_t> encoded;
  encoded.reserve(kernel.microOps.size());
  for (const MicroOp& microOp : kernel.microOps) encoded.push_back(codec.encode(microOp));
  const uint64_t bytes = encoded.size() * sizeof(uint32_t);

  auto [entry, inserted] = kernels_.try_emplace(encoded);
  KernelPlacement& placement = entry->second;
  if (inserted) {
    if (kernelArenas_.empty() || arenaUsed_ + bytes > kernelArenas_.back().bytes) {
      kernelArenas_.push_back(allocate(std::max(bytes, kKernelArenaBytes)));
      arenaUsed_ = 0;
    }
    placement.dramAddress = kernelArenas_.back().address + arenaUsed_;
    device_.memory().write(placement.dramAddress, encoded.data(), bytes);
    arenaUsed_ += bytes;
  }
  if (placement.residentAt) return *placement.residentAt;

  const uint32_t size = uint32_t(encoded.size());
  if (microOpCursor_ + size > depth) microOpCursor_ = 0;  // reuse the buffer from the start
  for (auto& [other, otherPlacement] : kernels_) {
    if (!otherPlacement.residentAt) continue;
    const uint32_t begin = *otherPlacement.residentAt, end = begin + uint32_t(other.size());
    if (begin < microOpCursor_ + size && microOpCursor_ < end) otherPlacement.residentAt.reset();
  }
  Instruction load;
  load.opcode = Opcode::Load;
  load.memoryType = MemoryType::MicroOp;
  load.sramBase = microOpCursor_;
  load.dramBase = uint32_t(placement.dramAddress / sizeof(uint32_t));
  load.xSize = size;
  load.ySize = 1;
  load.xStride = size;
  append(load);
  placement.residentAt = microOpCursor_;
  microOpCursor_ += size;
  return *placement.residentAt;
}

Instruction CommandStream::computeInstruction(Opcode opcode, const MicroKernel& kernel) {
  TESSEL_CHECK(kernel.loops.size() <= 2, "VTA micro-kernel: {} loops, the hardware has two",
               kernel.loops.size());
  const uint32_t begin = placeKernel(kernel);
  MicroKernel::Loop outer, inner;
  if (kernel.loops.size() == 2) {
    outer = kernel.loops[0];
    inner = kernel.loops[1];
  } else if (kernel.loops.size() == 1) {
    inner = kernel.loops[0];
  }
  Instruction in;
  in.opcode = opcode;
  in.microOpBegin = begin;
  in.microOpEnd = begin + uint32_t(kernel.microOps.size());
  in.iterationsOuter = outer.extent;
  in.iterationsInner = inner.extent;
  in.destinationFactorOuter = outer.destinationFactor;
  in.destinationFactorInner = inner.destinationFactor;
  in.sourceFactorOuter = outer.sourceFactor;
  in.sourceFactorInner = inner.sourceFactor;
  in.weightFactorOuter = outer.weightFactor;
  in.weightFactorInner = inner.weightFactor;
  return in;
}

void CommandStream::gemm(const MicroKernel& kernel, bool resetAccumulator) {
  Instruction in = computeInstruction(Opcode::Gemm, kernel);
  in.resetAccumulator = resetAccumulator;
  append(in);
}

void CommandStream::alu(const MicroKernel& kernel, AluOpcode opcode, std::optional<int32_t> immediate) {
  TESSEL_CHECK(opcode != AluOpcode::Multiply || device_.config().hasMultiply(),
               "VTA alu: MUL does not exist in hardware version {}",
               device_.config().hardwareVersion);
  Instruction in = computeInstruction(Opcode::Alu, kernel);
  in.weightFactorOuter = in.weightFactorInner = 0;  // the ALU has no weight operand
  in.aluOpcode = opcode;
  in.useImmediate = immediate.has_value();
  in.immediate = immediate.value_or(0);
  append(in);
}

void CommandStream::dependencyPush(Stage from, Stage to) {
  checkAdjacent(from, to, "dependency push");
  const bool toNext = int(to) > int(from);
  const PendingPops& pending = pendingPops_[int(from)];
  bool usable = !instructions_.empty() && instructions_.back().stage() == from &&
                !pending.previous && !pending.next;
  if (usable) {
    const DependencyFlags& flags = instructions_.back().dependencies;
    usable = toNext ? !flags.pushNext : !flags.pushPrevious;
  }
  if (!usable) appendNoOp(from);
  DependencyFlags& flags = instructions_.back().dependencies;
  (toNext ? flags.pushNext : flags.pushPrevious) = true;
}

void CommandStream::dependencyPop(Stage from, Stage to) {
  checkAdjacent(from, to, "dependency pop");
  PendingPops& pending = pendingPops_[int(to)];
  bool& flag = int(from) < int(to) ? pending.previous : pending.next;
  if (flag) appendNoOp(to);  // the earlier pop gets an instruction of its own
  flag = true;
}

void CommandStream::endStream() {
  // The compute module, which runs FINISH, waits for the last load and the last store.
  dependencyPush(Stage::Store, Stage::Compute);
  dependencyPush(Stage::Load, Stage::Compute);
  dependencyPop(Stage::Store, Stage::Compute);
  dependencyPop(Stage::Load, Stage::Compute);
  appendNoOp(Stage::Compute);
  Instruction finish;
  finish.opcode = Opcode::Finish;
  append(finish);
}

void CommandStream::synchronize() {
  endStream();
  std::vector<EncodedInstruction> encoded;
  encoded.reserve(instructions_.size());
  for (const Instruction& in : instructions_) encoded.push_back(device_.codec().encode(in));
  instructions_.clear();
  const uint64_t bytes = encoded.size() * sizeof(EncodedInstruction);
  const uint64_t address = device_.memory().allocate(bytes);
  device_.memory().write(address, encoded.data(), bytes);
  try {
    device_.run(address, uint32_t(encoded.size()));
  } catch (...) {
    device_.memory().release(address);
    throw;
  }
  device_.memory().release(address);
}

Program CommandStream::finishProgram() {
  endStream();
  Program program;
  program.config = device_.config();
  for (const Instruction& in : instructions_) program.instructions.push_back(device_.codec().encode(in));
  instructions_.clear();
  for (const DeviceMemory::AllocationInfo& allocation : device_.memory().allocations()) {
    Program::Segment segment{allocation.address, allocation.bytes, {}};
    segment.data.resize(allocation.bytes);
    device_.memory().read(allocation.address, segment.data.data(), allocation.bytes);
    program.memory.push_back(std::move(segment));
  }
  // The program did not run: nothing it loaded is resident for the next one.
  for (auto& [encoded, placement] : kernels_) placement.residentAt.reset();
  microOpCursor_ = 0;
  return program;
}

}  // namespace tessel::vta
