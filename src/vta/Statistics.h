/// What the simulator counts while it runs, by the public simulator's rules so figures compare
/// with published ones (seed 004): bytes moved per buffer, GEMM and ALU micro-op executions,
/// plus the simulated cycles of the cycle model. Counters accumulate over runs until cleared.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tessel::vta {

struct Statistics {
  /// x_size·y_size·element bytes per LOAD (padding not counted; NOPs with x_size 0 neither).
  uint64_t inputLoadBytes = 0;
  uint64_t weightLoadBytes = 0;
  /// Also counts ACC_8BIT loads at the int32 element size, as the public simulator does,
  /// although only a quarter of those bytes are read from DRAM.
  uint64_t accumulatorLoadBytes = 0;
  uint64_t microOpLoadBytes = 0;
  /// x_size·y_size·BATCH·BLOCK_OUT·OUT_WIDTH/8 per STORE.
  uint64_t outputStoreBytes = 0;
  /// iter_out·iter_in·(uop_end − uop_bgn) per GEMM that is not a reset; one count is one
  /// BATCH×BLOCK_IN by BLOCK_IN×BLOCK_OUT product.
  uint64_t gemmCounter = 0;
  /// iter_out·iter_in·(uop_end − uop_bgn) per ALU instruction of any opcode.
  uint64_t aluCounter = 0;
  /// Simulated accelerator cycles, summed over runs.
  uint64_t cycles = 0;

  /// Keys as the public simulator names them ("inp_load_nbytes", ...) and "cycles".
  nlohmann::json toJson() const;
  /// The seed's listing, one `\t<name padded to 16>: <value right-aligned in 16>` line each.
  std::string format() const;
  bool operator==(const Statistics&) const = default;
};

}  // namespace tessel::vta
