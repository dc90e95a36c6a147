/// A self-contained VTA program: the configuration, the encoded instruction stream and the DRAM
/// image it runs on (micro-op kernels, inputs, weights, room for outputs), as a file that
/// `tessel vta run` executes on a fresh simulator. Tests and compilers write it with
/// CommandStream::finishProgram().
///
/// File format (JSON, one object):
///   {
///     "format": "tessel-vta-program", "version": 1,
///     "config": { vta_config.json keys },
///     "instructions": [ "<32 hex digits>", ... ],   // each the 128-bit word, most significant
///                                                    // digit first (bits 127..0)
///     "memory": [ {"address": A, "bytes": N, "hex": "<2 hex digits a byte>"}, ... ],
///                                                    // page-aligned DRAM allocations; "hex" may
///                                                    // stop early, the rest is zero
///     "outputs": [ {"name": "C", "address": A, "bytes": N}, ... ]   // optional labels
///   }
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"

namespace tessel::vta {

class Simulator;

struct Program {
  struct Segment {
    uint64_t address = 0;
    uint64_t bytes = 0;
    std::vector<uint8_t> data;  // up to `bytes`; missing bytes are zero
  };
  struct NamedRange {
    std::string name;
    uint64_t address = 0;
    uint64_t bytes = 0;
  };

  HardwareConfig config;
  std::vector<EncodedInstruction> instructions;
  std::vector<Segment> memory;
  std::vector<NamedRange> outputs;

  nlohmann::json toJson() const;
  /// Throws Error naming the first malformed part.
  static Program fromJson(const nlohmann::json& json);
  void save(const std::string& path) const;
  static Program load(const std::string& path);

  /// Places the memory image and the instructions in `simulator` (which must have the same
  /// configuration and free addresses) and runs them.
  void runOn(Simulator& simulator) const;
};

}  // namespace tessel::vta
