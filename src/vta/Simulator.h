/// The VTA simulator: a device with DRAM, on-chip buffers and three modules (load, compute,
/// store) that execute a command stream concurrently and synchronize only through the four
/// dependency-token queues. Functional results are bit-exact with the public simulator; time
/// follows CycleModel.h. Two execution orders:
///  - Timed: at each step the module whose next instruction can start earliest runs it, so the
///    functional effects happen in simulated-time order.
///  - Random: a seeded random ready module runs next. A correct program (all data hazards
///    guarded by tokens) gives bit-identical results in every order; one that forgot a token
///    shows up as a difference.
/// A program that cannot finish stops with an Error naming the instruction: a pop that no push
/// can ever satisfy (deadlock), a buffer index or DRAM range out of bounds, a missing FINISH,
/// work left behind FINISH, or tokens left in a queue at the end.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "vta/CycleModel.h"
#include "vta/Datapath.h"
#include "vta/DeviceMemory.h"
#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"
#include "vta/Statistics.h"

namespace tessel::vta {

enum class ExecutionOrder { Timed, Random };

struct SimulatorOptions {
  TimingParameters timing;
  ExecutionOrder order = ExecutionOrder::Timed;
  /// Seed of the Random order.
  uint64_t seed = 0;
  /// "auto", or one of availableGemmKernels() by name (tests compare them).
  std::string gemmKernel = "auto";
  /// The most element operations (multiply-adds, ALU lanes, bytes moved) one run may take: a
  /// GEMM's loops can ask for 2^41 of them, which would simulate for days. A run that would go
  /// past the budget stops before the instruction that would, with an error naming it. About
  /// a minute of simulation by default (ResNet-18 takes a few times 10^9).
  uint64_t maxWork = uint64_t(1) << 38;
  /// false: run for time only. Every instruction is decoded, ordered, checked (buffer indices,
  /// DRAM ranges, tokens, the work budget), counted and timed as in a full run, but only LOADs of
  /// micro-ops move data (compute instructions index by them): no GEMM, ALU, data LOAD or STORE
  /// changes a value. The cycle model reads instructions, never values, so the cycles, the
  /// profile and the statistics are a full run's (VtaSimulator.TimeOnlyRunsTakeAFullRunsCycles);
  /// what tuning measurements and the ranking of records need, at a fraction of the time.
  bool computeValues = true;
};

/// The element operations one instruction takes in the simulator's datapath (GEMM: products;
/// ALU: lanes; LOAD/STORE: bytes), as the work budget counts them; saturates instead of
/// overflowing.
uint64_t instructionWork(const Instruction& instruction, const HardwareConfig& config);

/// Where one run's cycles went, module by module (the cycle model's busy time of each): what a
/// profile reports next to GEMM-core utilization. A module's cycles not listed are waits for
/// its tokens or for DRAM.
struct RunProfile {
  uint64_t cycles = 0;        ///< the run, start to FINISH
  uint64_t gemmCycles = 0;    ///< compute module: GEMMs that accumulate (GEMM-core busy)
  uint64_t resetCycles = 0;   ///< compute module: GEMMs that reset accumulators
  uint64_t aluCycles = 0;     ///< compute module: ALU instructions
  uint64_t computeLoadCycles = 0;  ///< compute module: loads into the accumulator and micro-op buffers
  uint64_t loadCycles = 0;    ///< load module: input and weight loads
  uint64_t storeCycles = 0;   ///< store module
  RunProfile& operator+=(const RunProfile& other);
};

class Simulator {
 public:
  explicit Simulator(const HardwareConfig& config = HardwareConfig{},
                     const SimulatorOptions& options = SimulatorOptions{});
  ~Simulator();

  const HardwareConfig& config() const { return config_; }
  const SimulatorOptions& options() const { return options_; }
  DeviceMemory& memory() { return memory_; }
  const InstructionCodec& codec() const { return codec_; }

  /// Runs `count` encoded instructions stored in DRAM at `instructionAddress` (the device's
  /// entry point, as the runtime's synchronize calls it) until FINISH; throws Error on failure.
  void run(uint64_t instructionAddress, uint32_t count);
  /// Runs decoded instructions directly (micro-ops and data must already be in DRAM).
  void run(std::span<const Instruction> instructions);

  /// Statistics accumulated since construction or the last clearStats().
  const Statistics& stats() const { return statistics_; }
  void clearStats() { statistics_ = Statistics{}; }
  /// Simulated cycles of the most recent run, and its time at the configured clock.
  uint64_t lastRunCycles() const { return lastRunCycles_; }
  double lastRunSeconds() const { return options_.timing.seconds(lastRunCycles_); }
  const RunProfile& lastRunProfile() const { return lastRunProfile_; }

  void setExecutionOrder(ExecutionOrder order, uint64_t seed = 0);
  const Datapath& datapath() const { return *datapath_; }

 private:
  /// Adds an instruction's busy cycles to the current run's profile.
  void account(const Instruction& instruction, int module, uint64_t busy);
  HardwareConfig config_;
  SimulatorOptions options_;
  InstructionCodec codec_;
  DeviceMemory memory_;
  Statistics statistics_;
  std::unique_ptr<Datapath> datapath_;
  CycleModel cycleModel_;
  std::mt19937_64 random_;
  uint64_t lastRunCycles_ = 0;
  RunProfile lastRunProfile_, profile_;  ///< the last finished run's; the current run's
};

}  // namespace tessel::vta
