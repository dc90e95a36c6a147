/// The VTA hardware configuration: the keys of a `vta_config.json` file (buffer sizes, data
/// widths, GEMM core shape) and every quantity derived from them (block sizes, element bytes,
/// buffer depths, index-field widths). The built-in default is the public repository's
/// default (`sim`, 0.0.2, a 1x16x16 int8 GEMM core, 32/32/256/128 KiB buffers).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tessel::vta {

struct HardwareConfig {
  // The keys of vta_config.json, under their own names (log2 of the value).
  std::string target = "sim";
  std::string hardwareVersion = "0.0.2";
  int logInputWidth = 3;
  int logWeightWidth = 3;
  int logAccumulatorWidth = 5;
  int logBatch = 0;
  int logBlock = 4;
  int logMicroOpBufferSize = 15;
  int logInputBufferSize = 15;
  int logWeightBufferSize = 18;
  int logAccumulatorBufferSize = 17;

  // ---- Derived quantities ----
  int inputWidth() const { return 1 << logInputWidth; }
  int weightWidth() const { return 1 << logWeightWidth; }
  int accumulatorWidth() const { return 1 << logAccumulatorWidth; }
  /// The output (store) data is as wide as the input data.
  int logOutputWidth() const { return logInputWidth; }
  int outputWidth() const { return 1 << logOutputWidth(); }
  int batch() const { return 1 << logBatch; }
  int blockIn() const { return 1 << logBlock; }
  int blockOut() const { return 1 << logBlock; }

  /// Lanes of one buffer element: an input element is BATCH x BLOCK_IN values, a weight element
  /// BLOCK_OUT x BLOCK_IN, an accumulator or output element BATCH x BLOCK_OUT.
  int inputLanes() const { return batch() * blockIn(); }
  int weightLanes() const { return blockOut() * blockIn(); }
  int accumulatorLanes() const { return batch() * blockOut(); }

  int instructionBytes() const { return 16; }
  int microOpBytes() const { return 4; }
  int inputElementBytes() const { return inputLanes() * inputWidth() / 8; }
  int weightElementBytes() const { return weightLanes() * weightWidth() / 8; }
  int accumulatorElementBytes() const { return accumulatorLanes() * accumulatorWidth() / 8; }
  int outputElementBytes() const { return accumulatorLanes() * outputWidth() / 8; }

  /// log2 of the number of elements each on-chip buffer holds; also the width of the index
  /// fields that address it in instructions and micro-ops.
  int logMicroOpDepth() const { return logMicroOpBufferSize - 2; }
  int logInputDepth() const { return logInputBufferSize - logBatch - logBlock - logInputWidth + 3; }
  int logWeightDepth() const { return logWeightBufferSize - 2 * logBlock - logWeightWidth + 3; }
  int logAccumulatorDepth() const {
    return logAccumulatorBufferSize - logBatch - logBlock - logAccumulatorWidth + 3;
  }
  /// The output buffer holds as many elements as the accumulator, each OUT_WIDTH bits a lane.
  int logOutputBufferSize() const {
    return logAccumulatorBufferSize + logOutputWidth() - logAccumulatorWidth;
  }
  uint32_t microOpDepth() const { return 1u << logMicroOpDepth(); }
  uint32_t inputDepth() const { return 1u << logInputDepth(); }
  uint32_t weightDepth() const { return 1u << logWeightDepth(); }
  uint32_t accumulatorDepth() const { return 1u << logAccumulatorDepth(); }
  uint32_t outputDepth() const { return accumulatorDepth(); }

  /// Micro-op source index width: it addresses the input buffer (GEMM) or the accumulator (ALU).
  int microOpSourceWidth() const {
    return logInputDepth() > logAccumulatorDepth() ? logInputDepth() : logAccumulatorDepth();
  }

  /// Whether the ALU has the MUL opcode (HW_VER 0.0.2 and later; see docs/vta.md).
  bool hasMultiply() const;

  /// "1x16_i8w8a32_15_15_18_17": the bitstream name the public runtime derives.
  std::string bitstreamName() const;
  /// "sim_1x16_i8w8a32_15_15_18_17".
  std::string modelName() const { return target + "_" + bitstreamName(); }

  /// Throws Error naming the first problem: a value out of range, a width this model does not
  /// implement, or index fields that do not fit the 128-bit instruction / 32-bit micro-op.
  void validate() const;

  /// Reads a vta_config.json object: every key is required, unknown keys are rejected (a typo
  /// must not silently fall back to a default); the result is validated.
  static HardwareConfig fromJson(const nlohmann::json& json);
  static HardwareConfig fromFile(const std::string& path);
  nlohmann::json toJson() const;
  /// A readable multi-line listing of the keys and the derived sizes.
  std::string describe() const;

  bool operator==(const HardwareConfig&) const = default;
};

}  // namespace tessel::vta
