/// The host-side VTA runtime a compiler targets: it allocates device buffers, and records a
/// command stream — 2D strided loads with zero padding into the input, weight, accumulator and
/// micro-op buffers, stores, GEMM and ALU operations over micro-op kernels, and dependency-token
/// push/pop between the load, compute and store modules — then synchronizes, which ends the
/// stream with FINISH, writes it to device memory and runs it.
///
/// Dependency tokens follow the public runtime's protocol: push(from, to) sets the push flag of
/// the last instruction when it belongs to `from` (else adds a no-op of `from` to carry it);
/// pop(from, to) is folded into the next instruction of `to`. Micro-op kernels are placed in DRAM
/// once per distinct content and loaded into the micro-op buffer only when not resident there
/// (a LOAD UOP on the compute module); when the buffer is full it is reused from the start.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vta/InstructionSet.h"
#include "vta/MicroKernel.h"
#include "vta/Program.h"
#include "vta/Simulator.h"

namespace tessel::vta {

/// A device allocation: its physical address and size.
struct DeviceBuffer {
  uint64_t address = 0;
  uint64_t bytes = 0;
};

/// Zero padding added around a 2D load on the SRAM side, in elements (at most 15 each).
struct Padding {
  uint32_t xBefore = 0;
  uint32_t yBefore = 0;
  uint32_t xAfter = 0;
  uint32_t yAfter = 0;
};

class CommandStream {
 public:
  explicit CommandStream(Simulator& device);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // ---- Device memory ----
  DeviceBuffer allocate(uint64_t bytes);
  void release(const DeviceBuffer& buffer);
  void copyToDevice(const DeviceBuffer& buffer, const void* source, uint64_t bytes,
                    uint64_t offset = 0);
  void copyFromDevice(const DeviceBuffer& buffer, void* destination, uint64_t bytes,
                      uint64_t offset = 0);

  // ---- Commands ----
  /// Loads y_size rows of x_size elements, rows x_stride elements apart, starting at element
  /// `sourceElementOffset` of `source`, into `destination` from element `destinationIndex`,
  /// surrounded by `padding` zeros. Elements are of the destination buffer's kind (for
  /// ACC_8BIT: BATCH·BLOCK_OUT int8 values).
  void loadBuffer2D(const DeviceBuffer& source, uint64_t sourceElementOffset, uint32_t xSize,
                    uint32_t ySize, uint32_t xStride, const Padding& padding,
                    MemoryType destination, uint32_t destinationIndex);
  /// Stores y_size rows of x_size accumulator elements (from `sourceIndex`, contiguous),
  /// truncated to int8, into `destination` rows x_stride output elements apart.
  void storeBuffer2D(uint32_t sourceIndex, const DeviceBuffer& destination,
                     uint64_t destinationElementOffset, uint32_t xSize, uint32_t ySize,
                     uint32_t xStride);
  /// accumulator[dst] += input[src] · weight[wgt]ᵀ for every micro-op execution, or, with
  /// `resetAccumulator`, accumulator[dst] = 0.
  void gemm(const MicroKernel& kernel, bool resetAccumulator = false);
  /// accumulator[dst] = op(accumulator[dst], immediate or accumulator[src]) lane-wise.
  void alu(const MicroKernel& kernel, AluOpcode opcode, std::optional<int32_t> immediate = {});
  /// The instruction last added for `from` signals `to` when it completes.
  void dependencyPush(Stage from, Stage to);
  /// The next instruction of `to` waits for a signal from `from`.
  void dependencyPop(Stage from, Stage to);

  /// Ends the stream (tokens so the compute module waits for load and store, then FINISH),
  /// runs it on the device and starts a new stream.
  void synchronize();
  /// Ends the stream the same way but, instead of running it, returns it with a snapshot of
  /// device memory as a self-contained program; starts a new stream. Use on a stream whose
  /// device has run nothing else (the program must not rely on earlier micro-op residency).
  Program finishProgram();

  /// The instructions recorded since the last synchronize.
  const std::vector<Instruction>& instructions() const { return instructions_; }
  Simulator& device() { return device_; }

 private:
  struct PendingPops {
    bool previous = false;
    bool next = false;
  };
  struct KernelPlacement {
    uint64_t dramAddress = 0;
    std::optional<uint32_t> residentAt;  // micro-op buffer index while resident
  };

  void append(Instruction instruction);
  /// Emits a no-op of `stage` that carries its pending pops.
  void appendNoOp(Stage stage);
  void endStream();
  /// Makes `kernel`'s micro-ops resident and returns their first buffer index.
  uint32_t placeKernel(const MicroKernel& kernel);
  Instruction computeInstruction(Opcode opcode, const MicroKernel& kernel);
  uint32_t dramElementIndex(const DeviceBuffer& buffer, uint64_t elementOffset,
                            uint64_t elementBytes, const char* what) const;

  Simulator& device_;
  std::vector<Instruction> instructions_;
  std::array<PendingPops, 4> pendingPops_{};  // indexed by Stage
  std::map<std::vector<uint32_t>, KernelPlacement> kernels_;  // by encoded micro-ops
  std::vector<DeviceBuffer> kernelArenas_;
  uint64_t arenaUsed_ = 0;
  uint32_t microOpCursor_ = 0;
  std::vector<DeviceBuffer> ownedBuffers_;
};

}  // namespace tessel::vta
